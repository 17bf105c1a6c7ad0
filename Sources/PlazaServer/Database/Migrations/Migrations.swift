import Logging
import PlazaAPI
import SQLKit

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
    ]

    /// Applies the migrations that the database has not seen, each in its own transaction,
    /// and records them in `plaza_migrations`. Safe to run from several servers at once.
    @discardableResult
    static func run(on database: Database, logger: Logger) async throws -> [Int] {
        let dialect = database.dialect
        var applied: [Int] = []
        for migration in all {
            let didApply = try await database.write { db in
                if dialect.kind == .postgres {
                    // Serialises concurrent start-ups, the bookkeeping table's creation too; released at commit.
                    try await db.exec("SELECT pg_advisory_xact_lock(7215001)")
                }
                try await db.exec(
                    "CREATE TABLE IF NOT EXISTS plaza_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
                )
                let seen = try await db.first(
                    "SELECT version FROM plaza_migrations WHERE version = \(bind: migration.version)")
                if seen != nil { return false }
                for statement in migration.statements(for: dialect) {
                    try await db.exec(SQLQueryString(statement))
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
        return applied
    }
}
