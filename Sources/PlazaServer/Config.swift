import Configuration
import Foundation
import JWTKit
import Logging
import PlazaAPI

/// Everything `plaza serve` can be told, by area: where it listens and keeps its data at the
/// top, then one group per area, each read from its own part of the configuration and checked
/// by its own `validate()`. Read by `PlazaConfig(reader:)` with the precedence command line >
/// environment > defaults; every key is documented in the README's configuration table.
///
/// One naming rule: the option `--media-max-bytes`, the key `plaza.media.max.bytes` and the
/// environment variable `PLAZA_MEDIA_MAX_BYTES` are one setting (dots are dashes on the command
/// line, underscores in the environment). A group reads from `reader.scoped(to:)` its prefix,
/// e.g. `VideoSettings` from `plaza.video`.
public struct PlazaConfig: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var dataDir = "./data"
    /// `postgres://…` switches to PostgreSQL; nil means SQLite at `<dataDir>/plaza.sqlite`.
    public var databaseURL: String?
    public var sqliteReaders = 4
    public var sqliteSynchronous = "NORMAL"
    public var postgresPoolSize = 16
    /// The address people use, e.g. `https://plaza.example.com`: an `https://` one makes the
    /// session cookies `Secure` and `__Host-` and sends HSTS whatever the proxy in front says.
    public var publicURL: String?
    /// Node number (0–1023) baked into generated IDs; give each app server its own.
    public var nodeID = Int.random(in: 0..<1024)
    /// The name mail and pages sign with.
    public var instanceName = "Plaza"
    /// Who may sign up until an admin sets it (`PLAZA_REGISTRATIONS`; the admins' setting wins).
    public var registrations = RegistrationMode.open
    public var logLevel = Logger.Level.info
    /// Log lines as text, or as one JSON object each (`json`), for a log collector.
    public var logFormat = LogFormat.text
    /// Followers above which an account's posts are read into its followers' home feeds when
    /// they are read, instead of entered in each one's timeline when posted.
    public var homeFanOutLimit = HomeTimeline.defaultFanOutLimit
    /// Connections, request sizes and times, proxies and rate limits.
    public var http = HTTPSettings()
    /// Sessions, password hashing, sign-in throttling and account deletion.
    public var accounts = AccountSettings()
    /// Uploads: sizes, quotas, and an S3-compatible bucket.
    public var media = MediaSettings()
    /// Link-preview fetching: which private addresses it may reach, timeouts, retries.
    public var linkPreviews = LinkPreviewSettings()
    /// Open streams and the event log they resume from.
    public var streams = StreamSettings()
    /// `GET /metrics` on an address of its own.
    public var metrics = MetricsSettings()
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
    package var baseURL: String {
        if let publicURL { return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL }
        let host = ["0.0.0.0", "::", "127.0.0.1"].contains(self.host) ? "localhost" : self.host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }

    /// The sender of mail: `mail.from`, else the instance's name at noreply@ the public URL's host.
    package var mailSender: MailAddress {
        if let from = mail.from, let address = try? MailAddress.parse(from) { return address }
        let host = publicURL.flatMap { URL(string: $0)?.host } ?? "localhost"
        return MailAddress(name: instanceName, address: "noreply@\(host)")
    }

    /// `GET /metrics` is on the public port, the operator's choice (whatever the metrics host:
    /// the public listener's address applies).
    var metricsOnPublicPort: Bool { metrics.port == port }

    /// True when the configured public URL is `https://`.
    var servesHTTPS: Bool { publicURL?.lowercased().hasPrefix("https://") == true }

    public var database: DatabaseConfig {
        DatabaseConfig(
            url: databaseURL,
            sqlitePath: (dataDir as NSString).appendingPathComponent("plaza.sqlite"),
            readers: sqliteReaders,
            poolSize: postgresPoolSize,
            sqliteSynchronous: sqliteSynchronous
        )
    }

    /// Reads `plaza.<key>` from the reader (the environment provider maps it to `PLAZA_<KEY>`),
    /// then each area from its own scope.
    public init(reader: ConfigReader) throws {
        let plaza = reader.scoped(to: "plaza")
        let defaults = PlazaConfig()
        host = plaza.string(forKey: "host", default: defaults.host)
        port = plaza.int(forKey: "port", default: defaults.port)
        dataDir = plaza.string(forKey: "data.dir", default: defaults.dataDir)
        databaseURL = Self.nonEmpty(plaza.string(forKey: "database.url"))
        sqliteReaders = plaza.int(forKey: "sqlite.readers", default: defaults.sqliteReaders)
        sqliteSynchronous = plaza.string(forKey: "sqlite.synchronous", default: defaults.sqliteSynchronous)
        postgresPoolSize = plaza.int(forKey: "postgres.pool.size", default: defaults.postgresPoolSize)
        publicURL = Self.nonEmpty(plaza.string(forKey: "public.url"))
        nodeID = plaza.int(forKey: "node.id", default: defaults.nodeID)
        instanceName = plaza.string(forKey: "instance.name", default: defaults.instanceName)
        let mode = plaza.string(forKey: "registrations", default: defaults.registrations.rawValue)
        guard let registrations = RegistrationMode(rawValue: mode.lowercased()) else {
            throw ConfigurationError("registrations must be open, approval, invite or closed, not \(mode).")
        }
        self.registrations = registrations
        homeFanOutLimit = plaza.int(forKey: "home.fanout.limit", default: defaults.homeFanOutLimit)
        logLevel = try Self.logLevel(plaza.string(forKey: "log.level", default: "info"))
        let format = plaza.string(forKey: "log.format", default: "text")
        guard let logFormat = LogFormat(rawValue: format.lowercased()) else {
            throw ConfigurationError("log-format must be text or json.")
        }
        self.logFormat = logFormat
        try validate()
        http = try HTTPSettings(reader: plaza)
        accounts = try AccountSettings(reader: plaza)
        media = try MediaSettings(reader: plaza)
        linkPreviews = try LinkPreviewSettings(reader: plaza.scoped(to: "link.preview"))
        streams = try StreamSettings(reader: plaza)
        metrics = try MetricsSettings(reader: plaza.scoped(to: "metrics"))
        authProviders = try AuthProvider.read(from: plaza)
        mail = try MailSettings(reader: plaza)
        push = try PushSettings(reader: plaza)
        video = try VideoSettings(reader: plaza)
        map = try MapSettings(reader: plaza.scoped(to: "map"))
    }

    /// The server's own settings, each in its range.
    func validate() throws {
        guard (1...65535).contains(port) else { throw ConfigurationError("port must be from 1 to 65535.") }
        guard (0..<1024).contains(nodeID) else { throw ConfigurationError("node-id must be from 0 to 1023.") }
        guard !instanceName.isEmpty, instanceName.count <= 60,
            !instanceName.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true })
        else { throw ConfigurationError("instance-name must be 1 to 60 characters on one line.") }
        guard homeFanOutLimit >= 1 else { throw ConfigurationError("home-fanout-limit must be at least 1.") }
        if let publicURL,
            !(publicURL.hasPrefix("https://") || publicURL.hasPrefix("http://")) || URL(string: publicURL)?.host == nil
        {
            throw ConfigurationError("public-url must be an http:// or https:// URL, not \(publicURL).")
        }
        guard ["NORMAL", "FULL"].contains(sqliteSynchronous.uppercased()) else {
            throw ConfigurationError("sqlite-synchronous must be NORMAL or FULL.")
        }
    }

    static func logLevel(_ value: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: value.lowercased()) else {
            throw ConfigurationError("log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
        return level
    }

    /// An empty value is none.
    static func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }

    static func onOff(_ value: String, key: String) throws -> Bool {
        switch value.lowercased() {
        case "on", "true", "1", "yes": return true
        case "off", "false", "0", "no": return false
        default: throw ConfigurationError("\(key) must be on or off, not \(value).")
        }
    }
}

public enum LogFormat: String, Sendable {
    case text, json
}
