import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import NIOConcurrencyHelpers
import PlazaAPI
import Testing

@testable import PlazaServer

/// A push as a loopback push service received it.
struct ReceivedPush: Sendable {
    var path: String
    var headers: HTTPFields
    var body: [UInt8]

    func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { headers[$0] } }
}

/// Loopback stand-ins for a browser's Web Push service and for APNs: they record every push
/// and answer as the real ones do. Web Push paths: `/wp/gone…` answers 410, `/wp/flaky…` 503
/// the first time, anything else 201. APNs tokens starting `dead` answer 410 Unregistered.
final class PushServices: Sendable {
    private let received = NIOLockedValueBox([ReceivedPush]())
    private let seen = NIOLockedValueBox(Set<String>())

    var all: [ReceivedPush] { received.withLockedValue { $0 } }

    var router: Router<BasicRequestContext> {
        let router = Router()
        router.post("wp/{name}") { request, context -> Response in
            let body = try await request.body.collect(upTo: 65_536)
            let path = request.uri.path
            self.received.withLockedValue {
                $0.append(ReceivedPush(path: path, headers: request.headers, body: Array(buffer: body)))
            }
            if path.hasPrefix("/wp/gone") { return Response(status: .gone) }
            if path.hasPrefix("/wp/flaky"), self.seen.withLockedValue({ $0.insert(path).inserted }) {
                return Response(status: .serviceUnavailable)
            }
            return Response(status: .created)
        }
        router.post("3/device/{token}") { request, context -> Response in
            let body = try await request.body.collect(upTo: 65_536)
            let path = request.uri.path
            self.received.withLockedValue {
                $0.append(ReceivedPush(path: path, headers: request.headers, body: Array(buffer: body)))
            }
            if path.hasPrefix("/3/device/dead") {
                return Response(
                    status: .gone, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"reason":"Unregistered","timestamp":1}"#)))
            }
            return Response(status: .ok)
        }
        return router
    }

    /// Waits until `count` pushes to paths starting with `prefix` arrived; throws after a minute of looks.
    func pushes(to prefix: String, count: Int = 1) async throws -> [ReceivedPush] {
        for _ in 0..<1_200 {
            let matching = all.filter { $0.path.hasPrefix(prefix) }
            if matching.count >= count { return matching }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PushWaitTimedOut(prefix: prefix, count: count, got: all.map(\.path))
    }

    struct PushWaitTimedOut: Error, CustomStringConvertible {
        var prefix: String
        var count: Int
        var got: [String]
        var description: String { "waited for \(count) pushes to \(prefix), got \(got)" }
    }
}

/// A browser's side of a Web Push subscription: its key pair and auth secret, and the
/// decryption of what arrives (RFC 8291 read the other way).
struct TestBrowser: Sendable {
    let key = P256.KeyAgreement.PrivateKey()
    let auth = ByteText.randomBytes(16)

    func subscription(endpoint: String) -> RegisterPushDeviceRequest {
        .webPush(
            endpoint: endpoint, p256dh: ByteText.base64url(key.publicKey.x963Representation),
            auth: ByteText.base64url(auth))
    }

    struct Failure: Error {}

    func decrypt(_ body: [UInt8]) throws -> [UInt8] {
        guard body.count > 21 else { throw Failure() }
        let salt = Array(body[0..<16])
        let idLength = Int(body[20])
        guard body.count > 21 + idLength + 16 else { throw Failure() }
        let serverPublic = Array(body[21..<(21 + idLength)])
        let ciphertext = Array(body[(21 + idLength)...])
        let shared = try key.sharedSecretFromKeyAgreement(
            with: try P256.KeyAgreement.PublicKey(x963Representation: serverPublic))
        let info = Array("WebPush: info".utf8) + [0] + Array(key.publicKey.x963Representation) + serverPublic
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        let box = try AES.GCM.SealedBox(
            nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }),
            ciphertext: ciphertext.dropLast(16), tag: ciphertext.suffix(16))
        var plain = Array(try AES.GCM.open(box, using: cek))
        while plain.last == 0 { plain.removeLast() }
        guard plain.last == 2 else { throw Failure() }
        return plain.dropLast()
    }

    struct Payload: Decodable, Equatable {
        var title: String
        var body: String
        var url: String
        var tag: String
        var notification: String
        var kind: String
        var badge: Int
    }

    func payload(_ push: ReceivedPush) throws -> Payload {
        try JSONDecoder().decode(Payload.self, from: Data(try decrypt(push.body)))
    }
}

/// The claims of a VAPID JWT, checked against the server's public key.
struct VAPIDClaims: JWTPayload {
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim
    func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
}

/// The claims of an APNs provider token.
struct APNsClaims: JWTPayload {
    var iss: IssuerClaim
    var iat: IssuedAtClaim
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
