import CSQLiteShim
import Foundation
import VaporCSQLite

/// One SQLite connection with a cache of prepared statements, run on the calling thread.
///
/// SQLite work here is CPU-bound and takes microseconds per statement, so it runs inline
/// instead of being handed to a thread pool: with sqlite-nio's hop to its thread pool and
/// re-preparing each statement, perf put ~35% of a feed request in futex/scheduling and
/// 13–20% in sqlite3Prepare. The driver's `ResourcePool` gives each handle to one task at a
/// time, which is what SQLite's multi-thread mode (`NOMUTEX`) asks for.
final class SQLiteHandle: @unchecked Sendable {
    // @unchecked: the handle and its statement cache are only touched by the task that has
    // checked this connection out of its `ResourcePool`, one at a time; the SQLite driver's
    // checkpointer handle, in no pool, only by the one thread of its own thread pool.
    private let db: OpaquePointer
    private var statements: [String: Statement] = [:]
    private static let cacheLimit = 256

    private final class Statement {
        let raw: OpaquePointer
        let columns: SQLiteColumns
        init(raw: OpaquePointer, columns: SQLiteColumns) {
            self.raw = raw
            self.columns = columns
        }
    }

    init(path: String) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw SQLiteFailure(code: status, message: "\(message) (\(path))")
        }
        db = handle
        sqlite_nio_sqlite3_extended_result_codes(db, 1)
        // Cached statements must stay cached: without this, binding a new LIMIT or a value the
        // planner looked at marks the statement for re-preparing on its next step.
        try check(plaza_sqlite_enable_qpsg(UnsafeMutableRawPointer(db)))
        try check(plaza_sqlite_register_functions(UnsafeMutableRawPointer(db)))
        try check(plaza_sqlite_register_search_text(UnsafeMutableRawPointer(db), searchTextFunction))
    }

    deinit {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement.raw) }
        sqlite_nio_sqlite3_close_v2(db)
    }

    /// Copies the whole database into a new file at `path` with SQLite's online backup API, in
    /// one step: one read transaction, so the copy is the database as of one moment, while
    /// writers on other connections go on (WAL mode).
    func backup(to path: String) throws {
        let destination = try SQLiteHandle(path: path)
        guard let backup = sqlite_nio_sqlite3_backup_init(destination.db, "main", db, "main") else {
            throw destination.failure(sqlite_nio_sqlite3_errcode(destination.db))
        }
        let stepped = sqlite_nio_sqlite3_backup_step(backup, -1)
        let finished = sqlite_nio_sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw failure(stepped) }
        try destination.check(finished)
    }

    /// False inside a transaction. SQLite may roll a whole transaction back by itself on some
    /// errors (IOERR, FULL, NOMEM, BUSY); this is how a caller finds out.
    var isAutocommit: Bool { sqlite_nio_sqlite3_get_autocommit(db) != 0 }

    /// Runs one statement and returns its rows.
    func rows(_ sql: String, _ binds: [BindValue] = []) throws -> [Row] {
        let statement = try prepared(sql)
        let raw = statement.raw
        defer {
            sqlite_nio_sqlite3_reset(raw)
            sqlite_nio_sqlite3_clear_bindings(raw)
        }
        for (offset, value) in binds.enumerated() {
            try check(bind(value, at: Int32(offset + 1), in: raw))
        }
        var rows: [Row] = []
        let count = Int32(statement.columns.names.count)
        while true {
            let status = sqlite_nio_sqlite3_step(raw)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw failure(status) }
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(count))
            for column in 0..<count { values.append(value(of: raw, column: column)) }
            rows.append(Row(.sqlite(statement.columns, values)))
        }
    }

    /// Runs SQL text that may hold several statements and takes no binds (pragmas, DDL).
    func execute(script sql: String) throws {
        try check(sqlite_nio_sqlite3_exec(db, sql, nil, nil, nil))
    }

    /// The statement for `sql` (an `SQL`'s text, with bind markers), prepared on first use.
    private func prepared(_ sql: String) throws -> Statement {
        if let statement = statements[sql] { return statement }
        var raw: OpaquePointer?
        let text = SQL.placeholders(in: sql) { _ in "?" }
        let status = sqlite_nio_sqlite3_prepare_v3(db, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else { throw failure(status) }
        let count = sqlite_nio_sqlite3_column_count(raw)
        let names = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(raw, $0)) }
        let statement = Statement(raw: raw, columns: SQLiteColumns(names: names))
        if statements.count >= Self.cacheLimit {
            // A bounded set of queries comes from the stores; a full cache means IN-lists of many
            // lengths, so start over rather than keep bookkeeping for an LRU.
            for old in statements.values { sqlite_nio_sqlite3_finalize(old.raw) }
            statements.removeAll(keepingCapacity: true)
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: BindValue, at index: Int32, in statement: OpaquePointer) -> Int32 {
        switch value {
        case .null: return sqlite_nio_sqlite3_bind_null(statement, index)
        case .integer(let v): return sqlite_nio_sqlite3_bind_int64(statement, index, v)
        case .bool(let v): return sqlite_nio_sqlite3_bind_int64(statement, index, v ? 1 : 0)
        case .real(let v): return sqlite_nio_sqlite3_bind_double(statement, index, v)
        case .text(let v):
            var v = v
            return v.withUTF8 { bytes in
                guard let base = bytes.baseAddress else {
                    return sqlite_nio_sqlite3_bind_text(statement, index, "", 0, Self.transient)
                }
                return sqlite_nio_sqlite3_bind_text(
                    statement, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                    Self.transient)
            }
        }
    }

    private func value(of statement: OpaquePointer, column: Int32) -> SQLiteValue {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite_nio_sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .text("") }
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            guard let blob = sqlite_nio_sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default: return .null
        }
    }

    /// SQLite copies text and blobs bound with this destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func check(_ status: Int32) throws {
        guard status == SQLITE_OK else { throw failure(status) }
    }

    private func failure(_ status: Int32) -> SQLiteFailure {
        SQLiteFailure(
            code: sqlite_nio_sqlite3_extended_errcode(db), message: String(cString: sqlite_nio_sqlite3_errmsg(db)))
    }
}

/// A value read from SQLite (binds go in as `BindValue`).
enum SQLiteValue: Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// The column names of a statement's rows, shared by all of them.
final class SQLiteColumns: Sendable {
    let names: [String]
    private let index: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        // The first of two equal names wins, as in SQLite's own lookups.
        for (offset, name) in names.enumerated().reversed() { index[name] = offset }
        self.index = index
    }

    func offset(of name: String) -> Int? { index[name] }
}

/// An error SQLite reported, with its extended result code.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }

    // Extended result codes are C macros Swift does not import: SQLITE_CONSTRAINT | (n << 8).
    var isUniqueViolation: Bool { code == SQLITE_CONSTRAINT | (8 << 8) || code == SQLITE_CONSTRAINT | (6 << 8) }
}

/// `plaza_search_text(text)` for SQLite: `SearchFolding.indexText` in a malloc'd buffer (SQLite
/// frees it). Bytes that are not UTF-8 are read as U+FFFD.
private let searchTextFunction: plaza_text_function = { text, length, outLength in
    let input =
        text.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(max(length, 0))), as: UTF8.self) } ?? ""
    let output = SearchFolding.indexText(input).utf8
    guard let outLength, output.count < Int32.max, let buffer = malloc(max(output.count, 1)) else { return nil }
    let bytes = buffer.bindMemory(to: UInt8.self, capacity: max(output.count, 1))
    _ = UnsafeMutableBufferPointer(start: bytes, count: output.count).initialize(from: output)
    outLength.pointee = Int32(output.count)
    return UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: CChar.self)
}
