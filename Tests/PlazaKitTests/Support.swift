import Crypto
import Foundation
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `plaza serve` as a child process on a loopback port and a temp SQLite data dir, as an app
/// would meet it. The binary is PLAZA_BIN, else the package's `.build/debug/plaza`.
final class PlazaProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this server, one call at a time.
    let dataDir: URL
    let log: URL
    private(set) var port = 0
    private var process: ChildProcess?

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["PLAZA_BIN"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/plaza")
    }

    init() throws {
        dataDir = FileManager.default.temporaryDirectory.appendingPathComponent("plazakit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDir, withIntermediateDirectories: true)
        log = dataDir.appendingPathComponent("plaza.log")
        try Data().write(to: log)
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A port nothing listens on: the kernel's pick for a socket bound to port 0.
    static func freePort() -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts the server (on the same port as before when restarting) and waits until it listens.
    /// A first start whose free port another test took in the meantime (the pick and the bind
    /// are apart) starts again on a new one.
    func start() async throws {
        let first = port == 0
        for attempt in 1...5 {
            if first { port = Self.freePort() }
            if try await launch() { return }
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            guard first, attempt < 5, text.contains("Address already in use") else { break }
        }
        throw ServerError(
            message: "plaza serve did not start:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// Runs `plaza serve` on `port`; true once it listens, false if it exited first.
    private func launch() async throws -> Bool {
        stop()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLAZA_") }
        environment["PLAZA_BCRYPT_COST"] = "10"
        environment["PLAZA_RATE_LIMITS"] = "off"
        environment["PLAZA_LINK_PREVIEW_PUBLIC"] = "off"
        let linesBefore = (try? String(contentsOf: log, encoding: .utf8))?.count ?? 0
        let child = try ChildProcess(
            Self.binary.path,
            arguments: ["serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir.path],
            environment: environment, output: log.path)
        self.process = child
        // A hang guard counted in looks, not in time: a starved test process (the machine busy
        // with other suites) looks less often, and still gives the server 2,400 looks to start.
        for _ in 0..<2_400 {
            let text = String((try? String(contentsOf: log, encoding: .utf8))?.dropFirst(linesBefore) ?? "")
            if text.contains("listening on 127.0.0.1:\(port)") { return true }
            guard child.isRunning else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// SIGTERM and wait: open streams are closed by the server's graceful shutdown.
    func stop() {
        process?.terminate()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDir)
    }

    struct ServerError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

/// A child process started with `posix_spawn`, its output appended to a file. Not Foundation's
/// `Process`: in Swift 6.3.1 on Linux, `Process.run()` reads past a buffer while it lists
/// /proc/self/fd and now and then crashes the whole test process with SIGSEGV
/// (swift-corelibs-foundation pull request 5472).
final class ChildProcess: @unchecked Sendable {
    // @unchecked: used by the one test that owns it, one call at a time.
    let pid: pid_t
    private var exited = false

    init(_ path: String, arguments: [String], environment: [String: String], output: String) throws {
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_APPEND, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The child gets no other descriptor of the test process (its sockets, other servers' files).
        #if canImport(Glibc)
            // glibc 2.34+ has it; Swift's Glibc module does not declare it.
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else {
                throw PlazaProcess.ServerError(
                    message: "posix_spawn_file_actions_addclosefrom_np needs glibc 2.34 or newer")
            }
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            var attributes = posix_spawnattr_t()
        #else
            var attributes: posix_spawnattr_t?
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // No signal blocked or ignored: the spawning thread (a dispatch worker) blocks most of them.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var pid: pid_t = 0
        let failed = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard failed == 0 else {
            throw PlazaProcess.ServerError(message: "\(path): \(String(cString: strerror(failed)))")
        }
        self.pid = pid
    }

    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) != 0 { exited = true }
        return !exited
    }

    /// Blocks until the child has exited.
    func waitUntilExit() {
        guard !exited else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        exited = true
    }

    /// SIGTERM, then waits for the child to exit; SIGKILL if it has not within 10 s.
    func terminate() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        guard isRunning else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        exited = true
    }
}

extension PlazaProcess {
    /// A client signed in as a new administrator, made with `plaza user create --admin` on the
    /// server's data folder (there is no route for that, by design).
    func admin(_ username: String) async throws -> PlazaClient {
        let password = "correct horse battery"
        let child = try ChildProcess(
            Self.binary.path,
            arguments: [
                "user", "create", "--username", username, "--email", "\(username)@example.com", "--password",
                password, "--admin", "--data-dir", dataDir.path,
            ],
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLAZA_") },
            output: log.path)
        while child.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        let client = PlazaClient(baseURL: url, transport: URLSessionTransport())
        _ = try await client.login(username, password: password)
        return client
    }
}

/// Runs `body` with a fresh server; the server stops afterwards.
func withServer(_ body: (PlazaProcess) async throws -> Void) async throws {
    let server = try PlazaProcess()
    try await server.start()
    defer { server.stop() }
    try await body(server)
}

/// A client of `server` with its own token store, signed up as `username`.
func signedUp(_ username: String, on server: PlazaProcess, transport: any HTTPTransport = URLSessionTransport())
    async throws -> PlazaClient
{
    let client = PlazaClient(baseURL: server.url, transport: transport)
    try await client.register(username: username, email: "\(username)@example.com", password: "correct horse battery")
    return client
}

/// A real PNG of `width` × `height` pixels in one colour (stored zlib blocks; no image library needed).
func png(width: Int, height: Int, rgb: (UInt8, UInt8, UInt8) = (200, 60, 90)) -> Data {
    func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
    func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }
    var raw: [UInt8] = []
    for _ in 0..<height {
        raw.append(0)
        for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] }
    }
    var zlib: [UInt8] = [0x78, 0x01]
    var offset = 0
    repeat {
        let size = min(65_535, raw.count - offset)
        let last: UInt8 = offset + size == raw.count ? 1 : 0
        zlib += [last, UInt8(size & 0xFF), UInt8(size >> 8), UInt8(~size & 0xFF), UInt8((~size >> 8) & 0xFF)]
        zlib += raw[offset..<offset + size]
        offset += size
    } while offset < raw.count
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in raw {
        a = (a + UInt32(byte)) % 65_521
        b = (b + a) % 65_521
    }
    zlib += be32(b << 16 | a)
    let header = be32(UInt32(width)) + be32(UInt32(height)) + [8, 2, 0, 0, 0]
    return Data(
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib)
            + chunk("IEND", []))
}

/// What an authenticator app shows (RFC 6238: HMAC-SHA1, 30 s, 6 digits), `offset` steps from now.
func authenticatorCode(_ secret: [UInt8], offset: Int64) -> String {
    let step = Int64(Date().timeIntervalSince1970) / 30 + offset
    let mac = Array(
        HMAC<Insecure.SHA1>.authenticationCode(
            for: withUnsafeBytes(of: UInt64(step).bigEndian) { Data($0) }, using: SymmetricKey(data: secret)))
    let offset = Int(mac[19] & 0x0f)
    let value =
        (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])) % 1_000_000
    return String(format: "%06d", value)
}

/// RFC 4648 base32, as the server shows the secret.
func base32Decode(_ text: String) -> [UInt8]? {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    var out: [UInt8] = []
    var buffer = 0
    var bits = 0
    for char in text {
        guard let value = alphabet.firstIndex(of: char) else { return nil }
        buffer = (buffer << 5 | value) & 0xffff
        bits += 5
        if bits >= 8 {
            out.append(UInt8((buffer >> (bits - 8)) & 0xff))
            bits -= 8
        }
    }
    return out
}

/// A mail the server wrote to `<data-dir>/outbox/` (the tests configure no SMTP server): its
/// `To` and `Subject` headers and its text part.
struct OutboxMail: Sendable {
    var to: String
    var subject: String
    var text: String

    /// The token of the link to `path` in the text, e.g. `/reset-password` in `…/reset-password?token=…`.
    func token(of path: String) -> String? {
        guard let range = text.range(of: path + "?token=") else { return nil }
        return String(
            text[range.upperBound...].prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    }

    /// Reads what the server writes: headers, then multipart/alternative with base64 parts.
    init?(_ data: Data) {
        let raw = String(decoding: data, as: UTF8.self)
        guard let split = raw.range(of: "\r\n\r\n") else { return nil }
        var headers: [String: String] = [:]
        for line in raw[..<split.lowerBound].components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        guard let type = headers["content-type"], type.hasPrefix("multipart/alternative"),
            let start = type.range(of: "boundary=\"")
        else { return nil }
        let boundary = type[start.upperBound...].prefix { $0 != "\"" }
        var text: String?
        for part in raw[split.upperBound...].components(separatedBy: "--\(boundary)") {
            guard let body = part.range(of: "\r\n\r\n"),
                part[..<body.lowerBound].lowercased().contains("content-type: text/plain")
            else { continue }
            let encoded = part[body.upperBound...].components(separatedBy: "\r\n").joined()
            text = Data(base64Encoded: encoded).map { String(decoding: $0, as: UTF8.self) }
        }
        guard let text, let to = headers["to"], let subject = headers["subject"] else { return nil }
        (self.to, self.subject, self.text) = (to, subject, text)
    }
}

extension PlazaProcess {
    /// The outbox's mails to `address` whose text contains `text`, oldest first, once `count` of
    /// them are there: the server's mail worker writes them beside the test.
    func mails(to address: String, containing text: String = "", count: Int = 1) async throws -> [OutboxMail] {
        let folder = dataDir.appendingPathComponent("outbox")
        // A hang guard counted in looks (60 s of them), like `PlazaProcess.start()`'s; each file is read once.
        var read: [String: OutboxMail] = [:]
        for _ in 0..<1_200 {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
                .filter { $0.hasSuffix(".eml") }
                .sorted { (Int64($0.dropLast(4)) ?? 0) < (Int64($1.dropLast(4)) ?? 0) }
            for name in names where read[name] == nil {
                if let mail = (try? Data(contentsOf: folder.appendingPathComponent(name))).flatMap(OutboxMail.init) {
                    read[name] = mail
                }
            }
            let found = names.compactMap { read[$0] }.filter {
                $0.to == address && (text.isEmpty || $0.text.contains(text))
            }
            if found.count >= count { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServerError(message: "fewer than \(count) mails to \(address) in \(folder.path)")
    }
}
