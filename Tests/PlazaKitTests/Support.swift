import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import PlazaKit
@testable import PlazaKitCore

/// `plaza serve` as a child process on a loopback port and a temp SQLite data dir, as an app
/// would meet it. The binary is PLAZA_BIN, else the package's `.build/debug/plaza`.
final class PlazaProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this server, one call at a time.
    let dataDir: URL
    let log: URL
    private(set) var port = 0
    private var process: Process?

    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["PLAZA_BIN"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
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
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts the server (on the same port as before when restarting) and waits until it listens.
    func start() async throws {
        if port == 0 { port = Self.freePort() }
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir.path]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLAZA_") }
        environment["PLAZA_BCRYPT_COST"] = "10"
        environment["PLAZA_RATE_LIMITS"] = "off"
        environment["PLAZA_LINK_PREVIEW_PUBLIC"] = "off"
        process.environment = environment
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        let linesBefore = (try? String(contentsOf: log, encoding: .utf8))?.count ?? 0
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = String((try? String(contentsOf: log, encoding: .utf8))?.dropFirst(linesBefore) ?? "")
            if text.contains("listening on 127.0.0.1:\(port)") { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServerError(message: "plaza serve did not start:\n\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// SIGTERM and wait: open streams are closed by the server's graceful shutdown.
    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDir)
    }

    struct ServerError: Error, CustomStringConvertible { let message: String; var description: String { message } }
}

/// Runs `body` with a fresh server; the server stops afterwards.
func withServer(_ body: (PlazaProcess) async throws -> Void) async throws {
    let server = try PlazaProcess()
    try await server.start()
    defer { server.stop() }
    try await body(server)
}

/// A client of `server` with its own token store, signed up as `username`.
func signedUp(_ username: String, on server: PlazaProcess, transport: any HTTPTransport = URLSessionTransport()) async throws -> PlazaClient {
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
    func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(UInt32(data.count)) + body + be32(crc32(body))
    }
    var raw: [UInt8] = []
    for _ in 0..<height { raw.append(0); for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] } }
    var zlib: [UInt8] = [0x78, 0x01]
    var offset = 0
    repeat {
        let size = min(65_535, raw.count - offset)
        let last: UInt8 = offset + size == raw.count ? 1 : 0
        zlib += [last, UInt8(size & 0xFF), UInt8(size >> 8), UInt8(~size & 0xFF), UInt8((~size >> 8) & 0xFF)]
        zlib += raw[offset..<offset + size]
        offset += size
    } while offset < raw.count
    var a: UInt32 = 1, b: UInt32 = 0
    for byte in raw { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
    zlib += be32(b << 16 | a)
    let header = be32(UInt32(width)) + be32(UInt32(height)) + [8, 2, 0, 0, 0]
    return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", []))
}
