import ArgumentParser
import Configuration
import Foundation
import Hummingbird
import Logging
import PlazaMastodon
import PlazaServer
import SystemPackage

#if canImport(Glibc)
    import Glibc

    /// glibc's `mallopt` (declared in malloc.h, which the Glibc module does not export).
    @_silgen_name("mallopt")
    private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

@main
struct Plaza: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plaza",
        abstract: "A self-hosted social backend and web app.",
        version: PlazaVersion.description,
        subcommands: [
            Serve.self, Setup.self, Migrate.self, Check.self, Health.self, BackupCommand.self, RestoreCommand.self,
            ExportCommand.self, UserCommand.self, SecretsCommand.self, Seed.self, Login.self,
            Logout.self, PostCommand.self, SyncCommand.self, Feed.self,
        ]
    )

    /// ArgumentParser's own main, with database errors in the database's words.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: DatabaseErrorText.readable(error))
        }
    }
}

/// The server options. Each also reads `PLAZA_<NAME>` from the environment; the command line wins.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (PLAZA_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (PLAZA_PORT, default 8080).") var port: Int?
    @Option(help: "Folder for the SQLite database and media (PLAZA_DATA_DIR, default ./data).") var dataDir: String?
    @Option(help: "postgres://user:password@host:port/database switches to PostgreSQL (PLAZA_DATABASE_URL).")
    var databaseURL: String?
    @Option(help: "General rate limits, on or off (PLAZA_RATE_LIMITS, default on).") var rateLimits: String?
    @Option(help: "trace, debug, info, notice, warning, error (PLAZA_LOG_LEVEL, default info).") var logLevel: String?
    @Option(
        help:
            "Reverse proxies (CIDR blocks, comma-separated) whose forwarding header names the client (PLAZA_TRUSTED_PROXIES, default none)."
    )
    var trustedProxies: String?
    @Option(
        help:
            "The header the trusted proxies write: x-forwarded-for or forwarded (PLAZA_FORWARDED_HEADER, default x-forwarded-for)."
    )
    var forwardedHeader: String?
    @Option(help: "text or json: one JSON object per log line (PLAZA_LOG_FORMAT, default text).") var logFormat: String?
    @Option(help: "Address of GET /metrics (PLAZA_METRICS_HOST, default 127.0.0.1).") var metricsHost: String?
    @Option(help: "Port of GET /metrics; none serves no metrics (PLAZA_METRICS_PORT, default none).")
    var metricsPort: Int?
    @Option(
        help:
            "A file of PLAZA_* settings, KEY=value a line, such as the one plaza.service reads (PLAZA_ENV_FILE); the environment and the command line win over it."
    )
    var envFile: String?

    func config() async throws -> PlazaConfig {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func put(_ key: String, _ value: ConfigContent?) {
            if let value {
                values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                    value, isSecret: false)
            }
        }
        put("plaza.host", host.map { .string($0) })
        put("plaza.port", port.map { .int($0) })
        put("plaza.data.dir", dataDir.map { .string($0) })
        put("plaza.database.url", databaseURL.map { .string($0) })
        put("plaza.rate.limits", rateLimits.map { .string($0) })
        put("plaza.log.level", logLevel.map { .string($0) })
        put("plaza.trusted.proxies", trustedProxies.map { .string($0) })
        put("plaza.forwarded.header", forwardedHeader.map { .string($0) })
        put("plaza.log.format", logFormat.map { .string($0) })
        put("plaza.metrics.host", metricsHost.map { .string($0) })
        put("plaza.metrics.port", metricsPort.map { .int($0) })
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "command line", values: values), EnvironmentVariablesProvider(),
        ]
        if let file = envFile ?? ProcessInfo.processInfo.environment["PLAZA_ENV_FILE"] {
            do {
                providers.append(try await EnvironmentVariablesProvider(environmentFilePath: FilePath(file)))
            } catch {
                throw ValidationError("The settings file \(file) could not be read: \(error)")
            }
        }
        do {
            return try PlazaConfig(reader: ConfigReader(providers: providers))
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func logger() async throws -> Logger {
        let config = try await config()
        if config.logFormat == .json { Self.jsonLogs }
        var logger = Logger(label: "plaza")
        logger.logLevel = config.logLevel
        return logger
    }

    /// Switches the process's logging to JSON lines, once, before the first logger is made.
    private static let jsonLogs: Void = LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (stops gracefully on SIGTERM or SIGINT).")
    @OptionGroup var options: ServerOptions

    func run() async throws {
        let config = try await options.config()
        let logger = try await options.logger()
        #if canImport(Glibc)
            // glibc gives every thread its own malloc arena, which inflates resident memory under
            // load for no speed gain here; two arenas keep it close to what is in use.
            let arenaMax: Int32 = -8  // M_ARENA_MAX
            _ = glibcMallopt(arenaMax, 2)
        #endif
        raiseOpenFileLimit()
        let app = try await buildApplication(config: config, logger: logger, doors: [MastodonDoor()])
        logger.info(
            "Plaza on http://\(config.host):\(config.port) with \(config.databaseURL == nil ? "SQLite in \(config.dataDir)" : "PostgreSQL")"
        )
        try await app.runService()
    }
}

/// Every open stream holds a socket: take the hard limit on open files, not the (often 1,024) soft one.
private func raiseOpenFileLimit() {
    var limit = rlimit()
    #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
    #else
        let resource = RLIMIT_NOFILE
    #endif
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending database migrations (--check: only say which would run).")
    @OptionGroup var options: ServerOptions
    @Flag(help: "Say what would run and change nothing; exit status 1 when a migration is pending.")
    var check = false

    func run() async throws {
        let config = try await options.config()
        let logger = try await options.logger()
        if check {
            let status = try await Admin.migrationStatus(config: config, logger: logger)
            print(status.summary)
            if !status.pending.isEmpty { throw ExitCode(1) }
            return
        }
        let applied = try await Admin.migrate(config: config, logger: logger)
        print(
            applied.isEmpty
                ? "The database is up to date."
                : "Applied migrations: \(applied.map(String.init).joined(separator: ", ")).")
    }
}

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the database and media into a new folder, while the server runs.")
    @OptionGroup var options: ServerOptions
    @Argument(help: "A new or empty folder.") var directory: String

    func run() async throws {
        let manifest = try await Backup.backup(
            config: try await options.config(), to: directory, logger: try await options.logger())
        print("Backed up the \(manifest.database) database and \(manifest.mediaFiles) media files to \(directory).")
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a backup into an empty data folder or an empty PostgreSQL database.")
    @OptionGroup var options: ServerOptions
    @Argument(help: "A folder made by plaza backup.") var directory: String

    func run() async throws {
        let manifest = try await Backup.restore(
            config: try await options.config(), from: directory, logger: try await options.logger())
        print("Restored the \(manifest.database) database and \(manifest.mediaFiles) media files from \(directory).")
    }
}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a person's data (posts, comments, media, collections, follows) to a ZIP archive.")
    @OptionGroup var options: ServerOptions
    @Option(help: "Username or email address.") var user: String
    @Argument(help: "The archive to write, e.g. ana.zip.") var file: String

    func run() async throws {
        guard
            let username = try await Admin.export(
                config: try await options.config(), user: user, to: file, logger: try await options.logger())
        else { throw ValidationError("There is no account \(user).") }
        print("Wrote the data of \(username) to \(file).")
    }
}

struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Manage accounts.",
        subcommands: [Create.self, RoleCommand.self, TwoFactorOff.self])

    struct TwoFactorOff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "two-factor-off",
            abstract: "Turn two-factor sign-in off for someone who lost their app and recovery codes.")
        @OptionGroup var options: ServerOptions
        @Option(help: "Username or email address.") var username: String

        func run() async throws {
            guard
                try await Admin.disableTwoFactor(
                    config: try await options.config(), username: username, logger: try await options.logger())
            else { throw ValidationError("There is no account \(username).") }
            print("Two-factor sign-in is off for \(username.lowercased()); their password alone signs in now.")
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an account.")
        @OptionGroup var options: ServerOptions
        @Option(help: "Username (3–30 of a–z, 0–9, _).") var username: String
        @Option(help: "Email address.") var email: String
        @Option(help: "Password (8–128 characters); default: PLAZA_USER_PASSWORD or asked on standard input.")
        var password: String?
        @Option(help: "Display name.") var displayName: String?
        @Flag(help: "Make the account an administrator.") var admin = false

        func run() async throws {
            var secret = password ?? ProcessInfo.processInfo.environment["PLAZA_USER_PASSWORD"]
            if secret == nil {
                print("Password: ", terminator: "")
                secret = readLine(strippingNewline: true)
            }
            guard let secret, !secret.isEmpty else { throw ValidationError("A password is needed.") }
            do {
                let id = try await Admin.createUser(
                    config: try await options.config(), username: username, email: email, password: secret,
                    displayName: displayName,
                    admin: admin, logger: try await options.logger())
                print("Created \(admin ? "administrator" : "user") \(username.lowercased()) (id \(id)).")
            } catch let error as PlazaError {
                throw ValidationError(error.message)
            }
        }
    }
}

struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fill the instance with sample content.")
    @OptionGroup var options: ServerOptions
    @Flag(
        help:
            "The demo world: courses, friends tracking activities, memes and food with pictures, collections."
    ) var demo = false
    @Flag(help: "A crowd for trying scale by hand: thousands of people who follow each other and post.")
    var large = false
    @Option(help: "With --large: how many people.") var people = CrowdSeeder.defaultPeople
    @Option(help: "With --large: how many posts.") var posts = CrowdSeeder.defaultPosts

    func validate() throws {
        guard demo || large else { throw ValidationError("Say what to seed: plaza seed --demo, or --large") }
        guard (2...1_000_000).contains(people), (0...10_000_000).contains(posts) else {
            throw ValidationError("--people is 2 to 1,000,000 and --posts 0 to 10,000,000.")
        }
    }

    func run() async throws {
        let config = try await options.config()
        if demo {
            switch try await Admin.seedDemo(config: config, logger: try await options.logger()) {
            case .alreadySeeded: print("The demo world is already there.")
            case .seeded(let users, let posts): print("Seeded \(users) people and \(posts) posts.")
            }
            print("Demo account: \(DemoSeeder.demoUsername) / \(DemoSeeder.demoPassword)")
            print("Administrator: \(DemoSeeder.adminUsername) / \(DemoSeeder.demoPassword)")
        }
        if large {
            let outcome = try await Admin.seedCrowd(
                config: config, logger: try await options.logger(), people: people, posts: posts
            ) { print("  \($0)") }
            switch outcome {
            case .alreadySeeded: print("The crowd is already there.")
            case .seeded(let users, let posts, let follows):
                print(
                    "Seeded a crowd of \(users) people (crowd1 … crowd\(users), password \(DemoSeeder.demoPassword)), \(follows) follows and \(posts) posts."
                )
            }
        }
    }
}
