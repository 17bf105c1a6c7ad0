import Configuration
import Foundation
import JWTKit

// The settings of each area, read from the reader scoped to `plaza` (or to the area's own
// prefix) and checked by the area's `validate()`. Values that need parsing (address lists,
// keys, URLs) are parsed here once and kept parsed.

/// Connections, request sizes and times, proxies and rate limits.
public struct HTTPSettings: Sendable {
    /// A connection that sends nothing (a request's headers or body included) this long is closed.
    public var idleTimeoutSeconds = 60
    /// The longest a request's body may take to arrive, however steadily it trickles in.
    public var bodyTimeoutSeconds = 300
    /// The most header bytes a request may send (each line and all of them).
    public var maxHeaderBytes = 32 * 1024
    /// Largest JSON request body, in bytes.
    public var maxBodyBytes = 64 * 1024
    /// Reverse proxies whose forwarding header names the client, and which header they write;
    /// none by default (the client is the TCP peer).
    var trustedProxies = TrustedProxies.none
    /// General per-route rate limits. Failed-login throttling is on regardless.
    public var rateLimits = true
    public var rateLimitPolicy = RateLimiter.Policy.standard
    public init() {}

    /// From the `plaza` scope: `idle.timeout.seconds`, `body.timeout.seconds`, `max.header.bytes`,
    /// `max.body.bytes`, `trusted.proxies`, `forwarded.header`, `rate.limits`.
    init(reader: ConfigReader) throws {
        let defaults = HTTPSettings()
        idleTimeoutSeconds = reader.int(forKey: "idle.timeout.seconds", default: defaults.idleTimeoutSeconds)
        bodyTimeoutSeconds = reader.int(forKey: "body.timeout.seconds", default: defaults.bodyTimeoutSeconds)
        maxHeaderBytes = reader.int(forKey: "max.header.bytes", default: defaults.maxHeaderBytes)
        maxBodyBytes = reader.int(forKey: "max.body.bytes", default: defaults.maxBodyBytes)
        rateLimits = try PlazaConfig.onOff(reader.string(forKey: "rate.limits", default: "on"), key: "rate-limits")
        do {
            trustedProxies = try TrustedProxies.parse(
                reader.string(forKey: "trusted.proxies", default: ""),
                header: reader.string(forKey: "forwarded.header", default: "x-forwarded-for"))
        } catch {
            throw ConfigurationError("\(error)")
        }
        try validate()
    }

    func validate() throws {
        guard (1...3600).contains(idleTimeoutSeconds) else {
            throw ConfigurationError("idle-timeout-seconds must be from 1 to 3600.")
        }
        guard (1...3600).contains(bodyTimeoutSeconds) else {
            throw ConfigurationError("body-timeout-seconds must be from 1 to 3600.")
        }
        guard (4096...1_048_576).contains(maxHeaderBytes) else {
            throw ConfigurationError("max-header-bytes must be from 4096 to 1048576.")
        }
    }
}

/// Sessions, password hashing, sign-in throttling and account deletion.
public struct AccountSettings: Sendable {
    public var sessionIdleDays = 30
    /// Sessions end this long after sign-in however much they are used (OWASP's absolute timeout).
    public var sessionMaxDays = 90
    public var bcryptCost = 12
    public var loginThrottle = LoginThrottle.Policy.standard
    /// Days between someone asking to delete their account and its deletion; signing in
    /// before then keeps it. 0 deletes it at the next maintenance round (hourly).
    public var deletionGraceDays = 30
    /// Seals two-factor secrets with the key kept outside the database (`secret.key`,
    /// `secret.key.file`; older keys in `secret.key.previous`); without one they are kept as they are.
    public var secrets = SecretBox(current: nil)
    public init() {}

    /// From the `plaza` scope: `session.idle.days`, `session.max.days`, `bcrypt.cost`,
    /// `account.deletion.grace.days`.
    init(reader: ConfigReader) throws {
        let defaults = AccountSettings()
        let session = reader.scoped(to: "session")
        sessionIdleDays = session.int(forKey: "idle.days", default: defaults.sessionIdleDays)
        sessionMaxDays = session.int(forKey: "max.days", default: defaults.sessionMaxDays)
        bcryptCost = reader.int(forKey: "bcrypt.cost", default: defaults.bcryptCost)
        deletionGraceDays = reader.int(forKey: "account.deletion.grace.days", default: defaults.deletionGraceDays)
        secrets = try Self.secretBox(reader)
        try validate()
    }

    /// `secret.key` (the key's text) or `secret.key.file` (a file holding it), and
    /// `secret.key.previous` (comma-separated keys that sealed values before a rotation).
    static func secretBox(_ reader: ConfigReader) throws -> SecretBox {
        var text = PlazaConfig.nonEmpty(reader.string(forKey: "secret.key"))
        if text == nil, let file = PlazaConfig.nonEmpty(reader.string(forKey: "secret.key.file")) {
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw ConfigurationError("secret-key-file: cannot read \(file): \(error.localizedDescription)")
            }
        }
        let previous = (reader.string(forKey: "secret.key.previous") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        return SecretBox(
            current: try text.map(SecretBox.Key.init(text:)), previous: try previous.map(SecretBox.Key.init(text:)))
    }

    func validate() throws {
        guard (10...16).contains(bcryptCost) else { throw ConfigurationError("bcrypt-cost must be from 10 to 16.") }
        guard sessionIdleDays >= 1 else { throw ConfigurationError("session-idle-days must be at least 1.") }
        guard sessionMaxDays >= sessionIdleDays else {
            throw ConfigurationError("session-max-days must be at least session-idle-days.")
        }
        guard (0...365).contains(deletionGraceDays) else {
            throw ConfigurationError("account-deletion-grace-days must be 0 to 365.")
        }
    }
}

/// Uploads: sizes, quotas, and an S3-compatible bucket.
public struct MediaSettings: Sendable {
    /// Largest image upload, in bytes.
    public var maxBytes = 16 * 1024 * 1024
    /// Largest image, in pixels (width × height), read from the header before decoding.
    public var maxPixels = 40_000_000
    /// Media in an S3-compatible bucket instead of `<dataDir>/media` when an endpoint is set.
    public var s3: S3MediaSettings?
    /// Per-person storage quota and daily caps on uploads and link-preview fetches.
    public var quotas = Quotas()
    public init() {}

    /// `media.max.bytes`, `media.max.pixels`, `media.quota.bytes`, `media.uploads.per.day`,
    /// `media.s3.*` and `link.previews.per.day`, from the `plaza` scope.
    init(reader: ConfigReader) throws {
        let defaults = MediaSettings()
        let media = reader.scoped(to: "media")
        maxBytes = media.int(forKey: "max.bytes", default: defaults.maxBytes)
        maxPixels = media.int(forKey: "max.pixels", default: defaults.maxPixels)
        quotas.storageBytes = Int64(media.int(forKey: "quota.bytes", default: Int(defaults.quotas.storageBytes)))
        quotas.uploadsPerDay = media.int(forKey: "uploads.per.day", default: defaults.quotas.uploadsPerDay)
        quotas.linkPreviewsPerDay = reader.int(
            forKey: "link.previews.per.day", default: defaults.quotas.linkPreviewsPerDay)
        s3 = try S3MediaSettings(reader: media.scoped(to: "s3"))
        try validate()
    }

    func validate() throws {
        guard maxBytes >= 1024 else { throw ConfigurationError("media-max-bytes must be at least 1024.") }
        guard maxPixels >= 1_000_000 else { throw ConfigurationError("media-max-pixels must be at least 1000000.") }
        guard quotas.storageBytes >= 0, quotas.uploadsPerDay >= 0, quotas.linkPreviewsPerDay >= 0 else {
            throw ConfigurationError(
                "media-quota-bytes, media-uploads-per-day and link-previews-per-day must be 0 (no limit) or more.")
        }
    }
}

extension S3MediaSettings {
    /// From `plaza.media.s3`: nil without an `endpoint`; with one, `bucket`, `access.key.id` and
    /// `secret.access.key` too, and `region` and `prefix` optionally.
    init?(reader: ConfigReader) throws {
        guard let endpoint = PlazaConfig.nonEmpty(reader.string(forKey: "endpoint")) else { return nil }
        guard let bucket = PlazaConfig.nonEmpty(reader.string(forKey: "bucket")),
            let accessKey = reader.string(forKey: "access.key.id"),
            let secret = reader.string(forKey: "secret.access.key")
        else {
            throw ConfigurationError(
                "media-s3-endpoint needs media-s3-bucket, media-s3-access-key-id and media-s3-secret-access-key.")
        }
        self.init(
            endpoint: endpoint, bucket: bucket, region: reader.string(forKey: "region", default: "us-east-1"),
            accessKeyID: accessKey, secretAccessKey: secret, prefix: reader.string(forKey: "prefix", default: "media/"))
    }
}

extension LinkPreviewSettings {
    /// From `plaza.link.preview`: `allow` (parsed once, here) and `public`.
    init(reader: ConfigReader) throws {
        self.init()
        do {
            allowed = try AddressPolicy.parse(allowList: reader.string(forKey: "allow", default: ""))
        } catch {
            throw ConfigurationError("link-preview-allow: \(error)")
        }
        publicAddresses = try PlazaConfig.onOff(
            reader.string(forKey: "public", default: "on"), key: "link-preview-public")
    }
}

/// Open `/stream` connections (per person, in total, the events buffered for a slow one, the
/// heartbeat) and how long the event log keeps events to resume from.
public struct StreamSettings: Sendable {
    public var perUser = 8
    public var max = 10_000
    public var buffer = 512
    public var heartbeatSeconds = 15
    public var eventRetentionDays = 7
    public init() {}

    var limits: EventHub.Limits {
        EventHub.Limits(perUser: perUser, total: max, buffer: buffer, heartbeat: .seconds(heartbeatSeconds))
    }

    /// From the `plaza` scope: `streams.per.user`, `streams.max`, `stream.buffer`,
    /// `stream.heartbeat.seconds`, `event.retention.days`.
    init(reader: ConfigReader) throws {
        let defaults = StreamSettings()
        perUser = reader.int(forKey: "streams.per.user", default: defaults.perUser)
        max = reader.int(forKey: "streams.max", default: defaults.max)
        buffer = reader.int(forKey: "stream.buffer", default: defaults.buffer)
        heartbeatSeconds = reader.int(forKey: "stream.heartbeat.seconds", default: defaults.heartbeatSeconds)
        eventRetentionDays = reader.int(forKey: "event.retention.days", default: defaults.eventRetentionDays)
        try validate()
    }

    func validate() throws {
        guard perUser >= 1, max >= 1 else {
            throw ConfigurationError("streams-per-user and streams-max must be at least 1.")
        }
        guard buffer >= 16 else { throw ConfigurationError("stream-buffer must be at least 16.") }
        guard (1...300).contains(heartbeatSeconds) else {
            throw ConfigurationError("stream-heartbeat-seconds must be from 1 to 300.")
        }
        guard eventRetentionDays >= 1 else { throw ConfigurationError("event-retention-days must be at least 1.") }
    }
}

/// `GET /metrics` on its own address when a port is set (off by default); the public port's
/// number serves it there, beside everything else.
public struct MetricsSettings: Sendable {
    public var host = "127.0.0.1"
    public var port: Int?
    public init() {}

    /// From `plaza.metrics`: `host`, `port`.
    init(reader: ConfigReader) throws {
        host = reader.string(forKey: "host", default: MetricsSettings().host)
        port = reader.int(forKey: "port")
        try validate()
    }

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ConfigurationError("metrics-port must be from 1 to 65535.") }
    }
}

extension MailSettings {
    /// From the `plaza` scope: `smtp.url`, `smtp.ca.file`, `mail.from`.
    init(reader: ConfigReader) throws {
        self.init()
        let smtpReader = reader.scoped(to: "smtp")
        if let url = PlazaConfig.nonEmpty(smtpReader.string(forKey: "url")) {
            var smtp = try SMTPSettings.parse(url)
            smtp.caFile = PlazaConfig.nonEmpty(smtpReader.string(forKey: "ca.file"))
            self.smtp = smtp
        }
        from = PlazaConfig.nonEmpty(reader.string(forKey: "mail.from"))
        try validate()
    }

    func validate() throws {
        if let from { _ = try MailAddress.parse(from) }
    }
}

extension VideoSettings {
    /// From the `plaza` scope: `video.max.seconds`, `video.max.bytes`, `video.max.pixels`,
    /// `video.timeout.seconds`, `video.threads`, `video.worker`, `ffmpeg`, `ffprobe`.
    init(reader: ConfigReader) throws {
        self.init()
        let defaults = VideoSettings()
        let video = reader.scoped(to: "video")
        maxSeconds = video.int(forKey: "max.seconds", default: defaults.maxSeconds)
        maxBytes = video.int(forKey: "max.bytes", default: defaults.maxBytes)
        maxPixels = video.int(forKey: "max.pixels", default: defaults.maxPixels)
        timeout = .seconds(video.int(forKey: "timeout.seconds", default: Int(defaults.timeout.components.seconds)))
        threads = video.int(forKey: "threads", default: defaults.threads)
        worker = try PlazaConfig.onOff(video.string(forKey: "worker", default: "on"), key: "video-worker")
        ffmpeg = PlazaConfig.nonEmpty(reader.string(forKey: "ffmpeg"))
        ffprobe = PlazaConfig.nonEmpty(reader.string(forKey: "ffprobe"))
        try validate()
    }

    func validate() throws {
        guard (1...3600).contains(maxSeconds) else {
            throw ConfigurationError("video-max-seconds must be from 1 to 3600.")
        }
        guard maxBytes >= 1024 else { throw ConfigurationError("video-max-bytes must be at least 1024.") }
        guard maxPixels >= 100_000 else { throw ConfigurationError("video-max-pixels must be at least 100000.") }
        guard (10...86_400).contains(timeout.components.seconds) else {
            throw ConfigurationError("video-timeout-seconds must be from 10 to 86400.")
        }
        guard (1...64).contains(threads) else { throw ConfigurationError("video-threads must be from 1 to 64.") }
    }
}

extension MapSettings {
    /// From `plaza.map`: `tiles` (a URL with `{z}`, `{x}` and `{y}`, or `off`) and `attribution`.
    init(reader: ConfigReader) throws {
        self.init()
        tiles = try Self.tiles(reader.string(forKey: "tiles", default: Self.openStreetMap))
        attribution = reader.string(forKey: "attribution", default: attribution)
    }
}

extension PushSettings {
    /// From the `plaza` scope: `push.allow` (parsed once, here), `push.public`, `vapid.subject`,
    /// and Apple's `apns.*` (`APNsSettings(reader:)`).
    init(reader: ConfigReader) throws {
        self.init()
        let push = reader.scoped(to: "push")
        do {
            allowed = try AddressPolicy.parse(allowList: PlazaConfig.nonEmpty(push.string(forKey: "allow")) ?? "")
        } catch {
            throw ConfigurationError("push-allow (PLAZA_PUSH_ALLOW): \(error)")
        }
        publicAddresses = try PlazaConfig.onOff(
            PlazaConfig.nonEmpty(push.string(forKey: "public")) ?? "on", key: "push-public")
        if let subject = PlazaConfig.nonEmpty(reader.string(forKey: "vapid.subject")) {
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://"), subject.count <= 200 else {
                throw ConfigurationError("vapid-subject must be a mailto: or https: URL.")
            }
            vapidSubject = subject
        }
        apns = try APNsSettings(reader: reader.scoped(to: "apns"))
    }
}

extension APNsSettings {
    /// From `plaza.apns`: nil without any of `key.file`, `key.id`, `team.id` and `topic` (all
    /// four, or none); `url` (both environments) or `production.url`/`sandbox.url`; `ca.file`.
    /// The key file is read and checked here.
    init?(reader: ConfigReader) throws {
        func value(_ key: String) -> String? { PlazaConfig.nonEmpty(reader.string(forKey: ConfigKey(key))) }
        let keys = ["key.file", "key.id", "team.id", "topic"]
        let given = keys.compactMap(value)
        guard !given.isEmpty else { return nil }
        guard given.count == keys.count, let file = value(keys[0]), let keyID = value(keys[1]),
            let teamID = value(keys[2]), let topic = value(keys[3])
        else {
            throw ConfigurationError("apns-key-file, apns-key-id, apns-team-id and apns-topic go together.")
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ConfigurationError("apns-key-file: cannot read \(file): \(error)")
        }
        guard (try? ES256PrivateKey(pem: pem)) != nil else {
            throw ConfigurationError("apns-key-file: \(file) is not an EC P-256 private key (Apple's .p8 file).")
        }
        self.init(keyPEM: pem, keyID: keyID, teamID: teamID, topic: topic)
        if let url = value("url") {
            productionURL = url
            sandboxURL = url
        }
        productionURL = value("production.url") ?? productionURL
        sandboxURL = value("sandbox.url") ?? sandboxURL
        for url in [productionURL, sandboxURL] {
            guard let parsed = URL(string: url), ["https", "http"].contains(parsed.scheme ?? ""), parsed.host != nil
            else { throw ConfigurationError("apns-url: \(url) is not an http(s) URL.") }
        }
        caFile = value("ca.file")
    }
}
