import AsyncHTTPClient
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import PlazaAPI

/// How Plaza reaches Apple's push service: token-based authentication with the team's key.
public struct APNsSettings: Sendable {
    /// The .p8 key's PEM text (`PLAZA_APNS_KEY_FILE`).
    public var keyPEM: String
    public var keyID: String
    public var teamID: String
    /// The app's bundle id, the default `apns-topic`.
    public var topic: String
    /// Where production and sandbox devices are reached; both overridable (tests, proxies).
    public var productionURL = "https://api.push.apple.com"
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// A PEM file of certificates to trust instead of the system's (a test's fake APNs).
    public var caFile: String?

    public init(keyPEM: String, keyID: String, teamID: String, topic: String) {
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
    }
}

/// Sends pushes to Apple's service over HTTP/2 (one long-lived client, as Apple asks), signed
/// with an ES256 provider token made from the team's key, renewed after 50 minutes (Apple
/// refuses tokens older than an hour and renewals more often than every 20 minutes).
final class APNsSender: Sendable {
    let settings: APNsSettings
    private let keys: JWTKeyCollection
    private let client: HTTPClient
    private let token = NIOLockedValueBox<(value: String, issued: Date)?>(nil)
    static let tokenLifetime: TimeInterval = 50 * 60

    init(settings: APNsSettings) async throws {
        self.settings = settings
        keys = await JWTKeyCollection().add(
            ecdsa: try ES256PrivateKey(pem: settings.keyPEM), kid: JWKIdentifier(string: settings.keyID))
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(20)))
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        try? await client.shutdown()
    }

    /// The provider token, made again when older than `tokenLifetime` or when `renew`.
    func providerToken(now: Date = Date(), renew: Bool = false) async throws -> String {
        if !renew, let current = token.withLockedValue({ $0 }),
            now.timeIntervalSince(current.issued) < Self.tokenLifetime
        {
            return current.value
        }
        let value = try await keys.sign(
            ProviderClaims(iss: IssuerClaim(value: settings.teamID), iat: IssuedAtClaim(value: now)),
            kid: JWKIdentifier(string: settings.keyID))
        token.withLockedValue { $0 = (value, now) }
        return value
    }

    struct ProviderClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func send(_ message: PushMessage, to job: PushOutbox.Job) async -> PushOutbox.Outcome {
        let base = job.environment == "sandbox" ? settings.sandboxURL : settings.productionURL
        do {
            var renewed = false
            while true {
                var request = HTTPClientRequest(url: "\(base)/3/device/\(job.address)")
                request.method = .POST
                request.headers.add(name: "authorization", value: "bearer \(try await providerToken(renew: renewed))")
                request.headers.add(name: "apns-topic", value: job.bundleID ?? settings.topic)
                request.headers.add(name: "apns-push-type", value: "alert")
                request.headers.add(name: "apns-priority", value: "10")
                request.headers.add(name: "apns-expiration", value: String(Int(Date().timeIntervalSince1970) + 86_400))
                request.headers.add(name: "apns-collapse-id", value: "n\(message.notificationID)")
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: message.apnsPayload))
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 16_384)
                let reason = (try? JSONDecoder().decode(Reason.self, from: Data(buffer: body)))?.reason ?? ""
                let outcome = Self.outcome(
                    status: Int(response.status.code), reason: reason,
                    retryAfter: response.headers.first(name: "retry-after").flatMap { Int64($0) }.map { $0 * 1000 })
                // An expired or refused provider token: make a new one once and try again.
                if case .retry = outcome, response.status.code == 403, !renewed {
                    renewed = true
                    continue
                }
                return outcome
            }
        } catch {
            return .retry("\(error)", afterMillis: nil)
        }
    }

    private struct Reason: Decodable { var reason: String }

    /// What Apple's answer means (its "Handling notification responses from APNs").
    static func outcome(status: Int, reason: String, retryAfter: Int64?) -> PushOutbox.Outcome {
        let said = reason.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(reason)"
        switch (status, reason) {
        case (200, _): return .sent
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .gone(said)
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"): return .retry(said, afterMillis: nil)
        case (429, _), (500..<600, _): return .retry(said, afterMillis: retryAfter)
        default: return .failed(said)
        }
    }
}
