import Foundation
import Logging

/// `plaza check`: what an operator should know before serving, a line each: the public address,
/// the database and its schema, where files go and whether they can be written, mail, push,
/// ffmpeg and libvips. Reads the same settings as `plaza serve`; changes nothing but a probe
/// file it removes again.
public enum InstanceCheck {
    public struct Line: Sendable, CustomStringConvertible {
        public enum Level: String, Sendable {
            case ok = "ok"
            /// Plaza runs, but something people expect will not work.
            case warning = "warning"
            /// Plaza will not start or serve as it should.
            case error = "error"
        }
        public let level: Level
        public let subject: String
        public let message: String
        public var description: String {
            "\(level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(subject): \(message)"
        }
    }

    public static func run(config: PlazaConfig, logger: Logger) async -> [Line] {
        var lines = [publicURL(config), await database(config, logger: logger)]
        lines += storage(config)
        lines += [mail(config), push(config), secretKey(config), ffmpeg(config, logger: logger), libvips()]
        return lines
    }

    static func publicURL(_ config: PlazaConfig) -> Line {
        guard let url = config.publicURL else {
            return Line(
                level: .warning, subject: "public URL",
                message:
                    "PLAZA_PUBLIC_URL is not set: links in mail point to \(config.baseURL), and cookies are Secure only behind a proxy that says https"
            )
        }
        guard url.hasPrefix("https://") else {
            return Line(
                level: .warning, subject: "public URL",
                message: "\(url) is not https: sessions travel unencrypted, and cookies are not Secure")
        }
        return Line(level: .ok, subject: "public URL", message: url)
    }

    static func database(_ config: PlazaConfig, logger: Logger) async -> Line {
        let name = config.databaseURL == nil ? "SQLite in \(config.dataDir)" : "PostgreSQL"
        do {
            let db = try await Database.open(config.database, logger: logger)
            let status = try await db.withRunning { try await Migrations.pending(on: $0) }
            let at = "schema \(status.schema)\(status.release.map { ", last run by Plaza \($0)" } ?? "")"
            guard status.pending.isEmpty else {
                return Line(
                    level: .ok, subject: "database",
                    message:
                        "\(name) answers (\(at)); plaza serve or plaza migrate applies \(status.pending.count) migration\(status.pending.count == 1 ? "" : "s")"
                )
            }
            return Line(level: .ok, subject: "database", message: "\(name) answers (\(at))")
        } catch {
            return Line(level: .error, subject: "database", message: "\(name): \(DatabaseErrorText(error))")
        }
    }

    static func storage(_ config: PlazaConfig) -> [Line] {
        var folders = [("data folder", config.dataDir)]
        folders.append(("uploads", (config.dataDir as NSString).appendingPathComponent("uploads")))
        var lines: [Line] = []
        if let s3 = config.media.s3 {
            lines.append(
                Line(
                    level: .ok, subject: "media",
                    message: "in the S3 bucket \(s3.bucket) at \(s3.endpoint) (not contacted by this check)"))
        } else {
            folders.append(("media", (config.dataDir as NSString).appendingPathComponent("media")))
        }
        for (subject, folder) in folders {
            lines.append(writable(folder, subject: subject))
        }
        return lines
    }

    /// Whether a file can be made in `folder` (made if missing, as `plaza serve` does).
    static func writable(_ folder: String, subject: String) -> Line {
        let probe = (folder as NSString).appendingPathComponent(".plaza-check-\(UInt64.random(in: 0...UInt64.max))")
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Data("probe".utf8).write(to: URL(fileURLWithPath: probe))
            try FileManager.default.removeItem(atPath: probe)
            return Line(level: .ok, subject: subject, message: "\(folder) is writable")
        } catch {
            return Line(
                level: .error, subject: subject,
                message: "\(folder) is not writable by this user (\(getuid())): \(error.localizedDescription)")
        }
    }

    static func mail(_ config: PlazaConfig) -> Line {
        guard let smtp = config.mail.smtp else {
            return Line(
                level: .warning, subject: "mail",
                message:
                    "PLAZA_SMTP_URL is not set: mail (confirmations, password resets) is written to \(config.dataDir)/outbox and reaches nobody"
            )
        }
        let security =
            switch smtp.security {
            case .startTLS: "STARTTLS"
            case .implicitTLS: "TLS"
            case .none: "no TLS"
            }
        return Line(
            level: .ok, subject: "mail",
            message: "through \(smtp.host):\(smtp.port) (\(security)) from \(config.mailSender.address)")
    }

    static func push(_ config: PlazaConfig) -> Line {
        let apns = config.push.apns.map { "APNs for \($0.topic)" } ?? "no APNs (iPhone apps get no pushes)"
        return Line(level: .ok, subject: "push", message: "Web Push (keys kept in the database); \(apns)")
    }

    static func secretKey(_ config: PlazaConfig) -> Line {
        guard let key = config.accounts.secrets.current else {
            return Line(
                level: .warning, subject: "secret key",
                message:
                    "PLAZA_SECRET_KEY(_FILE) is not set: two-factor secrets are stored readable in the database and its backups (plaza secrets new-key, then plaza secrets rotate)"
            )
        }
        return Line(level: .ok, subject: "secret key", message: "two-factor secrets are sealed (key \(key.id))")
    }

    static func ffmpeg(_ config: PlazaConfig, logger: Logger) -> Line {
        guard
            VideoPipeline.make(config.video, logger: Logger(label: "check", factory: { _ in SwiftLogNoOpLogHandler() }))
                != nil
        else {
            return Line(
                level: .warning, subject: "ffmpeg",
                message:
                    "ffmpeg or ffprobe not found: video uploads get 415 (install ffmpeg, or set PLAZA_FFMPEG and PLAZA_FFPROBE)"
            )
        }
        return Line(
            level: .ok, subject: "ffmpeg",
            message: "\(config.video.ffmpeg ?? ChildProcess.which("ffmpeg") ?? "ffmpeg") takes videos")
    }

    static func libvips() -> Line {
        if let problem = ImagePipeline.unavailable {
            return Line(
                level: .error, subject: "libvips",
                message: "images cannot be processed (uploads get 503 images_unavailable): \(problem)")
        }
        return Line(level: .ok, subject: "libvips", message: "images can be processed")
    }
}
