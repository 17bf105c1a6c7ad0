import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback HTTP/1.1 proxy in front of a test server that loses requests as a subway does:
/// it can drop a connection before the request reaches the server, or after the server has
/// answered (the work is done, the answer lost). One request per connection (it answers
/// `Connection: close`); each request goes to the server on a connection of its own.
final class FlakyProxy: @unchecked Sendable {
    // @unchecked: the mutable state is guarded by `lock`.
    enum Fate: Sendable {
        case pass
        /// Closed before anything reaches the server.
        case dropBeforeServer
        /// Sent to the server, whose whole answer is read and thrown away; the client's connection is closed.
        case dropAfterServer
    }

    struct Exchange: Sendable {
        var method: String
        var path: String
        var status: Int?
        var replayed: Bool
        var fate: Fate
    }

    let port: Int
    private let listener: Int32
    private let serverPort: @Sendable () -> Int
    private let lock = NSLock()
    private var decide: @Sendable (_ method: String, _ path: String) -> Fate = { _, _ in .pass }
    private var exchanges: [Exchange] = []

    /// A proxy on a free loopback port, in front of whatever port `serverPort` names at each request.
    init(serverPort: @escaping @Sendable () -> Int) throws {
        self.serverPort = serverPort
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
        }
        guard bound, listen(fd, 64) == 0 else {
            _ = closeSocket(fd)
            throw ProxyError.cannotListen
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    enum ProxyError: Error { case cannotListen }

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// What becomes of each request from now on.
    func setFate(_ decide: @escaping @Sendable (_ method: String, _ path: String) -> Fate) {
        lock.withLock { self.decide = decide }
    }

    /// Every request seen so far, in order.
    var seen: [Exchange] { lock.withLock { exchanges } }

    func close() { shutdown(listener, Int32(SHUT_RDWR)) }

    deinit { _ = closeSocket(listener) }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let thread = Thread { [self] in
                serve(client)
                _ = closeSocket(client)
            }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        guard let request = Self.readRequest(client) else { return }
        let (method, path) = request.line
        let fate = lock.withLock { decide(method, path) }
        var exchange = Exchange(method: method, path: path, status: nil, replayed: false, fate: fate)
        guard fate != .dropBeforeServer, let answer = Self.forward(request.bytes, to: serverPort()) else {
            return lock.withLock { exchanges.append(exchange) }
        }
        let head = String(decoding: answer.prefix(4096), as: UTF8.self)
        exchange.status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        exchange.replayed = head.lowercased().contains("idempotent-replayed: true")
        // Recorded before the client can have the answer, so a test that got it sees the exchange.
        lock.withLock { exchanges.append(exchange) }
        guard fate == .pass else { return }
        Self.writeAll(client, answer)
    }

    /// The request's bytes with `Connection: close`, and its method and path.
    static func readRequest(_ fd: Int32) -> (bytes: [UInt8], line: (String, String))? {
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard let chunk = read(fd) else { return nil }
            buffer += chunk
            headEnd = find([13, 10, 13, 10], in: buffer).map { $0 + 4 }
        }
        guard let end = headEnd else { return nil }
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let length =
            lines.first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
        while buffer.count < end + length {
            guard let chunk = read(fd) else { return nil }
            buffer += chunk
        }
        let parts = lines.first?.split(separator: " ").map(String.init) ?? []
        guard parts.count >= 2 else { return nil }
        lines.removeAll { $0.lowercased().hasPrefix("connection:") }
        let newHead = (lines + ["Connection: close", "", ""]).joined(separator: "\r\n")
        return (Array(newHead.utf8) + buffer[end..<(end + length)], (parts[0], parts[1]))
    }

    /// Sends `bytes` to the server and reads its answer to the end (it closes: `Connection: close`).
    static func forward(_ bytes: [UInt8], to port: Int) -> [UInt8]? {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { _ = closeSocket(fd) }
        var address = loopback(port: port)
        let connected = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        writeAll(fd, bytes)
        var answer: [UInt8] = []
        while let chunk = read(fd) { answer += chunk }
        return answer.isEmpty ? nil : answer
    }

    static func read(_ fd: Int32) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(chunk[..<count]) : nil
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
        #else
            let flags: Int32 = 0
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// `close(2)`, which a class with a `close()` of its own cannot name unqualified.
private func closeSocket(_ fd: Int32) -> Int32 { close(fd) }
