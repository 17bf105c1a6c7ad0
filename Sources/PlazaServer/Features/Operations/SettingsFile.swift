import Foundation
import PlazaAPI

/// The settings file a service reads (`/etc/plaza/plaza.env`), as `plaza setup` writes it.
/// `packaging/plaza.env`, the archive's example, is this file with the example's values (a test
/// keeps the two the same).
public struct SettingsFile: Sendable, Equatable {
    public var publicURL: String
    public var name: String
    public var registrations: RegistrationMode
    public var dataDir: String
    /// PostgreSQL instead of SQLite in the data folder.
    public var databaseURL: String?
    public var smtpURL: String?
    public var mailFrom: String?
    /// The file holding the key two-factor secrets are sealed with (`SecretBox`).
    public var secretKeyFile: String?

    /// The archive's example.
    public static let example = SettingsFile(
        publicURL: "https://plaza.example.com", name: "Plaza", registrations: .approval, dataDir: "/var/lib/plaza")

    public init(
        publicURL: String, name: String, registrations: RegistrationMode, dataDir: String, databaseURL: String? = nil,
        smtpURL: String? = nil, mailFrom: String? = nil, secretKeyFile: String? = nil
    ) {
        self.publicURL = publicURL
        self.name = name
        self.registrations = registrations
        self.dataDir = dataDir
        self.databaseURL = databaseURL
        self.smtpURL = smtpURL
        self.mailFrom = mailFrom
        self.secretKeyFile = secretKeyFile
    }

    /// Refuses values the file cannot hold (a line break would start another setting) and those
    /// `plaza serve` would refuse.
    public func validate() throws {
        for (key, value) in [
            ("public URL", publicURL), ("name", name), ("data folder", dataDir), ("database URL", databaseURL ?? ""),
            ("SMTP URL", smtpURL ?? ""), ("sender", mailFrom ?? ""), ("secret key file", secretKeyFile ?? ""),
        ] where value.contains(where: { $0.isNewline || $0 == "\0" }) {
            throw ConfigurationError("The \(key) must be on one line.")
        }
        guard publicURL.hasPrefix("https://") || publicURL.hasPrefix("http://"), URL(string: publicURL)?.host != nil
        else { throw ConfigurationError("The public URL must be an http:// or https:// address, not \(publicURL).") }
        guard (1...InstanceStore.maxName).contains(name.count) else {
            throw ConfigurationError("The name must be 1 to \(InstanceStore.maxName) characters.")
        }
        guard dataDir.hasPrefix("/") else { throw ConfigurationError("The data folder must be an absolute path.") }
    }

    public var text: String {
        func line(_ key: String, _ value: String?, example: String) -> String {
            value.map { "\(key)=\($0)" } ?? "# \(key)=\(example)"
        }
        return """
            # Plaza's settings for the service (/etc/plaza/plaza.env, read by plaza.service and by
            # `plaza … --env-file /etc/plaza/plaza.env`). KEY=value a line, no quotes. Every setting is
            # described in docs/configuration.md; those left out keep their defaults.

            # The address people use. https makes session cookies Secure and sends HSTS; links in mail point here.
            PLAZA_PUBLIC_URL=\(publicURL)
            # The name shown on the site and in mail.
            PLAZA_INSTANCE_NAME=\(name)
            # Who may sign up until an admin sets it on the page This server: open, approval, invite or closed.
            PLAZA_REGISTRATIONS=\(registrations.rawValue)

            # Listen on loopback only: nginx or Caddy in front (docs/install.md) serves the world on 443.
            PLAZA_HOST=127.0.0.1
            PLAZA_PORT=8080
            # The proxy in front, whose X-Forwarded-For is believed.
            PLAZA_TRUSTED_PROXIES=127.0.0.1,::1

            # SQLite and media under the service's state folder; PostgreSQL instead:
            \(line("PLAZA_DATABASE_URL", databaseURL, example: "postgres://plaza:secret@127.0.0.1:5432/plaza?sslmode=disable"))
            PLAZA_DATA_DIR=\(dataDir)

            # The key two-factor secrets are sealed with, kept out of the database and its backups
            # (plaza setup makes it; plaza secrets new-key makes another, plaza secrets rotate moves to it).
            \(line("PLAZA_SECRET_KEY_FILE", secretKeyFile, example: "/etc/plaza/secret.key"))

            # Mail (password resets, confirmations). Unset, mail is written to <data dir>/outbox instead.
            \(line("PLAZA_SMTP_URL", smtpURL, example: "smtp://plaza%40example.com:secret@smtp.example.com:587"))
            \(line("PLAZA_MAIL_FROM", mailFrom, example: "Plaza <noreply@plaza.example.com>"))

            # Logs as one JSON object a line, for journald or a collector; metrics on a private port.
            # PLAZA_LOG_FORMAT=json
            # PLAZA_METRICS_PORT=9090

            """
    }
}
