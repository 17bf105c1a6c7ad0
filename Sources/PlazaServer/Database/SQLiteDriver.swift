import Foundation
import Logging
import SQLKit
import ServiceLifecycle

/// SQLite in WAL mode: one writer connection that takes every write transaction in turn
/// (so load never surfaces SQLITE_BUSY), and a small set of read-only connections.
final class SQLiteDriver: DatabaseDriver {
    let kind = DatabaseKind.sqlite
    private let writer: ResourcePool<Connection>
    private let readers: ResourcePool<Connection>

    private init(writer: Connection, readers: [Connection]) {
        self.writer = ResourcePool([writer])
        self.readers = ResourcePool(readers)
    }

    static func open(path: String, readers readerCount: Int, synchronous: String, logger: Logger) async throws -> SQLiteDriver {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let sync = synchronous.uppercased() == "FULL" ? "FULL" : "NORMAL"
        func connect(readOnly: Bool) throws -> Connection {
            let handle = try SQLiteHandle(path: path)
            // busy_timeout first: another process (plaza migrate) may hold the write lock.
            try handle.execute(script: "PRAGMA busy_timeout = 10000")
            if !readOnly { try handle.execute(script: "PRAGMA journal_mode = WAL") }
            // 8 MB of page cache per connection; the OS file cache holds the rest. No mmap: mapped
            // pages count as the server's resident memory and measured no faster here.
            try handle.execute(script: """
                PRAGMA foreign_keys = ON;
                PRAGMA synchronous = \(sync);
                PRAGMA temp_store = MEMORY;
                PRAGMA cache_size = -8000;
                """)
            // Readers open read-write and refuse writes themselves: a read-only open cannot
            // recover the WAL index when it is the first to open the file after a crash.
            if readOnly { try handle.execute(script: "PRAGMA query_only = ON") }
            return Connection(sqlite: handle, logger: logger)
        }
        // The writer first: it creates the file and switches it to WAL before readers open it.
        let writer = try connect(readOnly: false)
        let readers = try (0..<max(1, readerCount)).map { _ in try connect(readOnly: true) }
        return SQLiteDriver(writer: writer, readers: readers)
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await readers.withResource(body)
    }

    func write<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await writer.withResource { writer in
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
        try await writer.withResource { try await $0.rows(statement) }
    }

    /// One process owns a SQLite database, so there is no other server to hear from.
    func listen(channel: String, signal: EventSignal) async throws {}

    func run() async throws {
        try? await gracefulShutdown()
        // Finishing must not be cut short when shutdown came as cancellation, so it runs in its
        // own task; the handles close when the driver is released.
        await Task {
            await writer.withResource { writer in try? await writer.exec("PRAGMA optimize") }
        }.value
    }
}
