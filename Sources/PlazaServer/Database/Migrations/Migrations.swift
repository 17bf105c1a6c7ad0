import Logging
import PlazaAPI

/// One numbered, forward-only schema change. `sql` uses the placeholders of `Dialect.ddl`.
struct Migration: Sendable {
    let version: Int
    let name: String
    let statements: [String]
    /// Counts kept by the database itself, after the statements run.
    var counters: [Counter] = []
    /// Statements for one database only (full-text search, triggers), run after the others.
    var sqlite: [String] = []
    var postgres: [String] = []
    /// Work that SQL alone cannot do (rewriting copies row by row), run after the statements in
    /// the migration's transaction.
    var code: (@Sendable (Connection) async throws -> Void)? = nil

    func statements(for dialect: Dialect) -> [String] {
        statements.map(dialect.ddl) + counters.flatMap(dialect.triggers) + (dialect.kind == .sqlite ? sqlite : postgres)
    }
}

/// `target.column` counts the rows of `table` whose `key` is the target's id, kept up to date
/// by triggers on insert and delete (including cascades), so no code path can forget it.
struct Counter: Sendable {
    let table: String
    let key: String
    let target: String
    let column: String
}

enum Migrations {
    /// Every migration, in order. Append; never edit one that has shipped.
    static let all: [Migration] = [
        Migration001.migration,
        Migration002.migration,
        Migration003.migration,
        Migration004.migration,
        Migration005.migration,
        Migration006.migration,
        Migration007.migration,
        Migration008.migration,
        Migration009.migration,
        Migration010.migration,
        Migration011.migration,
        Migration012.migration,
        Migration013.migration,
        Migration014.migration,
        Migration015.migration,
        Migration016.migration,
        Migration017.migration,
        Migration018.migration,
        Migration019.migration,
        Migration020.migration,
        Migration021.migration,
        Migration022.migration,
        Migration023.migration,
        Migration024.migration,
        Migration025.migration,
        Migration026.migration,
        Migration027.migration,
        Migration028.migration,
        Migration029.migration,
        Migration030.migration,
        Migration031.migration,
        Migration032.migration,
        Migration033.migration,
        Migration034.migration,
        Migration036.migration,
        Migration037.migration,
        Migration038.migration,
        Migration039.migration,
        Migration040.migration,
    ]

    /// The schema this binary leaves a database at.
    static var latest: Int { all.last?.version ?? 0 }

    /// Applies the migrations that the database has not seen, each in its own transaction,
    /// and records them in `plaza_migrations`, and this release in `plaza_releases`. Safe to run
    /// from several servers at once. A database a newer binary migrated is left alone
    /// (`SchemaTooNew`): this binary does not know its tables.
    @discardableResult
    static func run(on database: Database, logger: Logger) async throws -> [Int] {
        let dialect = database.dialect
        var applied: [Int] = []
        for migration in all {
            let didApply = try await database.write { db in
                try await lockAndCheck(db, dialect: dialect)
                let seen = try await db.first(
                    "SELECT version FROM plaza_migrations WHERE version = \(bind: migration.version)")
                if seen != nil { return false }
                for statement in migration.statements(for: dialect) {
                    try await db.exec(SQL(statement))
                }
                try await migration.code?(db)
                try await db.exec(
                    "INSERT INTO plaza_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), \(bind: Timestamp.now.milliseconds))"
                )
                return true
            }
            if didApply {
                logger.info("Applied migration \(migration.version) \(migration.name)")
                applied.append(migration.version)
            }
        }
        try await database.write { db in
            try await db.exec(
                "INSERT INTO plaza_releases (release, schema_version, first_run_at) VALUES (\(bind: PlazaVersion.number), \(bind: latest), \(bind: Timestamp.now.milliseconds)) ON CONFLICT (release) DO NOTHING"
            )
        }
        return applied
    }

    /// What `run` would apply, without applying it (`plaza migrate --check`).
    static func pending(on database: Database) async throws -> Status {
        try await database.write { db in
            let schema = try await lockAndCheck(db, dialect: database.dialect)
            let seen = Set(
                try await db.rows("SELECT version FROM plaza_migrations").map {
                    try $0.decode(column: "version", as: Int64.self)
                })
            return Status(
                schema: schema, release: schema >= 22 ? try await lastRelease(db) : nil,
                pending: all.filter { !seen.contains(Int64($0.version)) })
        }
    }

    struct Status {
        /// The newest migration applied; 0 for a new database.
        let schema: Int
        /// The newest release that ran on it, when one recorded itself.
        let release: String?
        let pending: [Migration]
    }

    /// Takes PostgreSQL's migration lock (released at commit), makes the bookkeeping table, and
    /// refuses a database a newer binary migrated. Returns its schema version.
    @discardableResult
    private static func lockAndCheck(_ db: Connection, dialect: Dialect) async throws -> Int {
        if dialect.kind == .postgres {
            // Serialises concurrent start-ups, the bookkeeping table's creation too; released at commit.
            try await db.exec("SELECT pg_advisory_xact_lock(7215001)")
        }
        try await db.exec(
            "CREATE TABLE IF NOT EXISTS plaza_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
        )
        let newest = try await db.first("SELECT MAX(version) AS newest FROM plaza_migrations")
        let schema = Int(try newest?.decode(column: "newest", as: Int64?.self) ?? 0)
        if schema > latest {
            throw SchemaTooNew(schema: schema, release: try await lastRelease(db))
        }
        return schema
    }

    private static func lastRelease(_ db: Connection) async throws -> String? {
        try await db.first(
            "SELECT release FROM plaza_releases ORDER BY schema_version DESC, first_run_at DESC LIMIT 1"
        )?.decode(column: "release", as: String.self)
    }
}

/// A database migrated by a newer Plaza than this binary: starting would run code that does not
/// know its tables, so nothing starts (docs/upgrading.md, "Going back").
public struct SchemaTooNew: Error, CustomStringConvertible {
    let schema: Int
    let release: String?

    public var description: String {
        let newer = release.map { "Plaza \($0)" } ?? "a newer Plaza"
        return
            "The database was migrated by \(newer) (schema \(schema)); this binary, Plaza \(PlazaVersion.number), knows schema \(Migrations.latest) at most. Run \(newer) or later, or restore the backup made before the upgrade (docs/upgrading.md)."
    }
}
