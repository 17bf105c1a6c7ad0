import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// A database connection as the stores see it. Statements are written once as `SQL` (binds
/// apart from the text, placeholders in the database's own form) and run straight on the
/// driver; rows are read by column without going through `Codable` decoders, which dominated the cost
/// of a feed page. A connection is lent to one task at a time: never use it from concurrent
/// child tasks (`async let`, task groups).
struct Connection: Sendable {
    enum Backend: Sendable {
        case sqlite(SQLiteHandle)
        case postgres(PostgresConnection)
    }

    let backend: Backend
    let logger: Logger
    /// Inside `EventLog.write`: the events the transaction appends when its body has run.
    var events: EventLog.Pending?

    init(sqlite handle: SQLiteHandle, logger: Logger) {
        backend = .sqlite(handle)
        self.logger = logger
    }

    init(postgres connection: PostgresConnection, logger: Logger) {
        backend = .postgres(connection)
        self.logger = logger
    }

    var kind: DatabaseKind {
        switch backend {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    var dialect: Dialect { Dialect(kind: kind) }

    /// SQLite: whether a transaction is open (PostgreSQL's driver tracks its own).
    var isInTransaction: Bool {
        switch backend {
        case .sqlite(let handle): !handle.isAutocommit
        case .postgres: true
        }
    }

    func rows(_ query: SQL) async throws -> [Row] {
        switch backend {
        case .sqlite(let handle):
            return try handle.rows(query.text, query.binds)
        case .postgres(let connection):
            let sql = SQL.placeholders(in: query.text) { "$\($0)" }
            var bindings = PostgresBindings(capacity: query.binds.count)
            var types = ""
            for bind in query.binds { types.append(Self.append(bind, to: &bindings)) }
            guard let name = PreparedStatements.shared.name(sql: sql, types: types) else {
                return try await Self.collect(
                    connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
            }
            do {
                return try await PreparedStatement.$current.withValue((name, sql)) {
                    try await Self.collect(connection.execute(PreparedStatement(bindings: bindings), logger: logger))
                }
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == PreparedStatements.stalePlan {
                // The schema changed what the statement returns; its next use prepares it anew.
                PreparedStatements.shared.retire(name)
                throw error
            }
        }
    }

    private static func collect<Rows: AsyncSequence>(_ sequence: Rows) async throws -> [Row]
    where Rows.Element == PostgresRow {
        var rows: [Row] = []
        for try await row in sequence { rows.append(Row(.postgres(row.makeRandomAccess()))) }
        return rows
    }

    func first(_ query: SQL) async throws -> Row? {
        try await rows(query).first
    }

    func exec(_ query: SQL) async throws {
        _ = try await rows(query)
    }

    // MARK: binds

    /// Appends the value and returns a letter for its type (a statement is prepared once per
    /// SQL text and bind types: a NULL leaves its type to the server).
    static func append(_ value: BindValue, to bindings: inout PostgresBindings) -> Character {
        switch value {
        case .null:
            bindings.appendNull()
            return "n"
        case .integer(let v):
            bindings.append(v)
            return "i"
        case .text(let v):
            bindings.append(v)
            return "s"
        case .real(let v):
            bindings.append(v)
            return "d"
        case .bool(let v):
            bindings.append(v)
            return "b"
        }
    }
}

/// A statement PostgreSQL parses and plans once per connection: postgres-nio prepares it on a
/// connection's first use of its name and then only binds and executes it. Its name and SQL are
/// the task's `current` (postgres-nio reads them as static properties when the statement is sent).
private struct PreparedStatement: PostgresPreparedStatement {
    @TaskLocal static var current: (name: String, sql: String) = ("", "")
    static var name: String { current.name }
    static var sql: String { current.sql }
    let bindings: PostgresBindings
    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// Names the statements kept prepared on every connection, by SQL text and bind types. SQL that
/// varies with its input (an `IN` list's length) makes a name per shape; past `limit` names,
/// statements run unnamed (parsed each time) so no connection keeps an unbounded set.
///
/// A statement prepared before a schema change that alters the columns it returns fails with
/// `cached plan must not change result type` (SQLSTATE 0A000); it is then retired, and its next
/// use prepares it again under a new name.
final class PreparedStatements: Sendable {
    static let shared = PreparedStatements(limit: 1_000)
    static let stalePlan = "0A000"
    let limit: Int
    private let state = NIOLockedValueBox<(names: [String: String], made: Int)>(([:], 0))

    init(limit: Int) { self.limit = limit }

    func name(sql: String, types: String) -> String? {
        let key = sql + "\u{0}" + types
        return state.withLockedValue { state in
            if let name = state.names[key] { return name }
            guard state.names.count < limit else { return nil }
            state.made += 1
            let name = "plaza_\(state.made)"
            state.names[key] = name
            return name
        }
    }

    /// Forgets every name, so the next statements are named again (and prepared anew) up to
    /// `limit`. Names are never reused, so no connection mistakes an old statement for a new one.
    func forgetAll() {
        state.withLockedValue { $0.names = [:] }
    }

    func retire(_ name: String) {
        state.withLockedValue { state in
            if let key = state.names.first(where: { $0.value == name })?.key { state.names[key] = nil }
        }
    }
}

/// One result row; `decode(column:as:)` reads a column as a Swift value.
struct Row: Sendable {
    enum Storage: Sendable {
        case sqlite(SQLiteColumns, [SQLiteValue])
        case postgres(PostgresRandomAccessRow)
    }

    let storage: Storage
    init(_ storage: Storage) { self.storage = storage }

    struct ColumnError: Error, CustomStringConvertible {
        let column: String
        let type: Any.Type
        var description: String { "Column \(column) is missing or is not a \(type)" }
    }

    /// Whether the row has a column of this name.
    func contains(column: String) -> Bool {
        switch storage {
        case .sqlite(let columns, _): columns.offset(of: column) != nil
        case .postgres(let row): row.contains(column)
        }
    }

    func decode<T: ColumnValue>(column: String, as type: T.Type = T.self) throws -> T {
        switch storage {
        case .sqlite(let columns, let values):
            guard let offset = columns.offset(of: column), let value = T(sqlite: values[offset]) else {
                throw ColumnError(column: column, type: T.self)
            }
            return value
        case .postgres(let row):
            guard row.contains(column) else { throw ColumnError(column: column, type: T.self) }
            return try row[column].decode(T.self)
        }
    }
}

/// A Swift type a column can be read as.
protocol ColumnValue: PostgresDecodable {
    /// nil when the SQLite value cannot be this type.
    init?(sqlite data: SQLiteValue)
}

extension Int64: ColumnValue {
    init?(sqlite data: SQLiteValue) {
        guard case .integer(let v) = data else { return nil }
        self = v
    }
}

extension Int: ColumnValue {
    init?(sqlite data: SQLiteValue) {
        guard case .integer(let v) = data else { return nil }
        self = Int(v)
    }
}

extension Double: ColumnValue {
    init?(sqlite data: SQLiteValue) {
        switch data {
        case .real(let v): self = v
        case .integer(let v): self = Double(v)
        default: return nil
        }
    }
}

extension String: ColumnValue {
    init?(sqlite data: SQLiteValue) {
        guard case .text(let v) = data else { return nil }
        self = v
    }
}

extension Bool: ColumnValue {
    init?(sqlite data: SQLiteValue) {
        guard case .integer(let v) = data else { return nil }
        self = v != 0
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue, Wrapped == Wrapped._DecodableType {
    init?(sqlite data: SQLiteValue) {
        if case .null = data {
            self = .none
        } else if let value = Wrapped(sqlite: data) {
            self = .some(value)
        } else {
            return nil
        }
    }
}
