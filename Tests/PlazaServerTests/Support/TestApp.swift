import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The database the suite runs on: SQLite in a temp folder, or, when
/// `PLAZA_TEST_DATABASE_URL` is set, a fresh PostgreSQL database per test.
enum TestDatabase {
    static let postgresURL = ProcessInfo.processInfo.environment["PLAZA_TEST_DATABASE_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// A test's database is migrated (a copy of `template`) unless `migrated` is false; then it
    /// is empty, for the tests of migrations themselves.
    static func config(migrated: Bool = true, _ adjust: (inout PlazaConfig) -> Void = { _ in }) async throws
        -> PlazaConfig
    {
        var config = PlazaConfig()
        config.dataDir =
            FileManager.default.temporaryDirectory.appendingPathComponent("plaza-test-\(UUID().uuidString)").path
        config.port = 0
        // bcrypt's lowest cost (operators may set 10 to 16): the suite registers hundreds of
        // accounts, and at cost 10 hashing took half its CPU. `AccountsTests` checks the configured cost is used.
        config.accounts.bcryptCost = 4
        config.http.rateLimits = false
        config.logLevel = .warning
        config.nodeID = 1
        // Many suites run at once on one PostgreSQL server (max_connections 200).
        config.postgresPoolSize = 4
        // Link previews may reach only what a test allow-lists (its own loopback server).
        config.linkPreviews.publicAddresses = false
        // Pushes too: nothing but loopback, and no name looked up.
        config.push.publicAddresses = false
        if let url = postgresURL {
            config.databaseURL = try await createDatabase(
                adminURL: url, template: migrated ? try await template.value.postgresName : nil)
        } else if migrated, let file = try await template.value.sqliteFile {
            try FileManager.default.createDirectory(atPath: config.dataDir, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: file, toPath: config.database.sqlitePath)
        }
        adjust(&config)
        return config
    }

    /// Migrating took most of a test's set-up (0.65 of 0.9 s on PostgreSQL, 0.1 s on SQLite):
    /// each test's database is a copy of this one, migrated once per test process
    /// (`CREATE DATABASE … TEMPLATE` on PostgreSQL, a file copy on SQLite).
    private static let template = Task { try await MigratedTemplate.make() }

    struct MigratedTemplate: Sendable {
        var postgresName: String?
        var sqliteFile: String?

        static func make() async throws -> MigratedTemplate {
            var config = PlazaConfig()
            config.dataDir =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "plaza-test-template-\(UUID().uuidString)"
                )
                .path
            var template = MigratedTemplate()
            if let url = postgresURL {
                let database = try await createDatabase(adminURL: url, template: nil)
                config.databaseURL = database
                template.postgresName = URLComponents(string: database).map { String($0.path.dropFirst()) }
            } else {
                template.sqliteFile = (config.dataDir as NSString).appendingPathComponent("template.sqlite")
            }
            // Closed when this returns: a template database may have no connections when copied.
            let db = try await Database.open(config.database, logger: Logger(label: "test"))
            let (file, source) = (template.sqliteFile, config.database.sqlitePath)
            try await db.withRunning { db in
                _ = try await Migrations.run(on: db, logger: Logger(label: "test"))
                // One self-contained file, whatever is still in the write-ahead log.
                if let file { try SQLiteHandle(path: source).backup(to: file) }
            }
            return template
        }
    }

    /// PostgreSQL's errors describe themselves only when reflected: one that ends a test is
    /// recorded with its details before it is thrown.
    static func detailed<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PSQLError {
            Issue.record("\(String(reflecting: error))")
            throw error
        }
    }

    /// Creates a database on the test server, empty or a copy of `template`, and returns its URL.
    static func createDatabase(adminURL: String, template: String?) async throws -> String {
        let components = URLComponents(string: adminURL)!
        let name = "plaza_t_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
        let configuration = PostgresConnection.Configuration(
            host: components.host!, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: String(components.path.dropFirst()), tls: .disable)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "test"))
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0)" } ?? "")),
            logger: Logger(label: "test"))
        try await connection.close()
        var url = components
        url.path = "/\(name)"
        return url.string!
    }

    /// Runs `body` with `config`, then removes the test's data folder (also when `body` throws).
    /// PostgreSQL test databases stay until `scripts/with-postgres.sh` deletes the whole cluster:
    /// dropping each at once (a forced checkpoint per DROP DATABASE) coincided with a 30 s stall
    /// of every live app in one loaded run.
    static func cleaningUp<T>(_ config: PlazaConfig, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            dispose(config)
            return result
        } catch {
            dispose(config)
            throw error
        }
    }

    static func dispose(_ config: PlazaConfig) {
        try? FileManager.default.removeItem(atPath: config.dataDir)
    }
}

/// Runs `body` against a fresh application through the router (no sockets).
func withApp(
    _ adjust: @escaping (inout PlazaConfig) -> Void = { _ in }, _ body: @Sendable (TestAPI) async throws -> Void
) async throws {
    try await TestDatabase.detailed {
        let config = try await TestDatabase.config(adjust)
        try await TestDatabase.cleaningUp(config) {
            let app = try await buildApplication(config: config, logger: Logger(label: "test"))
            try await app.test(.router) { client in try await body(TestAPI(client: client, config: config)) }
        }
    }
}

/// Runs `body` against a fresh application listening on a loopback port (for streams).
func withLiveApp(
    _ adjust: @escaping (inout PlazaConfig) -> Void = { _ in }, _ body: @Sendable (TestAPI, Int) async throws -> Void
) async throws {
    let config = try await TestDatabase.config(adjust)
    try await TestDatabase.cleaningUp(config) {
        let app = try await buildApplication(config: config, logger: Logger(label: "test"))
        try await app.test(.live) { client in try await body(TestAPI(client: client, config: config), client.port!) }
    }
}

/// Runs `body` with a database as migrations before `version` left it, for a test of migration
/// `version` to fill with rows and then run `Migrations.run` on.
func withDatabase(before version: Int, _ body: @Sendable (Database) async throws -> Void) async throws {
    let config = try await TestDatabase.config(migrated: false)
    try await TestDatabase.cleaningUp(config) {
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        try await db.withRunning { db in
            try await db.write { conn in
                try await conn.exec(
                    "CREATE TABLE plaza_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
                )
                for migration in Migrations.all where migration.version < version {
                    for statement in migration.statements(for: db.dialect) {
                        try await conn.exec(SQL(statement))
                    }
                    try await conn.exec(
                        "INSERT INTO plaza_migrations (version, name, applied_at) VALUES (\(bind: migration.version), \(bind: migration.name), 0)"
                    )
                }
            }
            try await body(db)
        }
    }
}

/// Runs `body` with a migrated database (for store-level tests).
func withDatabase(_ body: @Sendable (Database, PlazaConfig) async throws -> Void) async throws {
    let config = try await TestDatabase.config()
    try await TestDatabase.cleaningUp(config) {
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        try await db.withRunning { db in
            try await Migrations.run(on: db, logger: Logger(label: "test"))
            try await body(db, config)
        }
    }
}

struct TestResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer

    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
        } catch {
            Issue.record("Could not decode \(T.self) from \(status.code) \(String(buffer: body)): \(error)")
            throw error
        }
    }

    var error: ErrorBody.Detail? {
        (try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)))?.error
    }
    var text: String { String(buffer: body) }
}

/// A signed-in test user.
struct Account: Sendable {
    let token: String
    let me: Me
    let password: String
    var username: String { me.user.username }
    var id: String { me.user.id }
}

/// An `Account`, one for each name of a pack (`TestAPI.register(_:_:_:)`).
typealias AccountNamed<Name> = Account

/// Small typed helpers over the test client.
struct TestAPI: Sendable {
    let client: any TestClientProtocol
    let config: PlazaConfig

    /// Runs `body` on a second connection set to the app's database, to look behind the API.
    func withDatabase<T: Sendable>(_ body: @Sendable (Database) async throws -> T) async throws -> T {
        try await Database.open(config.database, logger: Logger(label: "test")).withRunning(body)
    }

    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ path: String, as account: Account? = nil, token: String? = nil,
        json: (any Encodable & Sendable)? = nil, raw: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let token = token ?? account?.token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(data: try JSONEncoder().encode(json))
            headers[.contentType] = "application/json"
        } else if let raw {
            body = ByteBuffer(string: raw)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        }
        let response = try await client.execute(uri: "/api/v1" + path, method: method, headers: headers, body: body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    func get(_ path: String, as account: Account? = nil) async throws -> TestResponse {
        try await call(.get, path, as: account)
    }

    func register(_ username: String, password: String = "correct horse battery") async throws -> Account {
        let response = try await call(
            .post, "/auth/register",
            json: RegisterRequest(username: username, email: "\(username)@example.com", password: password))
        #expect(response.status == .created, "register \(username): \(response.text)")
        let auth = try response.decode(AuthResponse.self)
        return Account(token: auth.token, me: auth.user, password: password)
    }

    /// Several people at once, signed up in the order given:
    /// `let (ana, bea) = try await api.register("ana", "bea")`.
    func register<each Name: StringProtocol>(
        _ first: String, _ second: String, _ more: repeat each Name
    ) async throws -> (Account, Account, repeat AccountNamed<each Name>) {
        (try await register(first), try await register(second), repeat try await register(String(each more)))
    }

    /// Signs in again with the account's password: another session.
    func logIn(_ account: Account, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await call(
            .post, "/auth/login", json: LoginRequest(login: account.username, password: account.password),
            headers: headers)
    }

    /// `count` new people (`fan0`, `fan1`, …) who follow `username`; their names in that order.
    func fans(_ count: Int, of username: String) async throws -> [String] {
        var names: [String] = []
        for i in 0..<count {
            let fan = try await register("fan\(i)")
            try await follow(fan, username)
            names.append(fan.username)
        }
        return names
    }

    func post(_ account: Account, _ body: CreatePostRequest) async throws -> Post {
        let response = try await call(.post, "/posts", as: account, json: body)
        #expect(response.status == .created, "create post: \(response.text)")
        return try response.decode(Post.self)
    }

    func textPost(_ account: Account, _ text: String, title: String? = nil) async throws -> Post {
        try await post(account, CreatePostRequest(kind: .text, title: title, body: text))
    }

    func follow(_ account: Account, _ username: String) async throws {
        let response = try await call(.put, "/users/\(username)/follow", as: account)
        #expect(response.status == .ok, "follow: \(response.text)")
    }

    /// Every item of a list, page after page: `path` has a query (`?limit=N`) and the cursor is
    /// added to it.
    func walk<T: Codable & Sendable>(_ path: String, as account: Account? = nil, of: T.Type = T.self) async throws
        -> [T]
    {
        var items: [T] = []
        var cursor: String?
        repeat {
            let page = try await page(path + (cursor.map { "&cursor=\($0)" } ?? ""), as: account, of: T.self)
            items += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return items
    }

    func page<T: Codable & Sendable>(_ path: String, as account: Account? = nil, of: T.Type = T.self) async throws
        -> Page<T>
    {
        let response = try await get(path, as: account)
        #expect(response.status == .ok, "\(path): \(response.text)")
        return try response.decode(Page<T>.self)
    }
}
