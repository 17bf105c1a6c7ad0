import Foundation
import Logging
import PlazaAPI

/// The operator commands behind `plaza migrate`, `plaza user create` and `plaza seed`.
public enum Admin {
    /// Applies pending migrations; returns the versions applied.
    public static func migrate(config: PlazaConfig, logger: Logger) async throws -> [Int] {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in try await Migrations.run(on: db, logger: logger) }
    }

    /// Which migrations `migrate` would apply, and what the database is at now.
    public static func migrationStatus(config: PlazaConfig, logger: Logger) async throws -> MigrationStatus {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            let status = try await Migrations.pending(on: db)
            return MigrationStatus(
                schema: status.schema, release: status.release,
                pending: status.pending.map { (version: $0.version, name: $0.name) })
        }
    }

    /// Creates an account; 409-style errors come back as `PlazaError`.
    public static func createUser(
        config: PlazaConfig, username: String, email: String, password: String, displayName: String?, admin: Bool,
        logger: Logger
    ) async throws -> String {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            let services = try AppServices(config: config, db: db)
            let name = try Validate.username(username)
            try Validate.password(password)
            let id = try await services.accounts.createUser(
                .init(
                    username: name, email: try Validate.email(email),
                    passwordHash: try await services.passwords.hash(password),
                    displayName: try Validate.displayName(displayName) ?? name, isAdmin: admin,
                    emailVerified: true))
            return String(id)
        }
    }

    /// Gives the person named `username` (or email) `role`: administrator, moderator or member.
    /// False: no such account.
    public static func setRole(config: PlazaConfig, username: String, role: InstanceRole, logger: Logger)
        async throws -> Bool
    {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            let services = try AppServices(config: config, db: db)
            guard let account = try await services.accounts.credentials(login: username) else { return false }
            try await db.write {
                try await $0.exec(
                    "UPDATE users SET \(InstanceStore.assignment(role)) WHERE id = \(bind: account.id)")
            }
            return true
        }
    }

    /// Seals every two-factor secret anew with the current key (`plaza secrets rotate`).
    public static func resealSecrets(config: PlazaConfig, logger: Logger) async throws -> (
        resealed: Int, unreadable: Int
    ) {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            return try await TwoFactorStore(db: db, secrets: config.accounts.secrets).reseal()
        }
    }

    /// Turns two-factor sign-in off for someone who lost both their authenticator app and their
    /// recovery codes (after the operator has made sure it is them). False: no such account.
    public static func disableTwoFactor(config: PlazaConfig, username: String, logger: Logger) async throws -> Bool {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            let services = try AppServices(config: config, db: db)
            guard let account = try await services.accounts.credentials(login: username) else { return false }
            try await TwoFactorStore(db: db, secrets: config.accounts.secrets).disable(userID: account.id)
            return true
        }
    }

    /// Writes the archive of the person named `user` (username or email) to `file`
    /// (`AccountExport`); nil when there is no such account.
    public static func export(config: PlazaConfig, user: String, to file: String, logger: Logger) async throws
        -> String?
    {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db -> String? in
            try await Migrations.run(on: db, logger: logger)
            let services = try AppServices(config: config, db: db)
            guard let account = try await services.accounts.credentials(login: user) else { return nil }
            // Made beside the target and moved into place: a failure leaves an existing file as it was.
            let path = (file as NSString).expandingTildeInPath
            let folder = (path as NSString).deletingLastPathComponent
            let scratch = folder.isEmpty ? "." : folder
            let partial = (scratch as NSString).appendingPathComponent(
                ".plaza-export-\(UInt64.random(in: 0...UInt64.max)).zip")
            let username = try await services.export.write(
                userID: account.id, to: partial, scratch: scratch, logger: logger)
            guard rename(partial, path) == 0 else {
                unlink(partial)
                throw ExportError(path: path, errno: errno)
            }
            return username
        }
    }

    struct ExportError: Error, CustomStringConvertible {
        let path: String
        let errno: Int32
        var description: String { "Could not write \(path): \(String(cString: strerror(errno)))" }
    }

    /// Fills the instance with the demo world; does nothing if it is already there.
    public static func seedDemo(config: PlazaConfig, logger: Logger) async throws -> DemoSeeder.Outcome {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            return try await DemoSeeder(services: AppServices(config: config, db: db), logger: logger).seed()
        }
    }

    /// Fills the instance with a crowd of `people` and `posts` (`plaza seed --large`); does
    /// nothing if it is already there. `progress` hears how far it got.
    public static func seedCrowd(
        config: PlazaConfig, logger: Logger, people: Int, posts: Int, progress: @escaping @Sendable (String) -> Void
    ) async throws -> CrowdSeeder.Outcome {
        let db = try await Database.open(config.database, logger: logger)
        return try await db.withRunning { db in
            try await Migrations.run(on: db, logger: logger)
            return try await CrowdSeeder(
                services: AppServices(config: config, db: db), logger: logger, people: people, posts: posts
            ).seed(progress: progress)
        }
    }
}

/// What `plaza migrate --check` says.
public struct MigrationStatus: Sendable {
    public let schema: Int
    public let release: String?
    public let pending: [(version: Int, name: String)]

    public var summary: String {
        let at =
            schema == 0
            ? "The database is empty"
            : "The database is at schema \(schema)\(release.map { " (last run by Plaza \($0))" } ?? "")"
        guard !pending.isEmpty else { return "\(at); Plaza \(PlazaVersion.number) has nothing to apply." }
        let lines = pending.map { "  \($0.version) \($0.name)" }
        return
            ([
                "\(at); Plaza \(PlazaVersion.number) would apply \(pending.count) migration\(pending.count == 1 ? "" : "s"):"
            ] + lines).joined(separator: "\n")
    }
}
