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

    func setToken(_ token: String?) {
        var tokens = all()
        tokens[server] = token
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
        let text = server ?? ProcessInfo.processInfo.environment["PLAZA_SERVER"] ?? "http://localhost:8080"
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL such as http://localhost:8080")
        }
        return PlazaClient(baseURL: url, transport: AsyncHTTPClientTransport(), tokens: CredentialsFile(server: url))
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

struct PostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "post", abstract: "Publish a post as the signed-in user.")
    @OptionGroup var options: ClientOptions
    @Argument(help: "The text (or the photo's caption).") var text: String?
    @Option(help: "A title.") var title: String?
    @Option(name: .customLong("space"), help: "A space's slug; repeat for several.") var spaces: [String] = []
    @Option(name: .customLong("photo"), help: "An image file to attach; repeat for several.") var photos: [String] = []
    @Option(help: "A link to share.") var link: String?
    @Flag(help: "Print the created post as JSON.") var json = false

    func run() async throws {
        let client = try options.client()
        let post = try await reporting {
            var media: [String] = []
            for path in photos {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("cannot read \(path)")
                }
                media.append(try await client.upload(data, filename: (path as NSString).lastPathComponent).id)
            }
            let kind: PostKind = !media.isEmpty ? .photo : link != nil ? .link : .text
            return try await client.createPost(
                CreatePostRequest(
                    kind: kind, title: title, body: text, spaces: spaces.isEmpty ? nil : spaces,
                    mediaIds: media.isEmpty ? nil : media,
                    link: link.map(LinkInput.init)))
        }
        if json { return printJSON(post) }
        print("\(post.id) \(client.baseURL.appendingPathComponent("p/\(post.id)").absoluteString)")
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
