import ArgumentParser
import Foundation
import PlazaKitAsyncHTTPClient
import PlazaKitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `plaza login` keeps its token: one per server, in `~/.config/plaza/credentials.json`
/// (mode 0600), or `PLAZA_CREDENTIALS`. `PLAZA_TOKEN` overrides it for scripts.
actor CredentialsFile: TokenStore {
    let path: String
    let server: String

    init(server: URL) {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        path =
            environment["PLAZA_CREDENTIALS"]
            ?? "\(environment["XDG_CONFIG_HOME"] ?? home + "/.config")/plaza/credentials.json"
        self.server = server.absoluteString
    }

    private func all() -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path),
            let tokens = try? JSONDecoder().decode([String: String].self, from: data)
        else { return [:] }
        return tokens
    }

    func token() -> String? {
        if let token = ProcessInfo.processInfo.environment["PLAZA_TOKEN"], !token.isEmpty { return token }
        return all()[server]
    }

    /// The id of the person signed in (`plaza login`), whose queue `plaza post` fills offline.
    func owner() -> String? { all()[server + " user"] }

    func setOwner(_ id: String?) { write { $0[server + " user"] = id } }

    func setToken(_ token: String?) {
        write {
            $0[server] = token
            // Signing out forgets who was signed in.
            if token == nil { $0[server + " user"] = nil }
        }
    }

    private func write(_ change: (inout [String: String]) -> Void) {
        var tokens = all()
        change(&tokens)
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let data = try? JSONEncoder().encode(tokens),
            FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            return FileHandle.standardError.write(
                Data("plaza: could not write \(path); the session is not kept\n".utf8))
        }
    }
}

/// The server a client command talks to.
struct ClientOptions: ParsableArguments {
    @Option(help: "The Plaza server (PLAZA_SERVER, default http://localhost:8080).") var server: String?

    func client() throws -> PlazaClient {
        let url = try serverURL()
        return PlazaClient(
            baseURL: url, transport: AsyncHTTPClientTransport(client: AsyncHTTPClientTransport.failingFast),
            tokens: CredentialsFile(server: url))
    }

    func serverURL() throws -> URL {
        let text = server ?? ProcessInfo.processInfo.environment["PLAZA_SERVER"] ?? "http://localhost:8080"
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL such as http://localhost:8080")
        }
        return url
    }
}

/// Runs a client call, turning the server's errors into a one-line message and exit code 1.
func reporting<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as PlazaClientError {
        FileHandle.standardError.write(
            Data("error: \(error.message) (\(error.code)\(error.field.map { ", \($0)" } ?? ""))\n".utf8))
        throw ExitCode.failure
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in to a Plaza server and keep the token for the other client commands.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "Username or email.") var login: String
    @Flag(help: "Read the password from standard input (for scripts) instead of asking.") var passwordStdin = false

    func run() async throws {
        let password: String
        if passwordStdin {
            password = (readLine(strippingNewline: true) ?? "")
        } else {
            guard let typed = getpass("Password: ") else { throw ExitCode.failure }
            password = String(cString: typed)
        }
        let client = try options.client()
        let me = try await reporting { try await client.login(login, password: password) }
        await CredentialsFile(server: client.baseURL).setOwner(me.user.id)
        print("Signed in to \(client.baseURL.absoluteString) as @\(me.user.username).")
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Sign out (revokes the token) and forget it.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let client = try options.client()
        try await reporting { try await client.logout() }
        print("Signed out.")
    }
}

/// The client commands' write queue for a server: `~/.config/plaza/outbox/<host-port>` (or
/// `PLAZA_OUTBOX`), so that a post made offline is sent by a later `plaza post` or `plaza sync`.
enum CommandQueue {
    /// The signed-in person's queue (a folder per server and person), waiting while another
    /// `plaza` command has it open.
    static func open(_ client: PlazaClient) async throws -> WriteQueue {
        let credentials = CredentialsFile(server: client.baseURL)
        guard await client.tokens.token() != nil else {
            FileHandle.standardError.write(Data("error: not signed in; run `plaza login USER` first\n".utf8))
            throw ExitCode.failure
        }
        var owner = await credentials.owner()
        if owner == nil, let me = try? await client.me() {
            owner = me.user.id
            await credentials.setOwner(me.user.id)
        }
        guard let owner else {
            FileHandle.standardError.write(
                Data("error: the server cannot be reached to say who is signed in; run `plaza login USER` again\n".utf8)
            )
            throw ExitCode.failure
        }
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        let root = environment["PLAZA_OUTBOX"] ?? "\(environment["XDG_CONFIG_HOME"] ?? home + "/.config")/plaza/outbox"
        let url = client.baseURL
        let name = "\(url.scheme ?? "http")-\(url.host ?? "server")-\(url.port.map(String.init) ?? "default")"
        return try WriteQueue(
            client: client,
            directory: URL(fileURLWithPath: root).appendingPathComponent(name).appendingPathComponent(owner),
            owner: owner, waitingForLock: true)
    }

    /// Sends what is pending; prints each refusal; true when nothing is left.
    static func send(_ queue: WriteQueue) async -> (finished: Bool, sent: [(PendingWrite, WriteOutcome)]) {
        let result = await queue.sync()
        var sent: [(PendingWrite, WriteOutcome)] = []
        for event in result.events {
            switch event {
            case .sent(let write, let outcome): sent.append((write, outcome))
            case .refused(let write, let error):
                FileHandle.standardError.write(
                    Data("error: \(describe(write.intent)) refused: \(error.message) (\(error.code))\n".utf8))
            default: break
            }
        }
        return (result.finished, sent)
    }

    static func describe(_ intent: WriteIntent) -> String {
        switch intent {
        case .createPost(let post): "post \"\(String((post.body ?? post.title ?? "").prefix(40)))\""
        case .upload(_, let filename, _, _): "upload \(filename)"
        default: "\(intent)".components(separatedBy: "(").first ?? "write"
        }
    }

    /// The exit status of a command that left writes queued: 75, EX_TEMPFAIL (try again later).
    static let stillPending = ExitCode(75)

    static func reportPending(_ queue: WriteQueue) async -> ExitCode {
        let pending = await queue.pending
        let reason = pending.first?.lastError.map { " (\($0))" } ?? ""
        FileHandle.standardError.write(
            Data(
                "offline: \(pending.count) write(s) queued in \(queue.directory.path)\(reason); run `plaza sync` to send them\n"
                    .utf8))
        return stillPending
    }
}

struct PostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post", abstract: "Publish a post as the signed-in user.",
        discussion: """
            When the server cannot be reached (or answers 5xx), the post and its photos are queued \
            on disk and sent, exactly once, by the next `plaza post` or `plaza sync`; the command \
            then says so and exits with 75 (EX_TEMPFAIL).
            """)
    @OptionGroup var options: ClientOptions
    @Argument(help: "The text (or the photo's caption).") var text: String?
    @Option(help: "A title.") var title: String?
    @Option(name: .customLong("space"), help: "A space's slug; repeat for several.") var spaces: [String] = []
    @Option(name: .customLong("photo"), help: "An image file to attach; repeat for several.") var photos: [String] = []
    @Option(help: "A link to share.") var link: String?
    @Flag(help: "Print the created post as JSON.") var json = false

    func run() async throws {
        let client = try options.client()
        let queue = try await CommandQueue.open(client)
        var files: [(url: URL, contentType: String)] = []
        for path in photos {
            guard FileManager.default.isReadableFile(atPath: path) else { throw ValidationError("cannot read \(path)") }
            files.append((URL(fileURLWithPath: path), Self.contentType(of: path)))
        }
        let kind: PostKind = !files.isEmpty ? .photo : link != nil ? .link : .text
        let write = try await queue.enqueuePost(
            CreatePostRequest(
                kind: kind, title: title, body: text, spaces: spaces.isEmpty ? nil : spaces,
                link: link.map(LinkInput.init)),
            files: files)
        let (_, sent) = await CommandQueue.send(queue)
        if let (_, outcome) = sent.first(where: { $0.0.id == write.id }) {
            guard case .post(let post) = outcome else { return print("posted") }
            if json { return printJSON(post) }
            return print("\(post.id) \(client.baseURL.appendingPathComponent("p/\(post.id)").absoluteString)")
        }
        guard await queue.pending.contains(where: { $0.id == write.id }) else { throw ExitCode.failure }
        throw await CommandQueue.reportPending(queue)
    }

    static func contentType(of path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "webp": "image/webp"
        case "gif": "image/gif"
        case "heic", "heif": "image/heic"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "webm": "video/webm"
        default: "application/octet-stream"
        }
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Send the posts that were queued while the server could not be reached.",
        discussion: "Exits with 75 (EX_TEMPFAIL) when some are still waiting, 1 when the server refused one.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let client = try options.client()
        let queue = try await CommandQueue.open(client)
        let before = await queue.pending.count
        guard before > 0 else { return print("Nothing to send.") }
        let (finished, sent) = await CommandQueue.send(queue)
        for (write, outcome) in sent {
            if case .post(let post) = outcome {
                print("\(post.id) \(client.baseURL.appendingPathComponent("p/\(post.id)").absoluteString)")
            } else if case .upload = write.intent {
                continue
            } else {
                print("sent: \(CommandQueue.describe(write.intent))")
            }
        }
        guard finished else { throw await CommandQueue.reportPending(queue) }
        if sent.count < before { throw ExitCode.failure }
    }
}

struct Feed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a feed, newest first: home, global, @username or a space slug.",
        discussion: "With --follow it then prints new posts as they arrive (home feed events), until interrupted.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "home (default), global, @username or a space's slug.") var feed = "home"
    @Option(help: "How many posts (1–100).") var limit = 20
    @Flag(help: "One JSON object per line instead of text.") var json = false
    @Flag(help: "Keep printing new posts as they arrive.") var follow = false

    func run() async throws {
        guard (1...100).contains(limit) else { throw ValidationError("--limit must be from 1 to 100") }
        let source: FeedSource =
            switch feed {
            case "home": .home
            case "global": .global
            case let name where name.hasPrefix("@"): .user(String(name.dropFirst()))
            default: .space(feed)
            }
        let client = try options.client()
        let page = try await reporting { try await client.feed(source, page: PageOptions(limit: limit)) }
        for post in page.items { show(post) }
        guard follow else { return }
        try await reporting {
            for try await event in client.events() {
                if case .postCreated(let post) = event.event { show(post) }
            }
        }
    }

    func show(_ post: Post) {
        if json { return printJSON(post) }
        let text = [post.title, post.body].compactMap { $0 }.joined(separator: " — ")
        print(
            "\(post.createdAt)  @\(post.author.username)  \(text.isEmpty ? "(\(post.kind.rawValue))" : text)  [\(post.id)]"
        )
    }
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
}
