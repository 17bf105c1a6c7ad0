import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit

/// PostgreSQL through postgres-nio's `PostgresClient` pool.
final class PostgresDriver: DatabaseDriver {
    let kind = DatabaseKind.postgres
    let client: PostgresClient
    private let logger: Logger

    init(url: String, poolSize: Int, logger: Logger) throws {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw ConfigurationError("The database URL is not a valid postgres:// URL.")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let sslMode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable"
        var configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: components.user ?? "postgres",
            password: components.password,
            database: database.isEmpty ? nil : database,
            tls: sslMode == "disable" ? .disable : .prefer(.makeClientConfiguration())
        )
        configuration.options.maximumConnections = max(2, poolSize)
        configuration.options.minimumConnections = 0
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await body(Connection(postgres: connection, logger: self.logger))
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await body(Connection(postgres: connection, logger: self.logger))
            }
        } catch let error as PostgresTransactionError {
            // Surface what went wrong (a PlazaError from the body, a constraint violation at commit).
            throw error.closureError ?? error.commitError ?? error.beginError ?? error
        }
    }

    func write(_ statement: SQLQueryString) async throws -> [Row] {
        try await client.withConnection { connection in
            try await Connection(postgres: connection, logger: self.logger).rows(statement)
        }
    }

    func run() async throws {
        await client.run()
    }

    func listen(channel: String, signal: EventSignal) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                signal.poke()
                for try await _ in notifications { signal.poke() }
            }
        }
    }
}

struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
