import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

#if canImport(Glibc)
    import Glibc
#endif

/// HTTPS-only cookies and HSTS, private responses, session lifetimes, and connections that
/// slow or oversized clients cannot hold.
@Suite("Transport security, caching and connection limits")
struct TransportSecurityTests {
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    static func signUp(_ api: TestAPI, headers: HTTPFields = [:]) async throws -> TestResponse {
        let page = try await api.page(.get, "/signup", headers: headers)
        let nonce = try #require(page.headers[values: .setCookie].first { $0.contains(WebSession.nonceCookie) })
        let cookie = String(nonce.prefix { $0 != ";" })
        let form = formEncode([
            "username": "ana", "email": "ana@example.com", "password": "correct horse battery",
            "_csrf": try #require(page.pageCSRF),
        ])
        return try await api.page(.post, "/signup", cookie: cookie, form: form, headers: headers)
    }

    @Test func anHTTPSPublicURLMakesHostPrefixedSecureCookiesAndHSTS() async throws {
        try await withApp({ $0.publicURL = "https://plaza.example.com" }) { api in
            let response = try await Self.signUp(api)
            #expect(response.status == .seeOther, "\(response.text)")
            let session = try #require(response.setCookie("__Host-" + WebSession.sessionCookie))
            #expect(session.contains("Secure") && session.contains("Path=/") && !session.contains("Domain"))
            #expect(response.headers[.strictTransportSecurity] == "max-age=31536000")
            // The browser sends it back under its prefixed name, and is signed in.
            let value = String(session.dropFirst("__Host-\(WebSession.sessionCookie)=".count).prefix { $0 != ";" })
            let home = try await api.page(.get, "/", cookie: "__Host-\(WebSession.sessionCookie)=\(value)")
            #expect(home.text.contains(#"data-signed-in="ana""#))
            #expect(try await api.get("/feed/global").headers[.strictTransportSecurity] != nil)
            // Over HTTPS the plain name is not read: a cookie planted by another host or an HTTP
            // page (which cannot set a __Host- one) does not sign anyone in.
            let planted = try await api.page(.get, "/", cookie: "\(WebSession.sessionCookie)=\(value)")
            #expect(!planted.text.contains(#"data-signed-in="ana""#))
            #expect(
                try await api.call(.get, "/me", headers: [.cookie: "\(WebSession.sessionCookie)=\(value)"]).status
                    == .unauthorized)
        }
    }

    @Test func onlyATrustedProxySaysTheClientUsedHTTPS() async throws {
        try await withLiveApp({
            $0.http.trustedProxies = (try? TrustedProxies.parse("127.0.0.1", header: "x-forwarded-for")) ?? .none
        }) { api, _ in
            let proxied = try await Self.signUp(api, headers: [Self.forwardedProto: "https"])
            #expect(proxied.setCookie("__Host-" + WebSession.sessionCookie)?.contains("Secure") == true)
            #expect(proxied.headers[.strictTransportSecurity] != nil)
            let plain = try await api.call(.get, "/feed/global")
            #expect(plain.headers[.strictTransportSecurity] == nil)
        }
        // Without trusted proxies the same header is anyone's word.
        try await withLiveApp { api, _ in
            let spoofed = try await Self.signUp(api, headers: [Self.forwardedProto: "https"])
            #expect(spoofed.setCookie(WebSession.sessionCookie)?.contains("Secure") == false)
            #expect(spoofed.headers[.strictTransportSecurity] == nil)
        }
    }

    /// A browser keeps nothing of what a signed-in person is shown; an app may keep its own copy
    /// and revalidate it; no shared cache keeps either.
    @Test func signedInAPIResponsesAreNeverCached() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            let cookie: HTTPFields = [.cookie: "\(WebSession.sessionCookie)=\(ana.token)"]
            for path in ["/me", "/feed/home", "/feed/global", "/me/notifications"] {
                #expect(try await api.get(path, as: ana).headers[.cacheControl] == "private, no-cache", "\(path)")
                let browser = try await api.call(.get, path, headers: cookie)
                #expect(browser.status == .ok && browser.headers[.cacheControl] == "no-store", "\(path)")
            }
            #expect(try await api.get("/feed/global").headers[.cacheControl] != "no-store")
            // Their errors too (a 404 is cacheable by default).
            let missing = try await api.get("/collections/1/items", as: ana)
            #expect(missing.status == .notFound && missing.headers[.cacheControl] == "no-store")
        }
    }

    @Test func sessionsEndAtTheirAbsoluteLifetimeHoweverMuchTheyAreUsed() async throws {
        try await withDatabase { db, _ in
            let store = AccountStore(
                db: db, ids: IDGenerator(node: 1), sessionIdleMillis: 86_400_000, sessionMaxMillis: 60_000,
                searchWindows: SearchWindowCache())
            let user = try await store.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let token = try await store.createSession(userID: user, userAgent: nil, ip: nil)
            #expect(try await store.identity(token: token) != nil)
            // Signed in two minutes ago and used a second ago: past the absolute lifetime.
            let now = Timestamp.now.milliseconds
            try await db.write { db in
                try await db.exec(
                    "UPDATE sessions SET created_at = \(bind: now - 120_000), last_used_at = \(bind: now - 1_000)")
            }
            let fresh = AccountStore(
                db: db, ids: IDGenerator(node: 1), sessionIdleMillis: 86_400_000, sessionMaxMillis: 60_000,
                searchWindows: SearchWindowCache())
            #expect(try await fresh.identity(token: token) == nil)
            try await fresh.deleteIdleSessions()
            #expect(try await db.read { db in try await db.first("SELECT id FROM sessions") } == nil)
        }
    }

    // MARK: connections

    /// A TCP connection to the app, with a receive timeout that only guards against a hang.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else { throw POSIXError(.ECONNREFUSED) }
        return fd
    }

    /// Everything the server sends until it closes the connection; nil if it is still open
    /// after the receive timeout. The blocking reads run on a thread of their own: on one of
    /// Swift's cooperative threads (two on a 2-core machine) they starved the app under test,
    /// whose handlers need those threads, until the timeout, and with them every other live
    /// test of the suite (seen with both cores busy).
    static func readUntilClosed(_ fd: Int32) async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: blockingReadUntilClosed(fd)) }
        }
    }

    private static func blockingReadUntilClosed(_ fd: Int32) -> [UInt8]? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return received }
            if count < 0 { return errno == ECONNRESET ? received : nil }
            received += buffer[..<count]
        }
    }

    @Test func aClientThatStopsSendingMidRequestIsDisconnected() async throws {
        try await withLiveApp({ $0.http.idleTimeoutSeconds = 1 }) { _, port in
            let fd = try Self.connect(port: port)
            defer { close(fd) }
            let partial = Array("GET /healthz HTTP/1.1\r\nHost: plaza.test\r\n".utf8)
            _ = send(fd, partial, partial.count, 0)
            // The server closes it: it never answers a request that never ended.
            #expect(await Self.readUntilClosed(fd) == [])
        }
    }

    /// `HeadDeadlineChannel`: the first head has one deadline, however the bytes trickle in.
    @Test func aHeadThatTricklesPastTheIdleTimeoutIsCutOff() async throws {
        try await withLiveApp({ $0.http.idleTimeoutSeconds = 1 }) { _, port in
            let fd = try Self.connect(port: port)
            defer { close(fd) }
            let start = Array("GET /healthz HTTP/1.1\r\nHost: plaza.test\r\nX-Slow: ".utf8)
            _ = send(fd, start, start.count, Int32(MSG_NOSIGNAL))
            // A byte every 50 ms: never idle, and the head never ends. Bounded by bytes, not
            // time: the first head must be read within the idle timeout, so the server closes
            // the connection long before the bytes run out.
            var sent = 0
            var peek: UInt8 = 0
            while sent < 6000 {
                let count = recv(fd, &peek, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
                guard count != 0, send(fd, [UInt8(ascii: "a")], 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                sent += 1
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(sent < 6000, "the server was still reading")
            #expect(await Self.readUntilClosed(fd) == [])
        }
    }

    @Test func aBodyThatTricklesPastTheBodyTimeoutIsRefusedAndTheConnectionClosed() async throws {
        try await withLiveApp({ $0.http.bodyTimeoutSeconds = 1 }) { _, port in
            let fd = try Self.connect(port: port)
            defer { close(fd) }
            let head = Array(
                "POST /api/v1/auth/login HTTP/1.1\r\nHost: plaza.test\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n"
                    .utf8)
            _ = send(fd, head, head.count, Int32(MSG_NOSIGNAL))
            // A byte every 50 ms: never idle, and the body would take 50 minutes. The loop is
            // bounded by bytes, not time: the server must answer long before they run out.
            var answer: [UInt8] = []
            var sent = 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            while sent < 6000 {
                let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0 {
                    answer += buffer[..<count]
                    break
                }
                if count == 0 { break }
                guard send(fd, [UInt8(ascii: " ")], 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                sent += 1
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(sent < 6000, "the server was still reading")
            answer += await Self.readUntilClosed(fd) ?? []
            let text = String(decoding: answer, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 408"), "\(text.prefix(300))")
            #expect(text.contains("body_timeout"))
        }
    }

    @Test func headersOverTheCapAreRefused() async throws {
        try await withLiveApp({ $0.http.maxHeaderBytes = 8 * 1024 }) { _, port in
            let fd = try Self.connect(port: port)
            defer { close(fd) }
            let request = Array(
                "GET /healthz HTTP/1.1\r\nHost: plaza.test\r\nX-Big: \(String(repeating: "a", count: 9000))\r\n\r\n"
                    .utf8)
            _ = send(fd, request, request.count, 0)
            let answer = String(decoding: try #require(await Self.readUntilClosed(fd)), as: UTF8.self)
            #expect(!answer.hasPrefix("HTTP/1.1 2"), "\(answer.prefix(200))")
            // A request under the cap is answered.
            let ok = try Self.connect(port: port)
            defer { close(ok) }
            let small = Array(
                "GET /healthz HTTP/1.1\r\nHost: plaza.test\r\nConnection: close\r\nX-Small: \(String(repeating: "a", count: 4000))\r\n\r\n"
                    .utf8)
            _ = send(ok, small, small.count, 0)
            let small200 = String(decoding: try #require(await Self.readUntilClosed(ok)), as: UTF8.self)
            #expect(small200.hasPrefix("HTTP/1.1 200"))
        }
    }

    /// Only a body-less GET asking for a WebSocket, with its key and version, is an upgrade
    /// (`FirstHeadGuard.plainUnlessWebSocket`); every other request that asks for one is answered
    /// as a plain request (NIO's upgrade handler alone closed them all without a word).
    @Test(arguments: [
        ("GET", "Upgrade: h2c\r\nConnection: upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n", ""),
        ("POST", "Upgrade: h2c\r\nConnection: upgrade\r\n", "{}"),
        ("GET", "Upgrade: websocket\r\n", ""),
        ("GET", "Upgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Version: 12\r\n", ""),
        (
            "POST",
            "Upgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n", "{}"
        ),
        ("GET", "Upgrade: websocket, h2c\r\nConnection: upgrade\r\n", ""),
    ])
    func aRequestAskingForAnotherUpgradeIsAnsweredAsAPlainOne(method: String, headers: String, body: String)
        async throws
    {
        try await withLiveApp { _, port in
            let fd = try Self.connect(port: port)
            defer { close(fd) }
            let request = Array(
                "\(method) /healthz HTTP/1.1\r\nHost: plaza.test\r\nConnection: close\r\n\(headers)"
                    .appending("Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)
            _ = send(fd, request, request.count, Int32(MSG_NOSIGNAL))
            let answer = String(decoding: try #require(await Self.readUntilClosed(fd)), as: UTF8.self)
            // `/healthz` serves GET only: another method is a plain 405.
            let expected = method == "GET" ? "HTTP/1.1 200" : "HTTP/1.1 405"
            #expect(answer.hasPrefix(expected), "\(answer.prefix(200))")
        }
    }
}
