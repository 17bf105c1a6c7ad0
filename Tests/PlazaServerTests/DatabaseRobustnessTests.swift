import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// What the database layer does when things go wrong: a transaction SQLite rolled back by
/// itself, several servers migrating one fresh database, TLS the server does not offer.
@Suite("Database: rollbacks, concurrent start-ups, TLS modes")
struct DatabaseRobustnessTests {
    /// SQLite may roll a whole transaction back by itself (IOERR, FULL, NOMEM). A write that
    /// finds its group commit's transaction gone must not let the writes after it run outside
    /// any transaction, and every caller learns what really happened to its write.
    @Test func aBatchWhoseTransactionSQLiteRolledBackReportsTrueOutcomes() async throws {
        let config = try await TestDatabase.config()
        guard config.databaseURL == nil else {
            TestDatabase.dispose(config)
            return
        }  // group commit is SQLite's
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        try await db.withRunning { db in
            let driver = try #require(db.driver as? SQLiteDriver)
            try await db.write { db in try await db.exec("CREATE TABLE t (name TEXT NOT NULL)") }
            let writes: [@Sendable (Connection) async throws -> Void] = [
                { db in try await db.exec("INSERT INTO t (name) VALUES ('before')") },
                { db in
                    // What SQLite does on SQLITE_FULL mid-transaction, then the error surfaces.
                    try await db.exec("ROLLBACK")
                    throw PlazaError(.internalServerError, "disk_full", "database or disk is full")
                },
                { db in try await db.exec("INSERT INTO t (name) VALUES ('after')") },
            ]
            try await db.write { db in try await db.exec("INSERT INTO t (name) VALUES ('first')") }
            let results = await driver.commitTogether(writes)
            let stored = Set(
                try await db.read { db in try await db.rows("SELECT name FROM t") }.map {
                    try $0.decode(column: "name", as: String.self)
                })
            // Each write is stored exactly when its caller was told it succeeded.
            for (name, result) in zip(["before", "rolled back", "after"], results) {
                let succeeded = (try? result.get()) != nil
                #expect(
                    succeeded == stored.contains(name), "\(name): told \(succeeded), stored \(stored.contains(name))")
            }
            #expect(
                stored.contains("first") && !stored.contains("before"),
                "the rolled-back transaction's writes are gone: \(stored)")
            #expect(stored.contains("after"), "the write after the rollback ran in a transaction of its own: \(stored)")
            // The writer is in a clean state for the next write.
            try await db.write { db in try await db.exec("INSERT INTO t (name) VALUES ('later')") }
        }
        TestDatabase.dispose(config)
    }

    static func outcome(_ body: @Sendable () async throws -> Void) async -> Result<Void, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// Three servers starting together on an empty PostgreSQL database all finish their
    /// migrations (SQLite's database belongs to one server).
    @Test func serversStartingTogetherOnAFreshDatabaseAllMigrate() async throws {
        let config = try await TestDatabase.config(migrated: false)
        guard config.databaseURL != nil else { return }
        let results = await withTaskGroup(of: Result<Void, any Error>.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await Self.outcome {
                        let db = try await Database.open(config.database, logger: Logger(label: "test"))
                        try await db.withRunning { db in
                            _ = try await Migrations.run(on: db, logger: Logger(label: "test"))
                        }
                    }
                }
            }
            var all: [Result<Void, any Error>] = []
            for await result in group { all.append(result) }
            return all
        }
        for case .failure(let error) in results { Issue.record("a start-up failed: \(DatabaseErrorText(error))") }
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        let applied = try await db.withRunning { db in
            try await db.read { db in try await db.rows("SELECT version FROM plaza_migrations") }.count
        }
        #expect(applied == Migrations.all.count)
        TestDatabase.dispose(config)
    }

    /// PostgreSQL keeps statements prepared per connection. One whose result columns a schema
    /// change altered fails once (PostgreSQL refuses to run its cached plan) and then works
    /// again, prepared anew, on the same connection.
    @Test(.enabled(if: TestDatabase.postgresURL != nil))
    func aPreparedStatementOutlivesASchemaChange() async throws {
        let config = try await TestDatabase.config()
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        // The suite's other tests may have used up the process's names (`limit`): past them a
        // statement runs unnamed, which never goes stale.
        PreparedStatements.shared.forgetAll()
        try await db.withRunning { db in
            try await db.read { conn in
                try await conn.exec("CREATE TABLE prepared_probe (a BIGINT)")
                try await conn.exec("INSERT INTO prepared_probe (a) VALUES (\(bind: 7))")
                let read: SQL = "SELECT a FROM prepared_probe LIMIT \(bind: 1)"
                #expect(try await conn.first(read)?.decode(column: "a", as: Int64.self) == 7)
                try await conn.exec("ALTER TABLE prepared_probe ALTER COLUMN a TYPE TEXT")
                let error = await #expect(throws: PSQLError.self) { try await conn.first(read) }
                #expect(error?.serverInfo?[.sqlState] == PreparedStatements.stalePlan)
                #expect(try await conn.first(read)?.decode(column: "a", as: String.self) == "7")
            }
        }
        TestDatabase.dispose(config)
    }

    @Test func sslModesFollowLibpq() throws {
        guard case .disable = try PostgresDriver.tls(sslMode: "disable", rootCertificate: nil) else {
            Issue.record("disable")
            return
        }
        guard case .prefer(let prefer) = try PostgresDriver.tls(sslMode: "prefer", rootCertificate: nil) else {
            Issue.record("prefer")
            return
        }
        #expect(prefer.certificateVerification == .none)
        guard case .require(let require) = try PostgresDriver.tls(sslMode: "require", rootCertificate: nil) else {
            Issue.record("require")
            return
        }
        #expect(require.certificateVerification == .none)
        guard case .require(let ca) = try PostgresDriver.tls(sslMode: "verify-ca", rootCertificate: "/ca.pem") else {
            Issue.record("verify-ca")
            return
        }
        #expect(ca.certificateVerification == .noHostnameVerification)
        guard case .require(let full) = try PostgresDriver.tls(sslMode: "verify-full", rootCertificate: nil) else {
            Issue.record("verify-full")
            return
        }
        #expect(full.certificateVerification == .fullVerification)
        #expect(throws: ConfigurationError.self) { _ = try PostgresDriver.tls(sslMode: "requir", rootCertificate: nil) }
    }

    /// Connects once with the driver's own start-up check, as `plaza serve` does.
    static func reach(_ url: String) async throws {
        try await PostgresDriver(url: url, poolSize: 2, logger: Logger(label: "test")).checkReachable()
    }

    /// `sslmode=require` against a server that offers no TLS (the suite's) fails closed;
    /// `prefer` falls back to a plain connection.
    @Test func requireFailsClosedWithoutTLS() async throws {
        guard let url = TestDatabase.postgresURL else { return }
        await #expect(throws: (any Error).self) { try await Self.reach(url + "?sslmode=require") }
        await #expect(throws: (any Error).self) { try await Self.reach(url + "?sslmode=verify-full") }
        try await Self.reach(url + "?sslmode=prefer")
        try await Self.reach(url)
    }

    /// Against a server that takes TLS only, with a certificate for "localhost" from the suite's
    /// CA (scripts/with-postgres.sh): `verify-full` checks the chain and the host name, `verify-ca`
    /// the chain only, `require` neither, and `disable` is refused by the server.
    @Test func verifyModesCheckTheCertificateAndTheHostName() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["PLAZA_TEST_TLS_DATABASE_URL"], let ca = environment["PLAZA_TEST_TLS_CA"],
            let otherCA = environment["PLAZA_TEST_TLS_OTHER_CA"]
        else { return }
        let byAddress = url.replacingOccurrences(of: "@localhost:", with: "@127.0.0.1:")
        try await Self.reach(url + "?sslmode=verify-full&sslrootcert=\(ca)")
        try await Self.reach(byAddress + "?sslmode=verify-ca&sslrootcert=\(ca)")
        try await Self.reach(byAddress + "?sslmode=require")
        try await Self.reach(url + "?sslmode=prefer")
        await #expect(throws: (any Error).self, "the certificate names localhost, not 127.0.0.1") {
            try await Self.reach(byAddress + "?sslmode=verify-full&sslrootcert=\(ca)")
        }
        await #expect(throws: (any Error).self, "another CA") {
            try await Self.reach(url + "?sslmode=verify-full&sslrootcert=\(otherCA)")
        }
        await #expect(throws: (any Error).self, "another CA") {
            try await Self.reach(url + "?sslmode=verify-ca&sslrootcert=\(otherCA)")
        }
        await #expect(throws: (any Error).self, "the system's roots do not know the suite's CA") {
            try await Self.reach(url + "?sslmode=verify-full")
        }
        await #expect(throws: (any Error).self, "the server takes TLS only") {
            try await Self.reach(url + "?sslmode=disable")
        }
    }
}
