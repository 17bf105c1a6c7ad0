import PostgresNIO

/// The SQL that differs between SQLite and PostgreSQL, in one place.
struct Dialect: Sendable {
    let kind: DatabaseKind

    init(kind: DatabaseKind) { self.kind = kind }

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
        let increment =
            "UPDATE \(counter.target) SET \(counter.column) = \(counter.column) + 1 WHERE id = NEW.\(counter.key);"
        let decrement =
            "UPDATE \(counter.target) SET \(counter.column) = \(counter.column) - 1 WHERE id = OLD.\(counter.key);"
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

    // MARK: locks and notifications (SQLite has one writer: none of these are needed there)

    /// A row-locking clause for a SELECT whose rows the transaction will change or delete
    /// (`FOR UPDATE`), or whose non-key columns it will change (`FOR NO KEY UPDATE`, which does
    /// not block foreign-key checks against the rows), optionally `OF` one table alias; nil
    /// where writes need no row locks.
    func rowLock(_ strength: RowLock, of alias: String? = nil, skipLocked: Bool = false) -> SQL? {
        guard kind == .postgres else { return nil }
        var clause =
            switch strength {
            case .update: " FOR UPDATE"
            case .noKeyUpdate: " FOR NO KEY UPDATE"
            case .keyShare: " FOR KEY SHARE"
            }
        if let alias { clause += " OF \(alias)" }
        if skipLocked { clause += " SKIP LOCKED" }
        return SQL(clause)
    }

    /// `keyShare`: only keeps the rows from being deleted (or their keys changed) meanwhile.
    enum RowLock: Sendable { case update, noKeyUpdate, keyShare }

    /// A call that takes transaction-scoped advisory lock `key` (`shared`: in share mode, which
    /// only an exclusive holder or waiter blocks), to use as a select-list item, or nil.
    func advisoryLock(_ key: Int, shared: Bool) -> SQL? {
        guard kind == .postgres else { return nil }
        return shared ? "pg_advisory_xact_lock_shared(\(literal: key))" : "pg_advisory_xact_lock(\(literal: key))"
    }

    /// A statement that announces `payload` on `channel` to the other app servers at commit, or nil.
    func notify(_ channel: String, _ payload: String) -> SQL? {
        kind == .postgres ? "SELECT pg_notify(\(literal: channel), \(bind: payload))" : nil
    }

    /// The plan of a query as text lines, for tests that forbid full scans.
    func explain(_ query: SQL, on db: Connection) async throws -> [String] {
        switch kind {
        case .sqlite:
            let rows = try await db.rows(SQL("EXPLAIN QUERY PLAN ") + query)
            return try rows.map { try $0.decode(column: "detail", as: String.self) }
        case .postgres:
            let rows = try await db.rows(SQL("EXPLAIN ") + query)
            return try rows.map { try $0.decode(column: "QUERY PLAN", as: String.self) }
        }
    }
}

extension Dialect {
    /// True for a unique-constraint violation from either database.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        if let error = error as? SQLiteFailure { return error.isUniqueViolation }
        if let error = error as? PSQLError {
            return error.serverInfo?[.sqlState] == "23505"
        }
        return false
    }
}
