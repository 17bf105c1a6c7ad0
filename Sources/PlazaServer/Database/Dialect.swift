import SQLKit

/// The SQL that differs between SQLite and PostgreSQL, in one place.
struct Dialect: Sendable {
    let kind: DatabaseKind

    /// Expands the placeholders used by migrations: `{id}` for a 64-bit primary key,
    /// `{sequence}` for one the database numbers (never reusing a number, even after deletes),
    /// and `{without_rowid}` for SQLite tables keyed by a composite primary key.
    func ddl(_ sql: String) -> String {
        switch kind {
        case .sqlite:
            sql.replacingOccurrences(of: "{id}", with: "INTEGER PRIMARY KEY")
                .replacingOccurrences(of: "{sequence}", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                .replacingOccurrences(of: "{without_rowid}", with: "WITHOUT ROWID")
        case .postgres:
            sql.replacingOccurrences(of: "{id}", with: "BIGINT PRIMARY KEY")
                .replacingOccurrences(of: "{sequence}", with: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
                .replacingOccurrences(of: "{without_rowid}", with: "")
        }
    }

    /// The triggers that keep a `Counter`.
    func triggers(for counter: Counter) -> [String] {
        let name = "\(counter.table)_\(counter.key)_counts"
        let increment = "UPDATE \(counter.target) SET \(counter.column) = \(counter.column) + 1 WHERE id = NEW.\(counter.key);"
        let decrement = "UPDATE \(counter.target) SET \(counter.column) = \(counter.column) - 1 WHERE id = OLD.\(counter.key);"
        switch kind {
        case .sqlite:
            return [
                "CREATE TRIGGER \(name)_insert AFTER INSERT ON \(counter.table) BEGIN \(increment) END",
                "CREATE TRIGGER \(name)_delete AFTER DELETE ON \(counter.table) BEGIN \(decrement) END",
            ]
        case .postgres:
            return [
                """
                CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF TG_OP = 'INSERT' THEN \(increment) ELSE \(decrement) END IF;
                    RETURN NULL;
                END $$
                """,
                "CREATE TRIGGER \(name) AFTER INSERT OR DELETE ON \(counter.table) FOR EACH ROW EXECUTE FUNCTION \(name)()",
            ]
        }
    }

    /// The plan of a query as text lines, for tests that forbid full scans.
    func explain(_ query: SQLQueryString, on db: Connection) async throws -> [String] {
        switch kind {
        case .sqlite:
            let rows = try await db.rows(SQLQueryString("EXPLAIN QUERY PLAN ") + query)
            return try rows.map { try $0.decode(column: "detail", as: String.self) }
        case .postgres:
            let rows = try await db.rows(SQLQueryString("EXPLAIN ") + query)
            return try rows.map { try $0.decode(column: "QUERY PLAN", as: String.self) }
        }
    }
}

import PostgresNIO

extension Dialect {
    /// True for a unique-constraint violation from either database.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? SQLiteFailure { return error.isUniqueViolation }
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState] == "23505"
        }
        return false
    }

    /// True for a foreign-key violation, e.g. a like on a post deleted a moment before.
    static func isForeignKeyViolation(_ error: any Error) -> Bool {
        if let error = error as? SQLiteFailure { return error.isForeignKeyViolation }
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] == "23503" }
        return false
    }
}
