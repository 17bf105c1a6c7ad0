import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// PostgreSQL through postgres-nio's `PostgresClient` pool.
final class PostgresDriver: DatabaseDriver {
    let kind = DatabaseKind.postgres
    let client: PostgresClient
    /// The same server, database and credentials for one connection of its own (`checkReachable`).
    private let probe: PostgresConnection.Configuration
    private let logger: Logger

    init(url: String, poolSize: Int, logger: Logger) throws {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw ConfigurationError("The database URL is not a valid postgres:// URL.")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let query = components.queryItems ?? []
        let tls = try Self.tls(
            sslMode: query.first(where: { $0.name == "sslmode" })?.value ?? "prefer",
            rootCertificate: query.first(where: { $0.name == "sslrootcert" })?.value)
        var configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: components.user ?? "postgres",
            password: components.password,
            database: database.isEmpty ? nil : database,
            tls: tls.client
        )
        configuration.options.maximumConnections = max(2, poolSize)
        configuration.options.minimumConnections = 0
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.probe = PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password,
            database: database.isEmpty ? nil : database, tls: try tls.connection)
        self.logger = logger
    }

    /// Connects once and hangs up: a server that refuses (wrong password, no such database, no
    /// TLS under `sslmode=require`) is reported at once in its own words. The pool would retry
    /// quietly for a minute, then give up with "connectionCreationCircuitBreakerTripped".
    func checkReachable() async throws {
        let connection = try await PostgresConnection.connect(configuration: probe, id: 0, logger: logger)
        try await connection.close()
    }

    /// libpq's `sslmode` (default `prefer`): `disable` never uses TLS; `allow` and `prefer` use it
    /// when the server offers it, unverified; `require` refuses a server without TLS (unverified,
    /// as libpq does without a root certificate); `verify-ca` also checks the chain and
    /// `verify-full` the host name too, against `sslrootcert` (a PEM file) or the system's roots.
    static func tls(sslMode: String, rootCertificate: String?) throws -> TLSMode {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate { tls.trustRoots = .file(rootCertificate) }
        switch sslMode {
        case "disable":
            return .disable
        case "allow", "prefer":
            tls.certificateVerification = .none
            return .prefer(tls)
        case "require":
            // libpq verifies the chain when a root certificate is given, as verify-ca does.
            tls.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
            return .require(tls)
        case "verify-ca":
            tls.certificateVerification = .noHostnameVerification
            return .require(tls)
        case "verify-full":
            tls.certificateVerification = .fullVerification
            return .require(tls)
        default:
            throw ConfigurationError(
                "sslmode must be disable, allow, prefer, require, verify-ca or verify-full, not \(sslMode).")
        }
    }

    enum TLSMode {
        case disable
        case prefer(TLSConfiguration)
        case require(TLSConfiguration)

        var client: PostgresClient.Configuration.TLS {
            switch self {
            case .disable: .disable
            case .prefer(let configuration): .prefer(configuration)
            case .require(let configuration): .require(configuration)
            }
        }

        var connection: PostgresConnection.Configuration.TLS {
            get throws {
                switch self {
                case .disable: .disable
                case .prefer(let configuration): .prefer(try NIOSSLContext(configuration: configuration))
                case .require(let configuration): .require(try NIOSSLContext(configuration: configuration))
                }
            }
        }
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await body(Connection(postgres: connection, logger: self.logger))
        }
    }

    /// A write transaction. One that PostgreSQL ended as a deadlock victim or for a serialization
    /// failure is run again from the start, up to `attempts` times: it rolled back, and a body
    /// only touches the database, so repeating it is safe.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        try await retryingConflicts {
            do {
                return try await self.client.withTransaction(logger: self.logger) { connection in
                    try await body(Connection(postgres: connection, logger: self.logger))
                }
            } catch let error as PostgresTransactionError {
                // Surface what went wrong (a PlazaError from the body, a constraint violation at commit).
                throw error.closureError ?? error.commitError ?? error.beginError ?? error
            }
        }
    }

    func write(_ statement: SQL) async throws -> [Row] {
        try await retryingConflicts {
            try await self.client.withConnection { connection in
                try await Connection(postgres: connection, logger: self.logger).rows(statement)
            }
        }
    }

    static let attempts = 5

    private func retryingConflicts<T>(_ operation: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch let error as PSQLError where attempt < Self.attempts && Self.isConflict(error) {
                logger.debug("Retrying a write after \(DatabaseErrorText(error))")
                attempt += 1
                // A little jitter, so the two sides of a deadlock do not meet again at once.
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(10 * attempt))))
            }
        }
    }

    /// 40P01 deadlock_detected, 40001 serialization_failure.
    static func isConflict(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"
    }

    func run() async throws {
        await client.run()
    }

    func listen(channel: String, _ handler: @escaping @Sendable (String?) -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                handler(nil)
                for try await notification in notifications { handler(notification.payload) }
            }
        }
    }
}

/// What went wrong with the database, in its own words: PSQLError's description is a generic
/// "prevent accidental leakage" text, which tells an operator nothing at start-up.
public struct DatabaseErrorText: Error, CustomStringConvertible {
    let error: any Error
    init(_ error: any Error) { self.error = error }

    /// `error` as an operator should read it: a PostgreSQL error in the server's own words.
    public static func readable(_ error: any Error) -> any Error {
        error is PSQLError ? DatabaseErrorText(error) : error
    }

    public var description: String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo {
            let parts = [
                info[.severity], info[.sqlState].map { "(\($0))" }, info[.message],
                info[.detail].map { "Detail: \($0)" }, info[.hint].map { "Hint: \($0)" },
            ]
            return "PostgreSQL: " + parts.compactMap { $0 }.joined(separator: " ")
        }
        let underlying = error.underlying.map { ": \($0)" } ?? ""
        return "PostgreSQL connection: \(error.code)\(underlying)"
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
