import ArgumentParser
import Foundation
import PlazaAPI
import PlazaKitAsyncHTTPClient
import PlazaKitCore
import PlazaServer

#if canImport(Glibc)
    import Glibc
#endif

/// `plaza check`: a line for each thing an operator should know before serving.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what is misconfigured: public URL, database, storage, mail, push, ffmpeg, libvips.",
        discussion: "Exit status 1 when something is an error (Plaza would not serve as it should).")
    @OptionGroup var options: ServerOptions

    func run() async throws {
        let lines = await InstanceCheck.run(config: try await options.config(), logger: try await options.logger())
        for line in lines { print(line) }
        let errors = lines.filter { $0.level == .error }.count
        let warnings = lines.filter { $0.level == .warning }.count
        print(
            errors + warnings == 0
                ? "All is well."
                : "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s") (docs/troubleshooting.md)."
        )
        if errors > 0 { throw ExitCode(1) }
    }
}

/// `plaza health`: whether a running Plaza answers `/healthz` (a container's health check,
/// which has no curl).
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask a running Plaza whether it is healthy (GET /healthz); exit status 1 when not.")
    @Option(help: "The server (default http://127.0.0.1:8080, or PLAZA_PORT's port).") var url: String?

    func run() async throws {
        let port = ProcessInfo.processInfo.environment["PLAZA_PORT"] ?? "8080"
        let base = url ?? "http://127.0.0.1:\(port)"
        guard let target = URL(string: base + "/healthz"), target.scheme == "http" || target.scheme == "https" else {
            throw ValidationError("--url must be an http(s) URL such as http://127.0.0.1:8080")
        }
        do {
            let response = try await AsyncHTTPClientTransport().send(HTTPRequestData(method: "GET", url: target))
            print("\(target): \(response.status)")
            if response.status != 200 { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            print("\(target): \(error)")
            throw ExitCode(1)
        }
    }
}

/// `plaza user role`: make someone an administrator, a moderator, or a member again.
struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role", abstract: "Make someone an administrator, a moderator, or a member again.")
    @OptionGroup var options: ServerOptions
    @Option(help: "Username or email address.") var username: String
    @Argument(help: "admin, moderator or member.") var role: String

    func run() async throws {
        guard let role = InstanceRole(rawValue: role) else {
            throw ValidationError("The role is admin, moderator or member.")
        }
        guard
            try await Admin.setRole(
                config: try await options.config(), username: username, role: role, logger: try await options.logger())
        else { throw ValidationError("There is no account \(username).") }
        let name = username.lowercased()
        switch role {
        case .admin: print("\(name) is an administrator now.")
        case .moderator: print("\(name) is a moderator now: they handle every report, and run nothing else.")
        case .member: print("\(name) is a member now, no longer an administrator or moderator.")
        }
    }
}

/// `plaza setup`: the first run on a server. Asks for (or takes as flags) the instance's name,
/// public URL and registration mode, writes the settings file the service reads, and makes the
/// first administrator on the database that file names.
struct Setup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the settings file (/etc/plaza/plaza.env) and make the first administrator.",
        discussion: """
            What is not given as a flag is asked for when the input is a terminal; otherwise the \
            defaults are taken, and --public-url and the administrator's flags are needed.
            """)
    @Option(help: "Where to write the settings (default /etc/plaza/plaza.env).") var envFile = "/etc/plaza/plaza.env"
    @Option(help: "The address people use, e.g. https://plaza.example.com.") var publicURL: String?
    @Option(help: "The instance's name (default Plaza).") var name: String?
    @Option(help: "Who may sign up: open, approval, invite or closed (default approval).") var registrations: String?
    @Option(help: "Where the database and media live (default /var/lib/plaza).") var dataDir: String?
    @Option(help: "A PostgreSQL URL instead of SQLite in the data folder.") var databaseURL: String?
    @Option(help: "The first administrator's username.") var adminUsername: String?
    @Option(help: "Their email address.") var adminEmail: String?
    @Option(help: "Their password (else PLAZA_USER_PASSWORD, else asked).") var adminPassword: String?
    @Flag(help: "Replace an existing settings file.") var force = false

    func run() async throws {
        let interactive = isatty(STDIN_FILENO) != 0
        func value(_ given: String?, _ question: String, default fallback: String?) throws -> String {
            if let given { return given }
            if interactive {
                print("\(question)\(fallback.map { " [\($0)]" } ?? ""): ", terminator: "")
                let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces) ?? ""
                if !answer.isEmpty { return answer }
            }
            guard let fallback else { throw ValidationError("\(question): none given.") }
            return fallback
        }
        guard force || !FileManager.default.fileExists(atPath: envFile) else {
            throw ValidationError("\(envFile) exists: edit it, or run plaza setup --force to write it anew.")
        }
        let mode = try value(registrations, "Who may sign up (open, approval, invite, closed)", default: "approval")
        guard let registrationMode = RegistrationMode(rawValue: mode) else {
            throw ValidationError("Who may sign up is open, approval, invite or closed, not \(mode).")
        }
        let keyFile = ((envFile as NSString).deletingLastPathComponent as NSString).appendingPathComponent("secret.key")
        let settings = SettingsFile(
            publicURL: try value(publicURL, "The address people use (https://…)", default: nil),
            name: try value(name, "The instance's name", default: "Plaza"), registrations: registrationMode,
            dataDir: try value(dataDir, "Where the database and media live", default: "/var/lib/plaza"),
            databaseURL: databaseURL, secretKeyFile: keyFile)
        do { try settings.validate() } catch { throw ValidationError("\(error)") }
        let admin = (
            username: try value(adminUsername, "The first administrator's username", default: nil),
            email: try value(adminEmail, "Their email address", default: nil)
        )
        var password = adminPassword ?? ProcessInfo.processInfo.environment["PLAZA_USER_PASSWORD"]
        if password == nil, interactive { password = String(cString: getpass("Their password: ")) }
        guard let password, !password.isEmpty else { throw ValidationError("The administrator needs a password.") }

        // A key already there (a setup run again) is kept: secrets sealed with it must still open.
        if !FileManager.default.fileExists(atPath: keyFile) {
            try write(SecretBox.Key.generate() + "\n", to: keyFile)
            print("Wrote \(keyFile), the key two-factor secrets are sealed with: keep a copy apart from the backups.")
        }
        try write(settings.text, to: envFile)
        print("Wrote \(envFile).")
        let options = try ServerOptions.parse(["--env-file", envFile])
        do {
            let id = try await Admin.createUser(
                config: try await options.config(), username: admin.username, email: admin.email, password: password,
                displayName: nil, admin: true, logger: try await options.logger())
            print("Made the administrator \(admin.username.lowercased()) (id \(id)).")
        } catch let error as PlazaError {
            throw ValidationError(error.message)
        }
        if settings.databaseURL == nil { giveToFolderOwner(settings.dataDir) }
        print("Next: plaza check --env-file \(envFile), then systemctl enable --now plaza (docs/install.md).")
    }

    /// Run as root, setup made the SQLite database in the data folder as root: its files go to
    /// the folder's owner (the service's user, who made it with `install -d -o plaza`).
    private func giveToFolderOwner(_ folder: String) {
        guard getuid() == 0 else { return }
        var folderStat = stat()
        guard stat(folder, &folderStat) == 0, folderStat.st_uid != 0 else { return }
        let entries = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        for entry in entries {
            let path = (folder as NSString).appendingPathComponent(entry)
            var entryStat = stat()
            if lstat(path, &entryStat) == 0, entryStat.st_uid == 0 {
                _ = lchown(path, folderStat.st_uid, folderStat.st_gid)
            }
        }
    }

    /// Written beside the target and moved into place, readable by its owner and group only
    /// (the service's group reads it; it may hold passwords).
    private func write(_ text: String, to path: String) throws {
        let partial = path + ".partial"
        guard
            FileManager.default.createFile(
                atPath: partial, contents: Data(text.utf8), attributes: [.posixPermissions: 0o640])
        else { throw ValidationError("Could not write \(partial): \(String(cString: strerror(errno))).") }
        guard rename(partial, path) == 0 else {
            unlink(partial)
            throw ValidationError("Could not write \(path): \(String(cString: strerror(errno))).")
        }
    }
}

/// `plaza secrets`: the key two-factor secrets are sealed with.
struct SecretsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secrets", abstract: "Make a key for the secrets Plaza seals, or move them to a new one.",
        subcommands: [NewKey.self, Rotate.self])

    struct NewKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-key", abstract: "Print a new random key (32 bytes, base64) for PLAZA_SECRET_KEY(_FILE).")
        func run() { print(SecretBox.Key.generate()) }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every secret anew with the current key.",
            discussion: """
                Set the new key (PLAZA_SECRET_KEY or PLAZA_SECRET_KEY_FILE) and the old one in \
                PLAZA_SECRET_KEY_PREVIOUS, run this, then drop the old key. Secrets stored before a key \
                was set are sealed too.
                """)
        @OptionGroup var options: ServerOptions

        func run() async throws {
            let config = try await options.config()
            guard config.accounts.secrets.current != nil else {
                throw ValidationError(
                    "No key is set: PLAZA_SECRET_KEY or PLAZA_SECRET_KEY_FILE (plaza secrets new-key).")
            }
            let (resealed, unreadable) = try await Admin.resealSecrets(
                config: config, logger: try await options.logger())
            print("Sealed \(resealed) secret\(resealed == 1 ? "" : "s") with the current key.")
            if unreadable > 0 {
                print(
                    "\(unreadable) did not open with the keys given: add the key they were sealed with to PLAZA_SECRET_KEY_PREVIOUS and run this again."
                )
                throw ExitCode(1)
            }
        }
    }
}
