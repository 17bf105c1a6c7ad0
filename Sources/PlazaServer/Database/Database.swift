import Logging
import ServiceLifecycle

public enum DatabaseKind: String, Sendable {
    case sqlite
    case postgres
}

/// How a database is reached: the one place that knows whether it is SQLite or PostgreSQL.
protocol DatabaseDriver: Sendable {
    var kind: DatabaseKind { get }
    /// Runs `body` on a connection for reading.
    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T
    /// Runs `body` in a write transaction: all of it or none of it.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T
    /// Runs one statement, atomic on its own, on the write path (no explicit transaction).
    func write(_ statement: SQL) async throws -> [Row]
    /// Keeps the connections alive until graceful shutdown, then closes them.
    func run() async throws
    /// Calls `handler` with each notification's payload on `channel`, and with nil once when
    /// listening starts; returns only when the connection fails or the task is cancelled.
    func listen(channel: String, _ handler: @escaping @Sendable (String?) -> Void) async throws
}

/// The database every store uses. Reads go to a pool; writes run in one transaction each.
public struct Database: Sendable, Service {
    let driver: any DatabaseDriver
    /// Calls under way and holding connections, for the metrics (nil without them).
    let usage: DatabaseUsage?
    public var kind: DatabaseKind { driver.kind }
    /// The server's metrics, for the stores that count what they do (nil for tools, tests, and
    /// a server without a metrics port).
    var metrics: PlazaMetrics? { usage?.metrics }
    var dialect: Dialect { Dialect(kind: driver.kind) }

    init(driver: any DatabaseDriver, metrics: PlazaMetrics? = nil) {
        self.driver = driver
        usage = metrics.map(DatabaseUsage.init(metrics:))
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        guard let usage else { return try await driver.read(body) }
        let start = usage.start(.read)
        defer { usage.end(.read) }
        return try await driver.read { [usage] connection in
            usage.hold(.read, since: start)
            defer { usage.release(.read) }
            return try await body(connection)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        guard let usage else { return try await driver.write(body) }
        let start = usage.start(.write)
        defer { usage.end(.write) }
        return try await driver.write { [usage] connection in
            usage.hold(.write, since: start)
            defer { usage.release(.write) }
            return try await body(connection)
        }
    }

    /// One statement on the write path, e.g. an INSERT whose counters triggers keep: cheaper
    /// than a transaction and just as atomic.
    @discardableResult
    func write(_ statement: SQL) async throws -> [Row] {
        guard let usage else { return try await driver.write(statement) }
        // Counted as holding its connection from the start: the drivers take it inside.
        let start = usage.start(.write)
        usage.hold(.write, since: start)
        defer {
            usage.release(.write)
            usage.end(.write)
        }
        return try await driver.write(statement)
    }

    public func run() async throws { try await driver.run() }

    /// PostgreSQL `LISTEN` (see `DatabaseDriver.listen`); SQLite has one server, so nothing to hear.
    func listen(channel: String, signal: EventSignal) async throws {
        try await driver.listen(channel: channel) { _ in signal.poke() }
    }

    /// PostgreSQL `LISTEN` with the payloads (nil once when listening starts: anything sent
    /// before may have been missed).
    func listen(channel: String, _ handler: @escaping @Sendable (String?) -> Void) async throws {
        try await driver.listen(channel: channel, handler)
    }

    /// Opens the database named by the configuration: SQLite in the data dir unless a
    /// `postgres://` URL is given.
    static func open(_ config: DatabaseConfig, logger: Logger, metrics: PlazaMetrics?) async throws -> Database {
        if let url = config.url, url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            let driver = try PostgresDriver(url: url, poolSize: config.poolSize, logger: logger)
            try await driver.checkReachable()
            return Database(driver: driver, metrics: metrics)
        }
        return Database(
            driver: try await SQLiteDriver.open(
                path: config.sqlitePath, readers: config.readers, synchronous: config.sqliteSynchronous,
                metrics: metrics, logger: logger),
            metrics: metrics)
    }

    /// Opens the database without metrics (command-line tools, tests).
    public static func open(_ config: DatabaseConfig, logger: Logger) async throws -> Database {
        try await open(config, logger: logger, metrics: nil)
    }

    /// Runs `body` with the database's connections alive (for CLI commands).
    public func withRunning<T: Sendable>(_ body: @Sendable (Database) async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            return try await body(self)
        }
    }
}

public struct DatabaseConfig: Sendable {
    /// `postgres://user:pass@host:port/db` switches to PostgreSQL.
    public var url: String?
    public var sqlitePath: String
    public var readers: Int
    public var poolSize: Int
    /// `NORMAL` (default, durable across app crashes, may lose the last commits on power loss) or `FULL`.
    public var sqliteSynchronous: String

    public init(
        url: String?, sqlitePath: String, readers: Int = 4, poolSize: Int = 16, sqliteSynchronous: String = "NORMAL"
    ) {
        self.url = url
        self.sqlitePath = sqlitePath
        self.readers = readers
        self.poolSize = poolSize
        self.sqliteSynchronous = sqliteSynchronous
    }
}
