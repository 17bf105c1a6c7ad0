/// Where pushes go: Apple's service for iOS apps, or a browser's Web Push service.
public enum PushPlatform: String, Codable, Sendable, Hashable, CaseIterable {
    case apns
    case webpush
}

/// The keys of a Web Push subscription (`PushSubscription.toJSON().keys` in a browser).
public struct WebPushKeys: Codable, Sendable, Hashable {
    /// The browser's P-256 public key, uncompressed, base64url.
    public var p256dh: String
    /// The 16-byte authentication secret, base64url.
    public var auth: String
    public init(p256dh: String, auth: String) {
        self.p256dh = p256dh
        self.auth = auth
    }
}

/// POST /me/push-devices: an APNs device token (`token`, `environment`, optional `bundleId`) or a
/// Web Push subscription (`endpoint`, `keys`).
public struct RegisterPushDeviceRequest: Codable, Sendable, Hashable {
    public var platform: PushPlatform
    /// APNs: the device token in hex, as `didRegisterForRemoteNotificationsWithDeviceToken` gives it.
    public var token: String?
    /// APNs: `production` (the default) or `sandbox` (apps run from Xcode).
    public var environment: String?
    /// APNs: the app's bundle id when it is not the server's configured topic.
    public var bundleId: String?
    /// Web Push: the subscription's endpoint URL.
    public var endpoint: String?
    public var keys: WebPushKeys?

    public init(
        platform: PushPlatform, token: String? = nil, environment: String? = nil, bundleId: String? = nil,
        endpoint: String? = nil, keys: WebPushKeys? = nil
    ) {
        self.platform = platform
        self.token = token
        self.environment = environment
        self.bundleId = bundleId
        self.endpoint = endpoint
        self.keys = keys
    }

    public static func apns(token: String, environment: String = "production", bundleId: String? = nil) -> Self {
        Self(platform: .apns, token: token, environment: environment, bundleId: bundleId)
    }

    public static func webPush(endpoint: String, p256dh: String, auth: String) -> Self {
        Self(platform: .webpush, endpoint: endpoint, keys: WebPushKeys(p256dh: p256dh, auth: auth))
    }
}

/// A device that receives my pushes. The token or endpoint itself is not shown again.
public struct PushDevice: Codable, Sendable, Hashable {
    public var id: String
    public var platform: PushPlatform
    /// APNs: `production` or `sandbox`.
    @Nullable public var environment: String?
    @Nullable public var bundleId: String?
    /// APNs: the token's last 8 hex digits; Web Push: the push service's origin.
    public var label: String
    /// Registered by the session making this request (it goes when that session signs out).
    public var thisSession: Bool
    public var createdAt: Timestamp
    /// When a push last reached it.
    @Nullable public var lastUsedAt: Timestamp?

    public init(
        id: String, platform: PushPlatform, environment: String?, bundleId: String?, label: String,
        thisSession: Bool, createdAt: Timestamp, lastUsedAt: Timestamp?
    ) {
        self.id = id
        self.platform = platform
        self.environment = environment
        self.bundleId = bundleId
        self.label = label
        self.thisSession = thisSession
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// GET /push/web-push-key: the server's VAPID public key, for `PushManager.subscribe`'s
/// `applicationServerKey`.
public struct WebPushKey: Codable, Sendable, Hashable {
    /// The uncompressed P-256 public key, base64url without padding.
    public var publicKey: String
    public init(publicKey: String) { self.publicKey = publicKey }
}
