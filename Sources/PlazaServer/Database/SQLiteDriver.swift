import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import ServiceLifecycle

/// SQLite in WAL mode: one writer connection that takes every write transaction in turn
/// (so load never surfaces SQLITE_BUSY), and a small set of read-only connections.
final class SQLiteDriver: DatabaseDriver {
    let kind = DatabaseKind.sqlite
    private let writer: Connection
    private let readers: [Connection]
    private let nextReader = NIOLockedValueBox(0)
    private let writeTurn = AsyncTurnstile()

    private let connections: [SQLiteConnection]

    private init(writer: SQLiteConnection, readers: [SQLiteConnection], logger: Logger) {
        self.writer = Connection(sqlite: writer, logger: logger)
        self.readers = readers.map { Connection(sqlite: $0, logger: logger) }
        self.connections = [writer] + readers
    }

    static func open(path: String, readers readerCount: Int, synchronous: String, logger: Logger) async throws -> SQLiteDriver {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let sync = synchronous.uppercased() == "FULL" ? "FULL" : "NORMAL"
        func connect(readOnly: Bool) async throws -> SQLiteConnection {
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            let db = connection.sql()
            // busy_timeout first: another process (plaza migrate) may hold the write lock.
            try await db.raw("PRAGMA busy_timeout = 10000").run()
            if !readOnly { try await db.raw("PRAGMA journal_mode = WAL").run() }
            try await db.raw("PRAGMA foreign_keys = ON").run()
            try await db.raw(SQLQueryString("PRAGMA synchronous = \(unsafeRaw: sync)")).run()
            try await db.raw("PRAGMA temp_store = MEMORY").run()
            // 8 MB of page cache per connection; the OS file cache holds the rest. No mmap: mapped
            // pages count as the server's resident memory and measured no faster here.
            try await db.raw("PRAGMA cache_size = -8000").run()
            if readOnly { try await db.raw("PRAGMA query_only = ON").run() }
            return connection
        }
        let writer = try await connect(readOnly: false)
        var readers: [SQLiteConnection] = []
        for _ in 0..<max(1, readerCount) { readers.append(try await connect(readOnly: true)) }
        return SQLiteDriver(writer: writer, readers: readers, logger: logger)
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        let index = nextReader.withLockedValue { value in
            value = (value + 1) % readers.count
            return value
        }
        return try await body(readers[index])
    }

    func write<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await writeTurn.withTurn {
            try await writer.exec("BEGIN IMMEDIATE")
            do {
                let result = try await body(writer)
                try await writer.exec("COMMIT")
                return result
            } catch {
                try? await writer.exec("ROLLBACK")
                throw error
            }
        }
    }

    func write(_ statement: SQLQueryString) async throws -> [Row] {
        try await writeTurn.withTurn { try await writer.rows(statement) }
    }

    func run() async throws {
        try? await gracefulShutdown()
        // Closing must finish even when shutdown came as cancellation, so it runs in its own task.
        await Task {
            await writeTurn.withTurn {
                try? await writer.exec("PRAGMA optimize")
                for connection in connections { try? await connection.close() }
            }
        }.value
    }
}

/// Lets async tasks take turns, first come first served.
actor AsyncTurnstile {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func withTurn<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
