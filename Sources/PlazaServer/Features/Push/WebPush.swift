import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import PlazaAPI

/// Message encryption for Web Push (RFC 8291, `aes128gcm` content coding of RFC 8188): a fresh
/// P-256 key pair and salt per message, keys derived with HKDF-SHA-256 from the ECDH secret
/// and the subscription's auth secret, one AES-128-GCM record.
enum WebPushCrypto {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let recordSize: UInt32 = 4096
    /// What fits one record: the record size less the header (86 bytes), the padding
    /// delimiter and the tag. Push services take bodies up to 4,096 bytes.
    static let maxPlaintext = 4096 - 86 - 1 - 16

    /// The encrypted body: salt (16) ‖ record size (4) ‖ key id length (1) ‖ the server's
    /// public key (65) ‖ ciphertext ‖ tag.
    static func encrypt(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8],
        serverKey: P256.KeyAgreement.PrivateKey = .init(), salt: [UInt8] = ByteText.randomBytes(16)
    ) throws -> [UInt8] {
        guard plaintext.count <= maxPlaintext else { throw Failure(description: "payload too large") }
        guard auth.count == 16, salt.count == 16 else { throw Failure(description: "bad auth secret or salt") }
        let browserKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: browserKey)
        let serverPublic = Array(serverKey.publicKey.x963Representation)
        let keyInfo = Array("WebPush: info".utf8) + [0] + p256dh + serverPublic
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        let sealed = try AES.GCM.seal(
            plaintext + [2], using: cek, nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        var body = salt
        body += withUnsafeBytes(of: recordSize.bigEndian) { Array($0) }
        body.append(UInt8(serverPublic.count))
        body += serverPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }

    /// The legacy `aesgcm` content coding (draft-ietf-webpush-encryption-04), which Mastodon
    /// apps such as Ice Cubes still decrypt: the salt and the server's public key travel in the
    /// `Encryption` and `Crypto-Key` headers, the body is the record (2 bytes of padding length,
    /// the plaintext) sealed with AES-128-GCM.
    static func encryptLegacy(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8],
        serverKey: P256.KeyAgreement.PrivateKey = .init(), salt: [UInt8] = ByteText.randomBytes(16)
    ) throws -> (body: [UInt8], salt: [UInt8], serverPublic: [UInt8]) {
        guard plaintext.count <= maxPlaintext else { throw Failure(description: "payload too large") }
        guard auth.count == 16, salt.count == 16 else { throw Failure(description: "bad auth secret or salt") }
        let browserKey = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: browserKey)
        let serverPublic = Array(serverKey.publicKey.x963Representation)
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: Array("Content-Encoding: auth".utf8) + [0],
            outputByteCount: 32)
        func length(_ key: [UInt8]) -> [UInt8] { [UInt8(key.count >> 8), UInt8(key.count & 0xFF)] }
        let context = Array("P-256".utf8) + [0] + length(p256dh) + p256dh + length(serverPublic) + serverPublic
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: aesgcm".utf8) + [0] + context, outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0] + context, outputByteCount: 12)
        let sealed = try AES.GCM.seal(
            [0, 0] + plaintext, using: cek, nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        return (Array(sealed.ciphertext) + Array(sealed.tag), salt, serverPublic)
    }
}

/// The server's VAPID identity (RFC 8292): a P-256 key pair made on first start and kept in
/// the database (every app server signs with the same), and the JWTs that prove it to a push
/// service, one per push service origin, reused for 12 of their 24 hours.
package final class VAPID: Sendable {
    let key: P256.Signing.PrivateKey
    /// `mailto:` or `https:` contact for the push services' operators.
    let subject: String
    private let tokens = NIOLockedValueBox([String: (token: String, expires: Date)]())

    init(key: P256.Signing.PrivateKey, subject: String) {
        self.key = key
        self.subject = subject
    }

    /// The server's identity, made from the 32-byte server key `vapid` the first time it is asked for.
    package final class Source: Sendable {
        let keys: ServerKeyStore
        let subject: String
        private let loaded = NIOLockedValueBox<VAPID?>(nil)

        init(keys: ServerKeyStore, subject: String) {
            self.keys = keys
            self.subject = subject
        }

        package func vapid() async throws -> VAPID {
            if let vapid = loaded.withLockedValue({ $0 }) { return vapid }
            let vapid = VAPID(
                key: try P256.Signing.PrivateKey(rawRepresentation: try await keys.key("vapid")), subject: subject)
            loaded.withLockedValue { $0 = vapid }
            return vapid
        }
    }

    /// The uncompressed public key, base64url: the browser's `applicationServerKey`.
    package var publicKey: String { ByteText.base64url(key.publicKey.x963Representation) }

    /// The `Authorization` header for a push to `endpoint`'s origin (RFC 8292's `vapid` scheme).
    func authorization(for endpoint: URL, now: Date = Date()) async throws -> String {
        "vapid t=\(try await token(for: endpoint, now: now)), k=\(publicKey)"
    }

    /// The JWT for a push to `endpoint`'s origin.
    func token(for endpoint: URL, now: Date = Date()) async throws -> String {
        guard let scheme = endpoint.scheme, let host = endpoint.host else {
            throw WebPushCrypto.Failure(description: "endpoint has no origin")
        }
        let origin = "\(scheme)://\(host)" + (endpoint.port.map { ":\($0)" } ?? "")
        if let cached = tokens.withLockedValue({ $0[origin] }), cached.expires.timeIntervalSince(now) > 12 * 3600 {
            return cached.token
        }
        let expires = now.addingTimeInterval(24 * 3600 - 60)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(backing: key))
        let token = try await keys.sign(
            Claims(
                aud: AudienceClaim(value: origin), exp: ExpirationClaim(value: expires),
                sub: SubjectClaim(value: subject)))
        tokens.withLockedValue { tokens in
            if tokens.count > 1000 { tokens.removeAll() }
            tokens[origin] = (token, expires)
        }
        return token
    }

    struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}

/// Sends pushes to browsers' push services, through `SafeFetcher`: the endpoint is a URL a
/// person gave, so its address is checked (and the connection pinned to it) like a link
/// preview's, by the push allow-list.
struct WebPushSender: Sendable {
    let vapid: VAPID.Source
    let fetcher: SafeFetcher

    /// Sends Plaza's push (`PushMessage.webPushPayload`), or `payload` instead (a Mastodon
    /// app's), encrypted with `aes128gcm`, or with the legacy `aesgcm` when `legacy`.
    func send(_ message: PushMessage, to job: PushOutbox.Job, payload: [UInt8]? = nil, legacy: Bool = false) async
        -> PushOutbox.Outcome
    {
        guard let endpoint = URL(string: job.address),
            let p256dh = job.p256dh.flatMap({ ByteText.bytes(base64url: $0) }),
            let auth = job.auth.flatMap({ ByteText.bytes(base64url: $0) })
        else { return .gone("the subscription is not usable") }
        do {
            let plaintext = payload ?? message.webPushPayload
            let urgent: Set<NotificationKind> = [.mention, .comment, .reply]
            var headers = [
                ("Content-Type", "application/octet-stream"), ("TTL", "86400"),
                ("Urgency", urgent.contains(message.kind) ? "high" : "normal"), ("Topic", "n\(message.notificationID)"),
            ]
            let body: [UInt8]
            let keys = try await vapid.vapid()
            if legacy {
                let sealed = try WebPushCrypto.encryptLegacy(plaintext, p256dh: p256dh, auth: auth)
                body = sealed.body
                headers += [
                    ("Authorization", "WebPush \(try await keys.token(for: endpoint))"), ("Content-Encoding", "aesgcm"),
                    ("Encryption", "salt=\(ByteText.base64url(sealed.salt))"),
                    ("Crypto-Key", "dh=\(ByteText.base64url(sealed.serverPublic));p256ecdsa=\(keys.publicKey)"),
                ]
            } else {
                body = try WebPushCrypto.encrypt(plaintext, p256dh: p256dh, auth: auth)
                headers += [
                    ("Authorization", try await keys.authorization(for: endpoint)), ("Content-Encoding", "aes128gcm"),
                ]
            }
            let response = try await fetcher.post(job.address, headers: headers, body: body, maxBytes: 4096)
            return Self.outcome(status: response.status, retryAfter: APNsSender.retryAfterMillis(response.retryAfter))
        } catch let failure as SafeFetcher.Failure {
            switch failure {
            case .status(let status): return Self.outcome(status: status, retryAfter: nil)
            case .refused(let reason): return .gone("endpoint refused: \(reason)")
            case .badURL: return .gone("\(failure)")
            case .timedOut, .network, .tooManyRedirects: return .retry("\(failure)", afterMillis: nil)
            }
        } catch let failure as WebPushCrypto.Failure {
            return .failed("\(failure)")
        } catch {
            // The server's key could not be read (a database hiccup), or the like: try again.
            return .retry("\(error)", afterMillis: nil)
        }
    }

    /// What the push service's answer means (RFC 8030 §5, and what the big services send).
    static func outcome(status: Int, retryAfter: Int64?) -> PushOutbox.Outcome {
        switch status {
        case 200..<300: .sent
        case 404, 410: .gone("HTTP \(status): the subscription has expired or was removed")
        // The subscription was made with another server key (FCM's answer for a VAPID mismatch).
        case 403: .gone("HTTP 403: the subscription belongs to another server key")
        case 429, 500..<600: .retry("HTTP \(status)", afterMillis: retryAfter)
        case 413: .failed("HTTP 413: the message is too large")
        default: .failed("HTTP \(status)")
        }
    }
}
