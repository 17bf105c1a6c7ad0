import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

/// A Mastodon app's push subscription: which notification types it wants (`alerts`), from whom
/// (`policy`), and how its pushes are encrypted (`standard`: RFC 8291's `aes128gcm`; otherwise
/// the legacy `aesgcm`, which Ice Cubes decrypts).
struct MastodonPushSettings: Codable, Sendable, Equatable {
    static let alertNames = [
        "mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update", "admin.sign_up",
        "admin.report",
    ]
    static let policies = ["all", "followed", "follower", "none"]

    var standard = false
    var alerts: [String: Bool] = [:]
    var policy = "all"

    init() {}

    /// Stored settings; unreadable ones want nothing (no alerts).
    init(json: String?) {
        self = json.flatMap { try? JSONDecoder().decode(Self.self, from: Data($0.utf8)) } ?? Self()
    }

    var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

    /// Applies `data[alerts][…]` and `data[policy]` (or `policy`, as Mastodon.py sends it).
    mutating func apply(_ params: MastodonParams) throws {
        for name in Self.alertNames {
            if let value = params.bool("data[alerts][\(name)]") { alerts[name] = value }
        }
        if let policy = params.string("data[policy]") ?? params.string("policy") {
            guard Self.policies.contains(policy) else { throw MastodonError.validation("Policy is not valid") }
            self.policy = policy
        }
    }

    /// The push for `notification`, in Mastodon's shape, if the app wants it. It carries the
    /// subscribing token (`accessToken`), with which the app opens the notification.
    func payload(_ notification: PlazaAPI.Notification, accessToken: String?, message: PushMessage) -> [UInt8]? {
        guard let type = MastodonController.type(of: notification.kind), alerts[type] == true else { return nil }
        switch policy {
        case "none": return nil
        case "followed": guard notification.actor.viewer?.following == true else { return nil }
        case "follower": guard notification.actor.viewer?.followedBy == true else { return nil }
        default: break
        }
        struct Payload: Encodable {
            var accessToken: String
            var preferredLocale = "en"
            /// A number, as Mastodon sends it and Ice Cubes decodes it.
            var notificationId: Int64
            var notificationType: String
            var icon: String
            var title: String
            var body: String
        }
        // An avatar's URL is a path here: the app shows its own icon instead.
        let icon = notification.actor.avatar.map(\.variants.thumbnail).flatMap { $0.hasPrefix("http") ? $0 : nil } ?? ""
        let payload = Payload(
            accessToken: accessToken ?? "", notificationId: Int64(notification.id) ?? 0, notificationType: type,
            icon: icon, title: message.body,
            body: notification.comment?.body ?? notification.post.flatMap { $0.body ?? $0.title } ?? "")
        return Array((try? MastodonJSON.encoder.encode(payload)) ?? Data())
    }
}

/// `/api/v1/push/subscription`: a token's one push subscription (scope `push`).
/// The pushes of Mastodon apps' subscriptions, in Mastodon's shape and encoding, from the
/// settings the subscription was made with.
struct MastodonPushFormat: AppPushFormat {
    func payload(
        settings: String?, accessToken: String?, _ notification: PlazaAPI.Notification, message: PushMessage
    ) -> (bytes: [UInt8], legacy: Bool)? {
        let settings = MastodonPushSettings(json: settings)
        return settings.payload(notification, accessToken: accessToken, message: message).map {
            ($0, !settings.standard)
        }
    }
}

struct MastodonPushController: FeatureRoutes {
    let devices: PushDeviceStore
    let vapid: VAPID.Source
    let policy: AddressPolicy

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.post("push/subscription", use: create)
        routes.get("push/subscription", use: show)
        routes.put("push/subscription", use: update)
        routes.delete("push/subscription", use: remove)
        return routes
    }

    struct Subscription: Encodable {
        /// A number, as Mastodon's serializer sends it and Ice Cubes decodes it (`Int`).
        var id: Int64
        var endpoint: String
        var standard: Bool
        var alerts: [String: Bool]
        var serverKey: String
        var policy: String
    }

    private func entity(id: Int64, endpoint: String, settings: MastodonPushSettings) async throws -> Response {
        var alerts = settings.alerts
        for name in MastodonPushSettings.alertNames where alerts[name] == nil { alerts[name] = false }
        return try MastodonJSON.response(
            Subscription(
                id: id, endpoint: endpoint, standard: settings.standard, alerts: alerts,
                serverKey: try await vapid.vapid().publicKey, policy: settings.policy))
    }

    @Sendable func create(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("push")
        let params = try await MastodonParams.read(request, context: context)
        guard let endpoint = params.string("subscription[endpoint]"),
            let p256dh = params.string("subscription[keys][p256dh]"),
            let auth = params.string("subscription[keys][auth]")
        else { throw MastodonError.validation("subscription[endpoint] and subscription[keys] are required") }
        var settings = MastodonPushSettings()
        settings.standard = params.bool("subscription[standard]") ?? false
        try settings.apply(params)
        var registration: PushDeviceRegistration
        do {
            registration = try PushDeviceRegistration(
                RegisterPushDeviceRequest(
                    platform: .webpush, endpoint: endpoint, keys: WebPushKeys(p256dh: p256dh, auth: auth)),
                policy: policy, apnsConfigured: false)
        } catch let error as PlazaError {
            throw MastodonError.validation(error.message)
        }
        registration.appSettings = settings.json
        // Its pushes carry the token that made it (kept sealed), so a tap opens the notification.
        registration.appToken = Self.presentedToken(request)
        // One subscription per token: a new one replaces it.
        try await devices.removeMastodon(session: me.sessionID)
        let (device, _) = try await devices.register(registration, user: me.userID, session: me.sessionID)
        return try await entity(id: Int64(device.id) ?? 0, endpoint: endpoint, settings: settings)
    }

    /// The token the request was authenticated with (`MastodonAuthMiddleware` read it the same way).
    static func presentedToken(_ request: Request) -> String? {
        if let header = request.headers[.authorization] { return try? AuthMiddleware.bearerToken(header) }
        return request.uri.queryParameters.get("access_token").flatMap {
            try? AuthMiddleware.bearerToken("Bearer " + $0)
        }
    }

    @Sendable func show(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("push")
        guard let found = try await devices.mastodonSubscription(session: me.sessionID) else {
            throw MastodonError.notFound
        }
        return try await entity(id: found.id, endpoint: found.endpoint, settings: .init(json: found.settings))
    }

    @Sendable func update(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("push")
        guard let found = try await devices.mastodonSubscription(session: me.sessionID) else {
            throw MastodonError.notFound
        }
        var settings = MastodonPushSettings(json: found.settings)
        try settings.apply(try await MastodonParams.read(request, context: context))
        guard try await devices.updateMastodon(session: me.sessionID, settings: settings.json) else {
            throw MastodonError.notFound
        }
        return try await entity(id: found.id, endpoint: found.endpoint, settings: settings)
    }

    @Sendable func remove(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("push")
        try await devices.removeMastodon(session: me.sessionID)
        return try MastodonJSON.response([String: String]())
    }
}
