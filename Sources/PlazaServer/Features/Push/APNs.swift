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
    private let tokens: ProviderTokens
    /// Sends one request and reads the answer's head: the HTTP client's, or a test's.
    typealias Transport = @Sendable (HTTPClientRequest) async throws -> HTTPClientResponse
    private let transport: Transport
    private let client: HTTPClient?
    static let tokenLifetime: TimeInterval = 50 * 60

    init(settings: APNsSettings) async throws {
        let client = try Self.client(settings)
        self.client = client
        self.settings = settings
        tokens = try await Self.tokens(settings)
        transport = { try await client.execute($0, timeout: .seconds(30)) }
    }

    /// A sender whose requests go to `transport` (tests of what is sent again).
    init(settings: APNsSettings, transport: @escaping Transport) async throws {
        client = nil
        self.settings = settings
        tokens = try await Self.tokens(settings)
        self.transport = transport
    }

    private static func tokens(_ settings: APNsSettings) async throws -> ProviderTokens {
        let keys = await JWTKeyCollection().add(
            ecdsa: try ES256PrivateKey(pem: settings.keyPEM), kid: JWKIdentifier(string: settings.keyID))
        return ProviderTokens(keys: keys, keyID: settings.keyID, teamID: settings.teamID)
    }

    private static func client(_ settings: APNsSettings) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = settings.caFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(20)))
        configuration.httpVersion = .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        try? await client?.shutdown()
    }

    /// The provider token every send uses: one at a time is made, when the current one is
    /// `tokenLifetime` old or Apple refused it (`refused`: the token it refused; a token made
    /// since by another send is used as it is, so concurrent refusals make one new token).
    actor ProviderTokens {
        let keys: JWTKeyCollection
        let keyID: String
        let teamID: String
        private var current: (value: String, issued: Date)?
        private var making: Task<(value: String, issued: Date), any Error>?

        init(keys: JWTKeyCollection, keyID: String, teamID: String) {
            self.keys = keys
            self.keyID = keyID
            self.teamID = teamID
        }

        func token(now: Date = Date(), refused: String? = nil) async throws -> String {
            if let current, current.value != refused, now.timeIntervalSince(current.issued) < APNsSender.tokenLifetime {
                return current.value
            }
            if let making { return try await making.value.value }
            let (keys, keyID, teamID) = (self.keys, self.keyID, self.teamID)
            let task = Task {
                let value = try await keys.sign(
                    ProviderClaims(iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: now)),
                    kid: JWKIdentifier(string: keyID))
                return (value: value, issued: now)
            }
            making = task
            defer { making = nil }
            let made = try await task.value
            current = made
            return made.value
        }
    }

    func providerToken(now: Date = Date(), refused: String? = nil) async throws -> String {
        try await tokens.token(now: now, refused: refused)
    }

    struct ProviderClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    func send(_ message: PushMessage, to job: PushOutbox.Job) async -> PushOutbox.Outcome {
        let base = job.environment == "sandbox" ? settings.sandboxURL : settings.productionURL
        do {
            var refused: String?
            var staleRetries = 0
            while true {
                let token = try await providerToken(refused: refused)
                var request = HTTPClientRequest(url: "\(base)/3/device/\(job.address)")
                request.method = .POST
                request.headers.add(name: "authorization", value: "bearer \(token)")
                request.headers.add(name: "apns-topic", value: job.bundleID ?? settings.topic)
                request.headers.add(name: "apns-push-type", value: "alert")
                request.headers.add(name: "apns-priority", value: "10")
                request.headers.add(name: "apns-expiration", value: String(Int(Date().timeIntervalSince1970) + 86_400))
                request.headers.add(name: "apns-collapse-id", value: "n\(message.notificationID)")
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: message.apnsPayload))
                let response: HTTPClientResponse
                do {
                    response = try await transport(request)
                } catch  where Self.isStaleConnection(error) && staleRetries < Self.staleRetries {
                    // Apple (or a proxy) closed the idle connection as it was taken. The pool may
                    // hand out the closing connection once more before it sees the close (found
                    // when a retry met a server's 5 s keep-alive end): a moment, then again.
                    staleRetries += 1
                    try await Task.sleep(for: .milliseconds(100 * staleRetries))
                    continue
                }
                let body = try await response.body.collect(upTo: 16_384)
                let reason = (try? JSONDecoder().decode(Reason.self, from: Data(buffer: body)))?.reason ?? ""
                let outcome = Self.outcome(
                    status: Int(response.status.code), reason: reason,
                    retryAfter: Self.retryAfterMillis(response.headers.first(name: "retry-after")))
                // An expired or refused provider token: a new one (once) and again.
                if case .retry = outcome, response.status.code == 403, refused == nil {
                    refused = token
                    continue
                }
                return outcome
            }
        } catch {
            return .retry("\(error)", afterMillis: nil)
        }
    }

    private struct Reason: Decodable { var reason: String }

    /// Sends on a connection found closed before the request went out, at most.
    static let staleRetries = 3

    /// A request that failed because its connection had closed before it went out (an idle
    /// HTTP/2 connection the server ended): safe to send again at once. A request handed to an
    /// HTTP/2 connection that is closing is failed as `cancelled` without being written
    /// (AsyncHTTPClient's `HTTP2Connection`, "requests might reach this point, even though the
    /// connection is already closing"); the same error for a cancelled task is not a stale
    /// connection, and is not sent again.
    static func isStaleConnection(_ error: any Error) -> Bool {
        if case .ioOnClosedChannel? = error as? ChannelError { return true }
        guard let client = error as? HTTPClientError else { return false }
        return client == .remoteConnectionClosed || (client == .cancelled && !Task.isCancelled)
    }

    /// A `Retry-After` in seconds, as milliseconds within an hour; nil for anything else.
    static func retryAfterMillis(_ value: String?) -> Int64? {
        guard let value, value.utf8.count <= 18, let seconds = Int64(value), seconds >= 0 else { return nil }
        return min(seconds, 3600) * 1000
    }

    /// What Apple's answer means (its "Handling notification responses from APNs").
    static func outcome(status: Int, reason: String, retryAfter: Int64?) -> PushOutbox.Outcome {
        let said = reason.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(reason)"
        switch (status, reason) {
        case (200, _): return .sent
        // A token for another app (or a bundle id this key may not push to) never works.
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"), (400, "TopicDisallowed"):
            return .gone(said)
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"): return .retry(said, afterMillis: nil)
        case (429, _), (500..<600, _): return .retry(said, afterMillis: retryAfter)
        default: return .failed(said)
        }
    }
}
