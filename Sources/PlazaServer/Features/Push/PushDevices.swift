import Crypto
import Foundation
import PlazaAPI

/// A device as registered, checked: what `PushDeviceStore.register` stores.
package struct PushDeviceRegistration: Sendable, Equatable {
    var platform: PushPlatform
    /// The APNs token in lower-case hex, or the Web Push endpoint URL.
    var address: String
    var environment: String?
    var bundleID: String?
    var p256dh: String?
    var auth: String?
    /// A subscription an app made through another door (Mastodon's): the settings that door
    /// stored with it (JSON), from which its `AppPushFormat` encodes each push.
    package var appSettings: String?
    /// The access token of the app that subscribed, which its pushes carry; kept sealed (`AppPushTokens`).
    package var appToken: String?

    static let maxEndpointLength = 2048

    /// Checks a request as a client sent it. A Web Push endpoint must be https, or plain http to
    /// an address `policy` allows (tests, closed networks); an address literal the policy refuses
    /// is refused here, and names are checked again at every delivery (`PushService`).
    package init(_ request: RegisterPushDeviceRequest, policy: AddressPolicy, apnsConfigured: Bool) throws {
        platform = request.platform
        switch request.platform {
        case .apns:
            guard apnsConfigured else {
                throw PlazaError(
                    .unprocessableContent, "push_unavailable",
                    "This server is not set up to send pushes to Apple devices.")
            }
            guard request.endpoint == nil, request.keys == nil else {
                throw PlazaError.invalid("platform", "An APNs device has a token, not an endpoint or keys.")
            }
            let token = (request.token ?? "").lowercased()
            // Tokens are 32 bytes today; Apple says they may grow, up to 100 bytes.
            guard (64...200).contains(token.utf8.count), token.utf8.count % 2 == 0,
                token.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
            else { throw PlazaError.invalid("token", "token must be the device token in hex (64 to 200 digits).") }
            address = token
            let environment = request.environment ?? "production"
            guard environment == "production" || environment == "sandbox" else {
                throw PlazaError.invalid("environment", "environment must be production or sandbox.")
            }
            self.environment = environment
            if let bundle = request.bundleId {
                guard (1...155).contains(bundle.utf8.count),
                    bundle.utf8.allSatisfy({
                        $0 == 46 || $0 == 45 || (48...57).contains($0) || ((65...90).contains($0))
                            || (97...122).contains($0)
                    }),
                    bundle.first != ".", bundle.last != "."
                else {
                    throw PlazaError.invalid("bundleId", "bundleId must be an app's bundle id, like com.example.app.")
                }
                bundleID = bundle
            }
        case .webpush:
            guard request.token == nil, request.environment == nil, request.bundleId == nil else {
                throw PlazaError.invalid("platform", "A Web Push subscription has an endpoint and keys, not a token.")
            }
            guard let endpoint = request.endpoint, endpoint.utf8.count <= Self.maxEndpointLength else {
                throw PlazaError.invalid(
                    "endpoint", "endpoint must be the subscription's URL, at most \(Self.maxEndpointLength) bytes.")
            }
            try Self.checkEndpoint(endpoint, policy: policy)
            address = endpoint
            guard let keys = request.keys,
                let p256dh = Self.key(keys.p256dh), p256dh.count == 65,
                (try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)) != nil
            else {
                throw PlazaError.invalid(
                    "keys.p256dh", "keys.p256dh must be the browser's P-256 public key, base64url.")
            }
            guard let auth = Self.key(keys.auth), auth.count == 16 else {
                throw PlazaError.invalid("keys.auth", "keys.auth must be the 16-byte secret, base64url.")
            }
            self.p256dh = ByteText.base64url(p256dh)
            self.auth = ByteText.base64url(auth)
        }
    }

    /// A subscription key as clients give it: base64url (browsers), some padding it with `=`,
    /// or plain base64 (Mastodon apps).
    private static func key(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 200 else { return nil }
        var text = Substring(text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
        while text.last == "=" { text = text.dropLast() }
        return ByteText.bytes(base64url: text)
    }

    /// A Web Push endpoint: an absolute https URL (or http to an allowed address) with no
    /// user name, password or fragment, whose literal address, if it is one, is allowed.
    static func checkEndpoint(_ endpoint: String, policy: AddressPolicy) throws {
        let refuse = PlazaError.invalid(
            "endpoint", "endpoint must be an https URL of a push service on the public internet.")
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil,
            components.fragment == nil, endpoint.utf8.allSatisfy({ $0 > 32 && $0 < 127 })
        else { throw refuse }
        let literal = IPAddress(host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host)
        if let literal, policy.refusal(for: literal) != nil { throw refuse }
        switch scheme {
        case "https": return
        case "http":
            // Plain HTTP only to an address literal the operator allowed (tests, closed networks).
            guard let literal, policy.allowed.contains(where: { $0.contains(literal) }) else { throw refuse }
        default: throw refuse
        }
    }
}

/// The devices people registered for push (`push_devices`).
package struct PushDeviceStore: Sendable {
    let db: Database
    let ids: IDGenerator
    /// Seals the token an app's subscription carries.
    let tokens: AppPushTokens
    static let maxPerPerson = 20

    /// Registers the device for `user`, by the session `session`. The same device again (same
    /// token or endpoint) is updated and kept: true when it is new to this person, which is
    /// also the case when it belonged to someone else until now (a shared phone). A person has
    /// at most `maxPerPerson` devices.
    package func register(_ device: PushDeviceRegistration, user: Int64, session: Int64) async throws -> (
        PushDevice, Bool
    ) {
        let now = Timestamp.now.milliseconds
        let sealer = device.appToken == nil ? nil : try await tokens.sealer()
        return try await db.write { db in
            let lock = db.dialect.rowLock(.noKeyUpdate) ?? ""
            // The person's row first (as notifications take it): one registration of theirs at a
            // time, so the cap holds.
            _ = try await db.first("SELECT id FROM users WHERE id = \(bind: user)\(lock)")
            let existing = try await db.first(
                """
                SELECT id, user_id FROM push_devices WHERE platform = \(bind: device.platform.rawValue)
                AND address = \(bind: device.address)\(lock)
                """)
            let id: Int64
            let created: Bool
            if let existing {
                id = try existing.decode(column: "id", as: Int64.self)
                created = try existing.decode(column: "user_id", as: Int64.self) != user
                let token = try device.appToken.flatMap { try sealer?.seal($0, device: id) }
                try await db.exec(
                    """
                    UPDATE push_devices SET user_id = \(bind: user), session_id = \(bind: session),
                        environment = \(bind: device.environment), bundle_id = \(bind: device.bundleID),
                        p256dh = \(bind: device.p256dh), auth = \(bind: device.auth), mastodon = \(bind: device.appSettings),
                        app_token = \(bind: token)
                    WHERE id = \(bind: id)
                    """)
                // What it was owed for its last owner is not for the new one.
                if created { try await db.exec("DELETE FROM push_deliveries WHERE device_id = \(bind: id)") }
            } else {
                id = ids.next()
                created = true
                let token = try device.appToken.flatMap { try sealer?.seal($0, device: id) }
                try await db.exec(
                    """
                    INSERT INTO push_devices (id, user_id, session_id, platform, address, environment, bundle_id, p256dh, auth, mastodon, app_token, created_at)
                    VALUES (\(bind: id), \(bind: user), \(bind: session), \(bind: device.platform.rawValue), \(bind: device.address),
                        \(bind: device.environment), \(bind: device.bundleID), \(bind: device.p256dh), \(bind: device.auth),
                        \(bind: device.appSettings), \(bind: token), \(bind: now))
                    ON CONFLICT (platform, address) DO NOTHING
                    """)
            }
            if created {
                // At most `maxPerPerson`: a new one pushes out the one that has gone longest without a push.
                try await db.exec(
                    """
                    DELETE FROM push_devices WHERE user_id = \(bind: user) AND id <> \(bind: id) AND id NOT IN (
                        SELECT id FROM push_devices WHERE user_id = \(bind: user) AND id <> \(bind: id)
                        ORDER BY COALESCE(last_used_at, created_at) DESC, id DESC LIMIT \(bind: Self.maxPerPerson - 1))
                    """)
            }
            guard let row = try await db.first("SELECT \(Self.columns) FROM push_devices WHERE id = \(bind: id)") else {
                throw PlazaError(
                    .conflict, "push_device_busy", "The device was registered at the same moment. Try again.")
            }
            return (try Self.device(row, session: session), created)
        }
    }

    func list(user: Int64, session: Int64) async throws -> [PushDevice] {
        try await db.read { db in try await db.rows(Self.listSQL(user: user)) }.map {
            try Self.device($0, session: session)
        }
    }

    static func listSQL(user: Int64) -> SQL {
        "SELECT \(columns) FROM push_devices WHERE user_id = \(bind: user) ORDER BY id LIMIT \(bind: maxPerPerson)"
    }

    /// The Mastodon subscription of a token (session): its id, endpoint and settings.
    package func mastodonSubscription(session: Int64) async throws -> (id: Int64, endpoint: String, settings: String)? {
        try await db.read { db in
            try await db.first(
                """
                SELECT id, address, mastodon FROM push_devices WHERE session_id = \(bind: session) AND mastodon IS NOT NULL
                ORDER BY id LIMIT 1
                """)
        }.map {
            (
                try $0.decode(column: "id", as: Int64.self), try $0.decode(column: "address", as: String.self),
                try $0.decode(column: "mastodon", as: String.self)
            )
        }
    }

    /// Changes the settings of a token's Mastodon subscription; false when it has none.
    package func updateMastodon(session: Int64, settings: String) async throws -> Bool {
        try await !db.write(
            """
            UPDATE push_devices SET mastodon = \(bind: settings) WHERE session_id = \(bind: session) AND mastodon IS NOT NULL
            RETURNING id
            """
        ).isEmpty
    }

    /// Removes a token's Mastodon subscription (a new one replaces it: one per token).
    package func removeMastodon(session: Int64) async throws {
        _ = try await db.write(
            "DELETE FROM push_devices WHERE session_id = \(bind: session) AND mastodon IS NOT NULL RETURNING id")
    }

    /// Removes one of `user`'s devices; another person's is not found.
    func remove(id: Int64, user: Int64) async throws {
        let rows = try await db.write(
            "DELETE FROM push_devices WHERE id = \(bind: id) AND user_id = \(bind: user) RETURNING id")
        guard !rows.isEmpty else { throw PlazaError.notFound("Push device") }
    }

    private static let columns: SQL =
        "id, platform, address, environment, bundle_id, session_id, created_at, last_used_at"

    private static func device(_ row: Row, session: Int64) throws -> PushDevice {
        let platform = PushPlatform(rawValue: try row.decode(column: "platform", as: String.self)) ?? .webpush
        let address = try row.decode(column: "address", as: String.self)
        let label: String
        switch platform {
        case .apns: label = "…" + address.suffix(8)
        case .webpush:
            let url = URLComponents(string: address)
            label = "\(url?.scheme ?? "https")://\(url?.host ?? "?")" + (url?.port.map { ":\($0)" } ?? "")
        }
        return PushDevice(
            id: String(try row.decode(column: "id", as: Int64.self)), platform: platform,
            environment: try row.decode(column: "environment", as: String?.self),
            bundleId: try row.decode(column: "bundle_id", as: String?.self), label: label,
            thisSession: try row.decode(column: "session_id", as: Int64.self) == session,
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(Timestamp.init(milliseconds:)))
    }
}
