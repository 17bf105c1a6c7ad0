import Configuration
import Foundation
import JWTKit
import Logging

/// Everything `plaza serve` can be told. Read by `PlazaConfig(reader:)` with the precedence
/// command line > environment (`PLAZA_*`) > defaults; every key is documented in the README.
public struct PlazaConfig: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDir = "./data"
    /// `postgres://…` switches to PostgreSQL; nil means SQLite at `<dataDir>/plaza.sqlite`.
    public var databaseURL: String?
    public var sqliteReaders = 4
    public var sqliteSynchronous = "NORMAL"
    public var postgresPoolSize = 16
    /// General per-route rate limits. Failed-login throttling is on regardless.
    public var rateLimits = true
    public var sessionIdleDays = 30
    /// Sessions end this long after sign-in however much they are used (OWASP's absolute timeout).
    public var sessionMaxDays = 90
    /// The address people use, e.g. `https://plaza.example.com`: an `https://` one makes the
    /// session cookies `Secure` and `__Host-` and sends HSTS whatever the proxy in front says.
    public var publicURL: String?
    /// A connection that sends nothing (a request's headers or body included) this long is closed.
    public var idleTimeoutSeconds = 60
    /// The longest a request's body may take to arrive, however steadily it trickles in.
    public var bodyTimeoutSeconds = 300
    /// The most header bytes a request may send (each line and all of them).
    public var maxHeaderBytes = 32 * 1024
    public var bcryptCost = 12
    /// Node number (0–1023) baked into generated IDs; give each app server its own.
    public var nodeID = Int.random(in: 0..<1024)
    /// Largest JSON request body, in bytes.
    public var maxBodyBytes = 64 * 1024
    public var logLevel = Logger.Level.info
    /// Log lines as text, or as one JSON object each (`json`), for a log collector.
    public var logFormat = LogFormat.text
    /// `GET /metrics` on its own address when a port is set (off by default); the public port's
    /// number serves it there, beside everything else.
    public var metricsHost = "127.0.0.1"
    public var metricsPort: Int?
    /// Largest image upload, in bytes.
    public var mediaMaxBytes = 16 * 1024 * 1024
    /// Largest image, in pixels (width × height), read from the header before decoding.
    public var mediaMaxPixels = 40_000_000
    /// Media in an S3-compatible bucket instead of `<dataDir>/media` when an endpoint is set.
    public var mediaS3: S3MediaSettings?
    /// Per-person storage quota and daily caps on uploads and link-preview fetches.
    public var quotas = Quotas()
    /// Link-preview fetching: which private addresses it may reach, timeouts, retries.
    public var linkPreviews = LinkPreviewSettings()
    /// Open `/stream` connections: per person, in total, and the events buffered for a slow one.
    public var streamsPerUser = 8
    public var streamsMax = 10_000
    public var streamBuffer = 512
    public var streamHeartbeatSeconds = 15
    /// How long the event log keeps events for clients to resume from.
    public var eventRetentionDays = 7
    /// Days between someone asking to delete their account and its deletion; signing in
    /// before then keeps it. 0 deletes it at the next maintenance round (hourly).
    public var accountDeletionGraceDays = 30
    /// Followers above which an account's posts are read into its followers' home feeds when
    /// they are read, instead of entered in each one's timeline when posted.
    public var homeFanOutLimit = HomeTimeline.defaultFanOutLimit
    public var loginThrottle = LoginThrottle.Policy.standard
    /// Reverse proxies whose forwarding header names the client, and which header they write;
    /// none by default (the client is the TCP peer).
    var trustedProxies = TrustedProxies.none
    public var rateLimitPolicy = RateLimiter.Policy.standard
    /// The name mail and pages sign with.
    public var instanceName = "Plaza"
    /// Sign-in providers besides passwords (`PLAZA_AUTH_PROVIDERS`, `PLAZA_AUTH_PROVIDERS_FILE`).
    public var authProviders: [AuthProvider] = []
    /// SMTP server and sender; without a server, mail goes to `<dataDir>/outbox/` and the log.
    public var mail = MailSettings()
    /// Push to browsers (always) and to Apple devices (with `push.apns`).
    public var push = PushSettings()
    /// Video uploads: ffmpeg's location and the caps (`PLAZA_VIDEO_*`, `PLAZA_FFMPEG`, `PLAZA_FFPROBE`).
    public var video = VideoSettings()
    /// The web app's maps (`PLAZA_MAP_TILES`, `PLAZA_MAP_ATTRIBUTION`).
    public var map = MapSettings()

    public init() {}

    /// The VAPID contact push services see: `push.vapidSubject`, else the https public URL,
    /// else `mailto:` the mail sender.
    var vapidSubject: String {
        if let subject = push.vapidSubject { return subject }
        if servesHTTPS { return baseURL }
        return "mailto:\(mailSender.address)"
    }

    /// Where links in mail point: the public URL, else the address Plaza listens on.
    var baseURL: String {
        if let publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        let host = ["0.0.0.0", "::", "127.0.0.1"].contains(self.host) ? "localhost" : self.host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The sender of mail: `mail.from`, else the instance's name at noreply@ the public URL's host.
    var mailSender: MailAddress {
        if let from = mail.from, let address = try? MailAddress.parse(from) { return address }
        let host = publicURL.flatMap { URL(string: $0)?.host } ?? "localhost"
        return MailAddress(name: instanceName, address: "noreply@\(host)")
    }

    /// `GET /metrics` is on the public port, the operator's choice (whatever the metrics host:
    /// the public listener's address applies).
    var metricsOnPublicPort: Bool { metricsPort == port }

    /// True when the configured public URL is `https://`.
    var servesHTTPS: Bool { publicURL?.lowercased().hasPrefix("https://") == true }

    var streamLimits: EventHub.Limits {
        EventHub.Limits(
            perUser: streamsPerUser, total: streamsMax, buffer: streamBuffer,
            heartbeat: .seconds(streamHeartbeatSeconds))
    }

    public var database: DatabaseConfig {
        DatabaseConfig(
            url: databaseURL,
            sqlitePath: (dataDir as NSString).appendingPathComponent("plaza.sqlite"),
            readers: sqliteReaders,
            poolSize: postgresPoolSize,
            sqliteSynchronous: sqliteSynchronous
        )
    }

    /// Reads `plaza.<key>` from the reader: the environment provider maps it to `PLAZA_<KEY>`.
    public init(reader: ConfigReader) throws {
        let defaults = PlazaConfig()
        host = reader.string(forKey: "plaza.host", default: defaults.host)
        port = reader.int(forKey: "plaza.port", default: defaults.port)
        dataDir = reader.string(forKey: "plaza.data.dir", default: defaults.dataDir)
        databaseURL = reader.string(forKey: "plaza.database.url").flatMap { $0.isEmpty ? nil : $0 }
        sqliteReaders = reader.int(forKey: "plaza.sqlite.readers", default: defaults.sqliteReaders)
        sqliteSynchronous = reader.string(forKey: "plaza.sqlite.synchronous", default: defaults.sqliteSynchronous)
        postgresPoolSize = reader.int(forKey: "plaza.postgres.pool.size", default: defaults.postgresPoolSize)
        sessionIdleDays = reader.int(forKey: "plaza.session.idle.days", default: defaults.sessionIdleDays)
        sessionMaxDays = reader.int(forKey: "plaza.session.max.days", default: defaults.sessionMaxDays)
        publicURL = reader.string(forKey: "plaza.public.url").flatMap { $0.isEmpty ? nil : $0 }
        idleTimeoutSeconds = reader.int(forKey: "plaza.idle.timeout.seconds", default: defaults.idleTimeoutSeconds)
        maxHeaderBytes = reader.int(forKey: "plaza.max.header.bytes", default: defaults.maxHeaderBytes)
        bodyTimeoutSeconds = reader.int(forKey: "plaza.body.timeout.seconds", default: defaults.bodyTimeoutSeconds)
        bcryptCost = reader.int(forKey: "plaza.bcrypt.cost", default: defaults.bcryptCost)
        nodeID = reader.int(forKey: "plaza.node.id", default: defaults.nodeID)
        maxBodyBytes = reader.int(forKey: "plaza.max.body.bytes", default: defaults.maxBodyBytes)
        mediaMaxBytes = reader.int(forKey: "plaza.media.max.bytes", default: defaults.mediaMaxBytes)
        mediaMaxPixels = reader.int(forKey: "plaza.media.max.pixels", default: defaults.mediaMaxPixels)
        quotas.storageBytes = Int64(
            reader.int(forKey: "plaza.media.quota.bytes", default: Int(defaults.quotas.storageBytes)))
        quotas.uploadsPerDay = reader.int(forKey: "plaza.media.uploads.per.day", default: defaults.quotas.uploadsPerDay)
        quotas.linkPreviewsPerDay = reader.int(
            forKey: "plaza.link.previews.per.day", default: defaults.quotas.linkPreviewsPerDay)
        homeFanOutLimit = reader.int(forKey: "plaza.home.fanout.limit", default: defaults.homeFanOutLimit)
        if let endpoint = reader.string(forKey: "plaza.media.s3.endpoint"), !endpoint.isEmpty {
            guard let bucket = reader.string(forKey: "plaza.media.s3.bucket"), !bucket.isEmpty,
                let accessKey = reader.string(forKey: "plaza.media.s3.access.key.id"),
                let secret = reader.string(forKey: "plaza.media.s3.secret.access.key")
            else {
                throw ConfigurationError(
                    "media-s3-endpoint needs media-s3-bucket, media-s3-access-key-id and media-s3-secret-access-key.")
            }
            mediaS3 = S3MediaSettings(
                endpoint: endpoint, bucket: bucket,
                region: reader.string(forKey: "plaza.media.s3.region", default: "us-east-1"),
                accessKeyID: accessKey, secretAccessKey: secret,
                prefix: reader.string(forKey: "plaza.media.s3.prefix", default: "media/"))
        }

        linkPreviews.allowList = reader.string(forKey: "plaza.link.preview.allow", default: "")
        linkPreviews.publicAddresses = try Self.onOff(
            reader.string(forKey: "plaza.link.preview.public", default: "on"), key: "link-preview-public")
        do {
            _ = try AddressPolicy.parse(allowList: linkPreviews.allowList)
        } catch {
            throw ConfigurationError("link-preview-allow: \(error)")
        }

        streamsPerUser = reader.int(forKey: "plaza.streams.per.user", default: defaults.streamsPerUser)
        streamsMax = reader.int(forKey: "plaza.streams.max", default: defaults.streamsMax)
        streamBuffer = reader.int(forKey: "plaza.stream.buffer", default: defaults.streamBuffer)
        streamHeartbeatSeconds = reader.int(
            forKey: "plaza.stream.heartbeat.seconds", default: defaults.streamHeartbeatSeconds)
        eventRetentionDays = reader.int(forKey: "plaza.event.retention.days", default: defaults.eventRetentionDays)
        accountDeletionGraceDays = reader.int(
            forKey: "plaza.account.deletion.grace.days", default: defaults.accountDeletionGraceDays)
        guard streamsPerUser >= 1, streamsMax >= 1 else {
            throw ConfigurationError("streams-per-user and streams-max must be at least 1.")
        }
        guard streamBuffer >= 16 else { throw ConfigurationError("stream-buffer must be at least 16.") }
        guard (1...300).contains(streamHeartbeatSeconds) else {
            throw ConfigurationError("stream-heartbeat-seconds must be from 1 to 300.")
        }
        guard eventRetentionDays >= 1 else { throw ConfigurationError("event-retention-days must be at least 1.") }
        guard (0...365).contains(accountDeletionGraceDays) else {
            throw ConfigurationError("account-deletion-grace-days must be 0 to 365.")
        }

        instanceName = reader.string(forKey: "plaza.instance.name", default: defaults.instanceName)
        guard !instanceName.isEmpty, instanceName.count <= 60,
            !instanceName.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true })
        else { throw ConfigurationError("instance-name must be 1 to 60 characters on one line.") }
        if let url = reader.string(forKey: "plaza.smtp.url"), !url.isEmpty {
            var smtp = try SMTPSettings.parse(url)
            smtp.caFile = reader.string(forKey: "plaza.smtp.ca.file").flatMap { $0.isEmpty ? nil : $0 }
            mail.smtp = smtp
        }
        mail.from = reader.string(forKey: "plaza.mail.from").flatMap { $0.isEmpty ? nil : $0 }
        authProviders = try AuthProvider.read(from: reader)
        if let from = mail.from { _ = try MailAddress.parse(from) }
        try readPush(reader)
        try readVideo(reader)
        map.tiles = try MapSettings.tiles(reader.string(forKey: "plaza.map.tiles", default: MapSettings.openStreetMap))
        map.attribution = reader.string(forKey: "plaza.map.attribution", default: map.attribution)

        rateLimits = try Self.onOff(reader.string(forKey: "plaza.rate.limits", default: "on"), key: "rate-limits")
        do {
            trustedProxies = try TrustedProxies.parse(
                reader.string(forKey: "plaza.trusted.proxies", default: ""),
                header: reader.string(forKey: "plaza.forwarded.header", default: "x-forwarded-for"))
        } catch {
            throw ConfigurationError("\(error)")
        }
        let level = reader.string(forKey: "plaza.log.level", default: "info")
        guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
            throw ConfigurationError("log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
        logLevel = parsed
        let format = reader.string(forKey: "plaza.log.format", default: "text")
        guard let logFormat = LogFormat(rawValue: format.lowercased()) else {
            throw ConfigurationError("log-format must be text or json.")
        }
        self.logFormat = logFormat
        metricsHost = reader.string(forKey: "plaza.metrics.host", default: defaults.metricsHost)
        metricsPort = reader.int(forKey: "plaza.metrics.port")
        if let metricsPort, !(1...65535).contains(metricsPort) {
            throw ConfigurationError("metrics-port must be from 1 to 65535.")
        }
        guard (1...65535).contains(port) else { throw ConfigurationError("port must be from 1 to 65535.") }
        guard (10...16).contains(bcryptCost) else { throw ConfigurationError("bcrypt-cost must be from 10 to 16.") }
        guard (0..<1024).contains(nodeID) else { throw ConfigurationError("node-id must be from 0 to 1023.") }
        guard mediaMaxBytes >= 1024 else { throw ConfigurationError("media-max-bytes must be at least 1024.") }
        guard mediaMaxPixels >= 1_000_000 else {
            throw ConfigurationError("media-max-pixels must be at least 1000000.")
        }
        guard quotas.storageBytes >= 0, quotas.uploadsPerDay >= 0, quotas.linkPreviewsPerDay >= 0 else {
            throw ConfigurationError(
                "media-quota-bytes, media-uploads-per-day and link-previews-per-day must be 0 (no limit) or more.")
        }
        guard homeFanOutLimit >= 1 else { throw ConfigurationError("home-fanout-limit must be at least 1.") }
        guard sessionIdleDays >= 1 else { throw ConfigurationError("session-idle-days must be at least 1.") }
        guard sessionMaxDays >= sessionIdleDays else {
            throw ConfigurationError("session-max-days must be at least session-idle-days.")
        }
        guard (1...3600).contains(idleTimeoutSeconds) else {
            throw ConfigurationError("idle-timeout-seconds must be from 1 to 3600.")
        }
        guard (1...3600).contains(bodyTimeoutSeconds) else {
            throw ConfigurationError("body-timeout-seconds must be from 1 to 3600.")
        }
        guard (4096...1_048_576).contains(maxHeaderBytes) else {
            throw ConfigurationError("max-header-bytes must be from 4096 to 1048576.")
        }
        if let publicURL,
            !(publicURL.hasPrefix("https://") || publicURL.hasPrefix("http://")) || URL(string: publicURL)?.host == nil
        {
            throw ConfigurationError("public-url must be an http:// or https:// URL, not \(publicURL).")
        }
        guard ["NORMAL", "FULL"].contains(sqliteSynchronous.uppercased()) else {
            throw ConfigurationError("sqlite-synchronous must be NORMAL or FULL.")
        }
    }

    static func onOff(_ value: String, key: String) throws -> Bool {
        switch value.lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default: throw ConfigurationError("\(key) must be on or off, not \(value).")
        }
    }
}

extension PlazaConfig {
    /// `PLAZA_VIDEO_MAX_SECONDS`, `PLAZA_VIDEO_MAX_BYTES`, `PLAZA_VIDEO_MAX_PIXELS`,
    /// `PLAZA_VIDEO_TIMEOUT_SECONDS`, `PLAZA_VIDEO_THREADS`, `PLAZA_VIDEO_WORKER`, `PLAZA_FFMPEG`,
    /// `PLAZA_FFPROBE`.
    fileprivate mutating func readVideo(_ reader: ConfigReader) throws {
        let defaults = VideoSettings()
        video.maxSeconds = reader.int(forKey: "plaza.video.max.seconds", default: defaults.maxSeconds)
        video.maxBytes = reader.int(forKey: "plaza.video.max.bytes", default: defaults.maxBytes)
        video.maxPixels = reader.int(forKey: "plaza.video.max.pixels", default: defaults.maxPixels)
        video.timeout = .seconds(
            reader.int(forKey: "plaza.video.timeout.seconds", default: Int(defaults.timeout.components.seconds)))
        video.threads = reader.int(forKey: "plaza.video.threads", default: defaults.threads)
        video.worker = try Self.onOff(reader.string(forKey: "plaza.video.worker", default: "on"), key: "video-worker")
        video.ffmpeg = reader.string(forKey: "plaza.ffmpeg").flatMap { $0.isEmpty ? nil : $0 }
        video.ffprobe = reader.string(forKey: "plaza.ffprobe").flatMap { $0.isEmpty ? nil : $0 }
        guard (1...3600).contains(video.maxSeconds) else {
            throw ConfigurationError("video-max-seconds must be from 1 to 3600.")
        }
        guard video.maxBytes >= 1024 else { throw ConfigurationError("video-max-bytes must be at least 1024.") }
        guard video.maxPixels >= 100_000 else { throw ConfigurationError("video-max-pixels must be at least 100000.") }
        guard (10...86_400).contains(video.timeout.components.seconds) else {
            throw ConfigurationError("video-timeout-seconds must be from 10 to 86400.")
        }
        guard (1...64).contains(video.threads) else { throw ConfigurationError("video-threads must be from 1 to 64.") }
    }

    /// `PLAZA_PUSH_ALLOW`, `PLAZA_PUSH_PUBLIC`, `PLAZA_VAPID_SUBJECT`, and for APNs `PLAZA_APNS_KEY_FILE`,
    /// `PLAZA_APNS_KEY_ID`, `PLAZA_APNS_TEAM_ID`, `PLAZA_APNS_TOPIC` (all four, or none),
    /// `PLAZA_APNS_URL` (both environments) or `PLAZA_APNS_PRODUCTION_URL`/`PLAZA_APNS_SANDBOX_URL`,
    /// `PLAZA_APNS_CA_FILE`.
    fileprivate mutating func readPush(_ reader: ConfigReader) throws {
        func value(_ key: String) -> String? {
            reader.string(forKey: ConfigKey(key)).flatMap { $0.isEmpty ? nil : $0 }
        }
        do {
            push.allowed = try AddressPolicy.parse(allowList: value("plaza.push.allow") ?? "")
        } catch {
            throw ConfigurationError("push-allow (PLAZA_PUSH_ALLOW): \(error)")
        }
        push.publicAddresses = try Self.onOff(value("plaza.push.public") ?? "on", key: "push-public")
        if let subject = value("plaza.vapid.subject") {
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://"), subject.count <= 200 else {
                throw ConfigurationError("vapid-subject must be a mailto: or https: URL.")
            }
            push.vapidSubject = subject
        }
        let apnsKeys = ["plaza.apns.key.file", "plaza.apns.key.id", "plaza.apns.team.id", "plaza.apns.topic"]
        let given = apnsKeys.compactMap(value)
        guard !given.isEmpty else { return }
        guard given.count == apnsKeys.count, let file = value(apnsKeys[0]), let keyID = value(apnsKeys[1]),
            let teamID = value(apnsKeys[2]), let topic = value(apnsKeys[3])
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
        var apns = APNsSettings(keyPEM: pem, keyID: keyID, teamID: teamID, topic: topic)
        if let url = value("plaza.apns.url") {
            apns.productionURL = url
            apns.sandboxURL = url
        }
        apns.productionURL = value("plaza.apns.production.url") ?? apns.productionURL
        apns.sandboxURL = value("plaza.apns.sandbox.url") ?? apns.sandboxURL
        for url in [apns.productionURL, apns.sandboxURL] {
            guard let parsed = URL(string: url), ["https", "http"].contains(parsed.scheme ?? ""), parsed.host != nil
            else { throw ConfigurationError("apns-url: \(url) is not an http(s) URL.") }
        }
        apns.caFile = value("plaza.apns.ca.file")
        push.apns = apns
    }
}

public enum LogFormat: String, Sendable {
    case text, json
}
