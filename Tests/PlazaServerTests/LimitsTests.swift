import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

private let xff = HTTPField.Name("X-Forwarded-For")!
private let forwardedName = HTTPField.Name("Forwarded")!

/// The test server's own loopback peer is the trusted proxy; `X-Forwarded-For` names the client.
private func behindLoopbackProxy(_ config: inout PlazaConfig) {
    config.http.trustedProxies = TrustedProxies(
        blocks: IPBlock("127.0.0.0/8").map { [$0] } ?? [], header: .xForwardedFor)
}

private func ip(_ text: String) throws -> IPAddress { try #require(IPAddress(text)) }

@Suite("Client address: IPv6 /64 keys, trusted proxies, forwarding headers")
struct ClientAddressTests {
    @Test func ipv6ClientsAreKeyedByTheirSlash64AndIPv4ByTheFullAddress() throws {
        #expect(try ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd").clientKey == "2001:db8:1:2::/64")
        #expect(try ip("2001:db8:1:2::1").clientKey == ip("2001:db8:1:2:ffff::9").clientKey)
        #expect(try ip("2001:db8:1:3::1").clientKey != ip("2001:db8:1:2::1").clientKey)
        #expect(try ip("203.0.113.7").clientKey == "203.0.113.7")
        #expect(try ip("203.0.113.7").clientKey != ip("203.0.113.8").clientKey)
        // A dual-stack socket's IPv4-mapped peer is the IPv4 client.
        #expect(try ip("::ffff:203.0.113.7").clientKey == "203.0.113.7")
    }

    @Test func forwardingHeadersFromAnUntrustedPeerAreIgnored() throws {
        let proxies = try TrustedProxies.parse("10.0.0.0/8, fd00::/8", header: "x-forwarded-for")
        let peer = try ip("198.51.100.9")
        #expect(proxies.client(peer: peer, headers: [xff: "203.0.113.1"]) == peer)
        let forwarded = try TrustedProxies.parse("10.0.0.0/8", header: "forwarded")
        #expect(forwarded.client(peer: peer, headers: [forwardedName: "for=203.0.113.1"]) == peer)
        // No proxies configured: always the peer.
        #expect(
            TrustedProxies.none.client(peer: try ip("10.0.0.1"), headers: [xff: "203.0.113.1"]) == (try ip("10.0.0.1")))
    }

    @Test func theRightmostUntrustedHopOfAChainOfTrustedProxiesIsTheClient() throws {
        let proxies = try TrustedProxies.parse("10.0.0.0/8", header: "x-forwarded-for")
        let peer = try ip("10.0.0.2")
        // The client forged 198.51.100.7; the first proxy appended the real 203.0.113.1, the second 10.0.0.1.
        #expect(
            proxies.client(peer: peer, headers: [xff: "198.51.100.7, 203.0.113.1, 10.0.0.1"]) == (try ip("203.0.113.1"))
        )
        // Several header lines are one list; ports and brackets are allowed.
        var lines = HTTPFields()
        lines.append(HTTPField(name: xff, value: "198.51.100.7"))
        lines.append(HTTPField(name: xff, value: "[2001:db8::5]:4711, 10.0.0.1:443"))
        #expect(proxies.client(peer: peer, headers: lines) == (try ip("2001:db8::5")))
        #expect(proxies.client(peer: peer, headers: [xff: "203.0.113.1:8080"]) == (try ip("203.0.113.1")))
        // Every hop is ours: the request began inside.
        #expect(proxies.client(peer: peer, headers: [xff: "10.1.1.1, 10.0.0.1"]) == (try ip("10.1.1.1")))
        // No header: the proxy itself.
        #expect(proxies.client(peer: peer, headers: [:]) == peer)
    }

    @Test func forwardedHeaderWithIPv6PortsAndSeveralProxies() throws {
        let proxies = try TrustedProxies.parse("10.0.0.0/8, fd00::/8", header: "forwarded")
        let peer = try ip("fd00::2")
        let value = #"for=198.51.100.7, for="[2001:db8:cafe::17]:4711";proto=https;by=fd00::1, For="10.0.0.5:80""#
        #expect(proxies.client(peer: peer, headers: [forwardedName: value]) == (try ip("2001:db8:cafe::17")))
        #expect(
            proxies.client(peer: peer, headers: [forwardedName: "for=192.0.2.60;proto=http;by=203.0.113.43"])
                == (try ip("192.0.2.60")))
        #expect(
            proxies.client(peer: peer, headers: [forwardedName: #"for="192.0.2.60:8443""#]) == (try ip("192.0.2.60")))
        // The proxies write Forwarded, so an X-Forwarded-For from the client means nothing.
        #expect(proxies.client(peer: peer, headers: [xff: "192.0.2.99"]) == peer)
    }

    @Test func malformedForwardingFallsBackToThePeer() throws {
        let xffProxies = try TrustedProxies.parse("10.0.0.0/8", header: "x-forwarded-for")
        let fwdProxies = try TrustedProxies.parse("10.0.0.0/8", header: "forwarded")
        let peer = try ip("10.0.0.2")
        for value in [
            "garbage", "203.0.113.1, not-an-ip", "", " , ", "203.0.113.1:99999999", "0177.0.0.1", "[203.0.113.1]",
            "2001:db8::1%eth0", "unknown",
        ] {
            #expect(xffProxies.client(peer: peer, headers: [xff: value]) == peer, "\(value)")
        }
        for value in [
            "for=unknown", "for=_hidden", "for=\"[2001:db8::1\"", "for", "for=1.2.3.4;for=5.6.7.8", "by=10.0.0.1",
            "for=\"1.2.3.4",
            "for=\"\\1.2.3.4\"", "f o r=1.2.3.4", "for=[2001:db8::1]:x",
        ] {
            #expect(fwdProxies.client(peer: peer, headers: [forwardedName: value]) == peer, "\(value)")
        }
        // Junk the client put left of the proxy's own entry does not matter: the proxy's hop decides.
        #expect(xffProxies.client(peer: peer, headers: [xff: "\"oops, [, 203.0.113.1"]) == (try ip("203.0.113.1")))
        #expect(
            fwdProxies.client(peer: peer, headers: [forwardedName: #"for="unterminated, for=203.0.113.1"#])
                == (try ip("203.0.113.1")))
        // An over-long chain of our own hops: the peer.
        let chain = Array(repeating: "10.0.0.1", count: 40).joined(separator: ", ")
        #expect(xffProxies.client(peer: peer, headers: [xff: chain]) == peer)
        #expect(xffProxies.client(peer: peer, headers: [xff: String(repeating: "1", count: 10_000)]) == peer)
    }

    @Test func configurationParsesTheProxyListAndRefusesBadEntries() throws {
        let proxies = try TrustedProxies.parse(" 10.0.0.0/8 ,, ::1 ", header: "Forwarded")
        #expect(proxies.blocks.map(\.description) == ["10.0.0.0/8", "::1/128"])
        #expect(proxies.header == .forwarded)
        #expect(throws: TrustedProxies.ParseError.self) {
            try TrustedProxies.parse("10.0.0.0/33", header: "x-forwarded-for")
        }
        #expect(throws: TrustedProxies.ParseError.self) {
            try TrustedProxies.parse("proxy.local", header: "x-forwarded-for")
        }
        #expect(throws: TrustedProxies.ParseError.self) { try TrustedProxies.parse("", header: "x-real-ip") }
    }
}

@Suite("Rate limits: before authentication, per address, bounded")
struct RateLimitTests {
    static let tight = RateLimiter.Policy(
        reads: .init(burst: 3, perMinute: 1), writes: .init(burst: 3, perMinute: 1),
        registrations: .init(burst: 1, perMinute: 1))

    @Test func invalidTokensCountAgainstTheAddress() async throws {
        try await withApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = Self.tight
        }) { api async throws in
            for _ in 0..<3 {
                #expect(try await api.call(.get, "/feed/global", token: "made-up-token").status == .unauthorized)
            }
            // The address has spent its budget on bad tokens: anonymous reads and further tokens wait.
            let anonymous = try await api.get("/feed/global")
            #expect(anonymous.status == .tooManyRequests)
            #expect(Int(anonymous.headers[.retryAfter] ?? "") ?? 0 > 0)
            #expect(try await api.call(.get, "/feed/global", token: "another-made-up-token").status == .tooManyRequests)
            // A forged web session cookie is the same.
            #expect(
                try await api.page(.get, "/explore", cookie: "\(WebSession.sessionCookie)=forged").status
                    == .tooManyRequests)
        }
    }

    @Test func signedInPeopleBehindOneAddressHaveTheirOwnBuckets() async throws {
        try await withApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = .init(
                reads: Self.tight.reads, writes: Self.tight.writes, registrations: .init(burst: 5, perMinute: 1))
        }) {
            api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            for _ in 0..<3 { #expect(try await api.get("/feed/global", as: ana).status == .ok) }
            #expect(try await api.get("/feed/global", as: ana).status == .tooManyRequests)
            #expect(try await api.get("/feed/global", as: bob).status == .ok)
            // The same budget through the web app's pages (one limiter for both).
            #expect(try await api.page(.get, "/explore", cookie: ana.cookie).status == .tooManyRequests)
        }
    }

    @Test func anonymousTrafficFromAnAddressDoesNotLockOutThoseSignedInThere() async throws {
        try await withApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = Self.tight
        }) { api async throws in
            let ana = try await api.register("ana")
            for _ in 0..<3 { #expect(try await api.get("/feed/global").status == .ok) }
            #expect(
                try await api.get("/feed/global").status == .tooManyRequests, "the address's anonymous budget is spent")
            #expect(try await api.get("/feed/global", as: ana).status == .ok)
            #expect(try await api.page(.get, "/explore", cookie: ana.cookie).status == .ok)
        }
    }

    @Test func clientsBehindATrustedProxyAreKeyedByTheForwardedAddress() async throws {
        try await withLiveApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = Self.tight
            behindLoopbackProxy(&$0)
        }) { api, _ async throws in
            // Sign-ups through the proxy come from different people (the issue's 30-sign-up wall).
            for (i, address) in ["203.0.113.1", "203.0.113.2", "2001:db8:1:2::1", "2001:db8:1:3::1"].enumerated() {
                let body = RegisterRequest(username: "user\(i)", email: "u\(i)@example.com", password: "long enough")
                #expect(
                    try await api.call(.post, "/auth/register", json: body, headers: [xff: address]).status == .created,
                    "\(address)")
            }
            // Another host in the same IPv6 /64 is the same client.
            let same64 = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(username: "user9", email: "u9@example.com", password: "long enough"),
                headers: [xff: "2001:db8:1:2::ffff"])
            #expect(same64.status == .tooManyRequests)
            for _ in 0..<3 {
                #expect(try await api.call(.get, "/feed/global", headers: [xff: "198.51.100.1"]).status == .ok)
            }
            #expect(try await api.call(.get, "/feed/global", headers: [xff: "198.51.100.1"]).status == .tooManyRequests)
            #expect(try await api.call(.get, "/feed/global", headers: [xff: "198.51.100.2"]).status == .ok)
        }
    }

    @Test func forwardingHeadersFromAnUntrustedPeerDoNotBuyFreshBuckets() async throws {
        try await withLiveApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = Self.tight
        }) { api, _ async throws in
            for i in 0..<3 {
                #expect(try await api.call(.get, "/feed/global", headers: [xff: "198.51.100.\(i)"]).status == .ok)
            }
            #expect(
                try await api.call(.get, "/feed/global", headers: [xff: "198.51.100.200"]).status == .tooManyRequests)
            #expect(
                try await api.call(.get, "/feed/global", headers: [forwardedName: "for=198.51.100.201"]).status
                    == .tooManyRequests)
        }
    }

    @Test func rateLimitsOffStillMeansOff() async throws {
        try await withApp({
            $0.http.rateLimits = false
            $0.http.rateLimitPolicy = Self.tight
        }) { api async throws in
            for _ in 0..<6 {
                #expect(try await api.call(.get, "/feed/global", token: "made-up-token").status == .unauthorized)
            }
            for _ in 0..<6 { #expect(try await api.get("/feed/global").status == .ok) }
        }
    }

    @Test func lruTableKeepsRecencyOrderAndItsBound() {
        var table = LRUTable<Int>(capacity: 3)
        table.set("a", 1)
        table.set("b", 2)
        table.set("c", 3)
        #expect(table.get("a") == 1)
        #expect(table.keysByRecency == ["a", "c", "b"])
        table.set("d", 4)  // full: the least recently used ("b") goes
        #expect(table.keysByRecency == ["d", "a", "c"])
        #expect(table.peek("b") == nil)
        #expect(table.evictions == 1)
        table.set("c", 30)
        #expect(table.keysByRecency == ["c", "d", "a"])
        #expect(table.removeValue(forKey: "d") == 4)
        #expect(table.keysByRecency == ["c", "a"])
        table.dropStale { $0 < 10 }  // from the cold end while stale: "a" goes, "c" stops it
        #expect(table.keysByRecency == ["c"])
        for i in 0..<100 { table.set("k\(i)", i) }
        #expect(table.count == 3)
        #expect(table.keysByRecency == ["k99", "k98", "k97"])
    }

    @Test func bucketTableIsBoundedAndForgetsOnlyWhatNoLongerMatters() async throws {
        let limit = RateLimiter.Limit(burst: 2, perMinute: 60)
        let buckets = MemoryRateBuckets(capacity: 100, staleAfterMillis: limit.refillMillis)
        let t0: Int64 = 1_000_000
        // A client spends its burst.
        #expect(buckets.take("spender", limit: limit, now: t0) == nil)
        #expect(buckets.take("spender", limit: limit, now: t0) == nil)
        #expect(buckets.take("spender", limit: limit, now: t0) == 1)
        // Many other clients come and go within the refill time; the table stays bounded.
        for i in 0..<10_000 { _ = buckets.take("client\(i)", limit: limit, now: t0 + 100) }
        #expect(buckets.count <= 100)
        // A client active within the table's reach keeps its empty bucket.
        for i in 0..<50 { _ = buckets.take("other\(i)", limit: limit, now: t0 + 200) }
        #expect(buckets.take("recent", limit: limit, now: t0 + 200) == nil)
        #expect(buckets.take("recent", limit: limit, now: t0 + 200) == nil)
        for i in 0..<50 { _ = buckets.take("more\(i)", limit: limit, now: t0 + 300) }
        #expect(buckets.take("recent", limit: limit, now: t0 + 300) == 1, "still limited")
        // Buckets that refilled are dropped as requests pass, without a scan.
        let later = t0 + 300 + limit.refillMillis + 1
        for _ in 0..<60 { _ = buckets.take("latecomer", limit: limit, now: later) }
        #expect(buckets.count < 100)
    }

    @Test func throttleTableIsBoundedToo() async throws {
        let policy = LoginThrottle.Policy.standard
        let entries = MemoryThrottleEntries(capacity: 300, staleAfterMillis: policy.staleAfterMillis)
        let t0: Int64 = 1_000_000
        for i in 0..<5 {
            entries.recordFailure([ThrottleKey(key: "victim", free: 5)], policy: policy, now: t0 + Int64(i))
        }
        #expect((entries.lockedUntil(["victim"], now: t0) ?? 0) > t0)
        for i in 0..<5_000 {
            entries.recordFailure([ThrottleKey(key: "spray\(i)", free: 5)], policy: policy, now: t0 + 10)
        }
        #expect(entries.count <= 300)
        // Past the window and lockout, entries are dropped as failures pass.
        let later = t0 + policy.staleAfterMillis + 1_000
        for _ in 0..<200 { entries.recordFailure([ThrottleKey(key: "later", free: 5)], policy: policy, now: later) }
        #expect(entries.count < 300)
    }
}

@Suite("Sign-in throttle: devices, addresses, one account")
struct SignInThrottleTests {
    static let wrong = "wrong password"

    func login(_ api: TestAPI, _ login: String, _ password: String, from address: String, device: String? = nil)
        async throws -> TestResponse
    {
        var headers: HTTPFields = [xff: address]
        if let device { headers[DeviceTokens.header] = device }
        return try await api.call(
            .post, "/auth/login", json: LoginRequest(login: login, password: password), headers: headers)
    }

    @Test func wrongGuessesFromOneAddressDoNotRefuseTheRightPasswordFromAnother() async throws {
        try await withLiveApp(behindLoopbackProxy) { api, _ async throws in
            let ana = try await api.register("ana")
            for _ in 0..<8 { _ = try await login(api, "ana", Self.wrong, from: "198.51.100.66") }
            #expect(try await login(api, "ana", ana.password, from: "198.51.100.66").status == .tooManyRequests)
            // Ana, elsewhere and on a new device, signs in.
            #expect(try await login(api, "ana", ana.password, from: "203.0.113.10").status == .ok)
            // An IPv6 guesser is one client however many addresses of its /64 it uses.
            for i in 0..<5 { _ = try await login(api, "ana", Self.wrong, from: "2001:db8:66:1::\(i + 1)") }
            #expect(try await login(api, "ana", ana.password, from: "2001:db8:66:1::99").status == .tooManyRequests)
        }
    }

    @Test func aDeviceThatSignedInBeforeIsNotLockedOutByDistributedGuessing() async throws {
        try await withLiveApp(behindLoopbackProxy) { api, _ async throws in
            let ana = try await api.register("ana")
            let first = try await login(api, "ana", ana.password, from: "203.0.113.10")
            let device = try #require(try first.decode(AuthResponse.self).deviceToken)
            // Guessing spread over many addresses, one or two guesses each.
            for i in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccountAllAddresses {
                #expect(try await login(api, "ana", Self.wrong, from: "198.51.100.\(i + 1)").status == .unauthorized)
            }
            // Distributed guessing stays throttled: untrusted clients wait, even with the right password.
            #expect(try await login(api, "ana", Self.wrong, from: "192.0.2.1").status == .tooManyRequests)
            #expect(try await login(api, "ana", ana.password, from: "192.0.2.2").status == .tooManyRequests)
            // Ana's device signs in, from anywhere (here the attacker's own address).
            let trusted = try await login(api, "ana", ana.password, from: "198.51.100.1", device: device)
            #expect(trusted.status == .ok)
            let next = try #require(try trusted.decode(AuthResponse.self).deviceToken)
            // A device has its own small budget.
            for _ in 0..<LoginThrottle.Policy.standard.freeFailuresPerDevice {
                #expect(
                    try await login(api, "ana", Self.wrong, from: "203.0.113.10", device: next).status == .unauthorized)
            }
            #expect(
                try await login(api, "ana", ana.password, from: "203.0.113.10", device: next).status == .tooManyRequests
            )
            // The other device token still works: budgets are per device.
            #expect(try await login(api, "ana", ana.password, from: "203.0.113.10", device: device).status == .ok)
            // A token made for another account, or tampered with, is no device of Ana's.
            let bob = try await api.register("bob")
            let bobs = try #require(
                try await login(api, "bob", bob.password, from: "203.0.113.11").decode(AuthResponse.self).deviceToken)
            #expect(
                try await login(api, "ana", ana.password, from: "203.0.113.11", device: bobs).status == .tooManyRequests
            )
            let tampered = String(device.dropLast()) + (device.last == "A" ? "B" : "A")
            #expect(
                try await login(api, "ana", ana.password, from: "203.0.113.11", device: tampered).status
                    == .tooManyRequests)
        }
    }

    @Test func usernameAndEmailCountAsOneAccount() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for login in ["ana", "ana@example.com", "ANA", "Ana@Example.com", "ana"] {
                #expect(
                    try await api.call(.post, "/auth/login", json: LoginRequest(login: login, password: Self.wrong))
                        .status == .unauthorized)
            }
            #expect(
                try await api.call(
                    .post, "/auth/login", json: LoginRequest(login: "ana@example.com", password: ana.password)
                ).status == .tooManyRequests)
            #expect(
                try await api.logIn(ana)
                    .status == .tooManyRequests)
        }
    }

    @Test func wrongCurrentPasswordsAreThrottledLikeSignIn() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let change = ChangePasswordRequest(currentPassword: Self.wrong, newPassword: "a new password")
            for _ in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccount {
                #expect(try await api.call(.put, "/me/password", as: ana, json: change).status == .forbidden)
            }
            let right = try await api.call(
                .put, "/me/password", as: ana,
                json: ChangePasswordRequest(currentPassword: ana.password, newPassword: "a new password"))
            #expect(right.status == .tooManyRequests)
            #expect(right.headers[.retryAfter] != nil)
            // The same budget as sign-in: guessing cannot alternate between the two.
            #expect(
                try await api.logIn(ana)
                    .status == .tooManyRequests)
        }
    }

    @Test func aTrustedDeviceMayStillConfirmItsPassword() async throws {
        try await withLiveApp(behindLoopbackProxy) { api, _ async throws in
            let ana = try await api.register("ana")
            let auth = try await login(api, "ana", ana.password, from: "203.0.113.10").decode(AuthResponse.self)
            let device = try #require(auth.deviceToken)
            for i in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccountAllAddresses {
                _ = try await login(api, "ana", Self.wrong, from: "198.51.100.\(i + 1)")
            }
            let body = ChangePasswordRequest(currentPassword: ana.password, newPassword: "a new password")
            #expect(
                try await api.call(.put, "/me/password", token: auth.token, json: body, headers: [xff: "203.0.113.10"])
                    .status == .tooManyRequests)
            let trusted = try await api.call(
                .put, "/me/password", token: auth.token, json: body,
                headers: [xff: "203.0.113.10", DeviceTokens.header: device])
            #expect(trusted.status == .noContent)
        }
    }

    @Test func theWebSignInSetsADeviceCookieThatTheFormPresents() async throws {
        try await withLiveApp(behindLoopbackProxy) { api, _ async throws in
            let ana = try await api.register("ana")
            let page = try await api.page(.get, "/login", headers: [xff: "203.0.113.10"])
            let nonce = try #require(page.setCookie(WebSession.nonceCookie)).split(separator: ";")[0]
            let token = try #require(page.pageCSRF)
            let form = formEncode(["login": "ana", "password": ana.password, "_csrf": token])
            let signedIn = try await api.page(
                .post, "/login", cookie: String(nonce), form: form, headers: [xff: "203.0.113.10"])
            #expect(signedIn.status == .seeOther)
            let cookie = try #require(signedIn.setCookie(DeviceTokens.cookieName))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"))
            let device = String(cookie.split(separator: ";")[0])
            for i in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccountAllAddresses {
                _ = try await login(api, "ana", Self.wrong, from: "198.51.100.\(i + 1)")
            }
            let refused = try await api.page(
                .post, "/login", cookie: String(nonce), form: form, headers: [xff: "203.0.113.10"])
            #expect(refused.status == .tooManyRequests)
            let again = try await api.page(
                .post, "/login", cookie: "\(nonce); \(device)", form: form, headers: [xff: "203.0.113.10"])
            #expect(again.status == .seeOther)
        }
    }

    @Test func deviceTokensAreCheckedStrictly() async throws {
        try await withDatabase { db, _ async throws in
            let devices = DeviceTokens(keys: ServerKeyStore(db: db))
            let now = Timestamp(milliseconds: 1_800_000_000_000)
            let token = try await devices.issue(userID: 42, now: now)
            let id = try #require(try await devices.device(token, userID: 42, now: now))
            #expect(id.utf8.count == 22)
            #expect(try await devices.device(token, userID: 43, now: now) == nil)
            #expect(
                try await devices.device(
                    token, userID: 42, now: Timestamp(milliseconds: now.milliseconds + DeviceTokens.lifetimeMillis))
                    == nil)
            let parts = token.split(separator: ".").map(String.init)
            let forged = ["43", parts[1], parts[2], parts[3]].joined(separator: ".")
            #expect(try await devices.device(forged, userID: 43, now: now) == nil)
            for junk in [
                "", ".", "...", "42.1.x.y", String(repeating: "a", count: 300), token + ".",
                "42.+\(parts[1]).\(parts[2]).\(parts[3])", "\(token)=", token.uppercased(),
            ] {
                #expect(try await devices.device(junk, userID: 42, now: now) == nil, "\(junk)")
            }
            // Every other spelling of the signature's last character is refused, including those
            // that differ only in the unused low bits (the same bytes, a non-canonical encoding).
            let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            for character in alphabet where character != token.last {
                let changed = String(token.dropLast()) + String(character)
                #expect(try await devices.device(changed, userID: 42, now: now) == nil, "\(changed)")
            }
            // A second signer on the same database (another app server) accepts the token.
            #expect(try await DeviceTokens(keys: ServerKeyStore(db: db)).device(token, userID: 42, now: now) == id)
        }
    }
}

@Suite("Shared limits: several app servers on one PostgreSQL")
struct SharedLimitsTests {
    /// The throttle and bucket rules, on the store the database kind uses (memory or PostgreSQL).
    func stores(_ db: Database, policy: LoginThrottle.Policy) -> (LoginThrottle, RateLimiter) {
        if db.kind == .postgres {
            let store = PostgresLimitStore(db: db)
            return (LoginThrottle(policy: policy, store: store), RateLimiter(policy: .standard, store: store))
        }
        return (LoginThrottle(policy: policy), RateLimiter(policy: .standard))
    }

    @Test func throttleLockoutGrowsThenExpiresOnEitherStore() async throws {
        try await withDatabase { db, _ async throws in
            let policy = LoginThrottle.Policy(
                freeFailuresPerAccount: 3, freeFailuresPerAddress: 100, windowSeconds: 900, baseLockoutSeconds: 30,
                maxLockoutSeconds: 120)
            let (throttle, _) = stores(db, policy: policy)
            let here = LoginThrottle.Client.untrusted(address: "1.2.3.4")
            let t0 = Timestamp(milliseconds: 1_000_000_000)
            for _ in 0..<2 { try await throttle.recordFailure(account: "id:1", client: here, now: t0) }
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: t0) == nil)
            try await throttle.recordFailure(account: "id:1", client: here, now: t0)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: t0) == 30)
            #expect(
                try await throttle.retryAfter(account: "id:1", client: .untrusted(address: "5.6.7.8"), now: t0) == nil)
            let t1 = Timestamp(milliseconds: t0.milliseconds + 31_000)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: t1) == nil)
            try await throttle.recordFailure(account: "id:1", client: here, now: t1)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: t1) == 60)
            for _ in 0..<10 { try await throttle.recordFailure(account: "id:1", client: here, now: t1) }
            // Capped, never permanent.
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: t1) == 120)
            let later = Timestamp(milliseconds: t1.milliseconds + 121_000)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: later) == nil)
            // After the window the count starts over.
            let muchLater = Timestamp(milliseconds: later.milliseconds + 1_000_000)
            try await throttle.recordFailure(account: "id:1", client: here, now: muchLater)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: muchLater) == nil)
            try await throttle.recordSuccess(account: "id:1", client: here)
            #expect(try await throttle.retryAfter(account: "id:1", client: here, now: later) == nil)
        }
    }

    /// The account-wide budget is out of one address's reach: however long one address keeps
    /// guessing as fast as it is let, another address is never refused.
    @Test func oneAddressAloneNeverTriggersTheAccountWideLockout() async throws {
        try await withDatabase { db, _ async throws in
            let (throttle, _) = stores(db, policy: .standard)
            let attacker = LoginThrottle.Client.untrusted(address: "198.51.100.66")
            let owner = LoginThrottle.Client.untrusted(address: "203.0.113.10")
            var failures = 0
            // Four hours, an attempt whenever the attacker is allowed one (checked every 5 s).
            for step in 0..<(4 * 720) {
                let now = Timestamp(milliseconds: 1_000_000_000 + Int64(step) * 5_000)
                if try await throttle.retryAfter(account: "id:7", client: attacker, now: now) == nil {
                    try await throttle.recordFailure(account: "id:7", client: attacker, now: now)
                    failures += 1
                }
                #expect(
                    try await throttle.retryAfter(account: "id:7", client: owner, now: now) == nil,
                    "refused at step \(step)")
            }
            #expect(failures > 40, "the attacker kept guessing: \(failures)")
        }
    }

    @Test func tokenBucketRefillsOnEitherStore() async throws {
        try await withDatabase { db, _ async throws in
            let (_, limiter) = stores(db, policy: .standard)
            let limit = RateLimiter.Limit(burst: 2, perMinute: 60)
            let t0 = Timestamp(milliseconds: 1_000_000)
            #expect(try await limiter.take("k", limit: limit, now: t0) == nil)
            #expect(try await limiter.take("k", limit: limit, now: t0) == nil)
            #expect(try await limiter.take("k", limit: limit, now: t0) == 1)
            #expect(try await limiter.waitIfEmpty("k", limit: limit, now: t0) == 1)
            #expect(try await limiter.take("other", limit: limit, now: t0) == nil)
            #expect(try await limiter.waitIfEmpty("k", limit: limit, now: Timestamp(milliseconds: 1_001_000)) == nil)
            #expect(try await limiter.take("k", limit: limit, now: Timestamp(milliseconds: 1_001_000)) == nil)
            #expect(try await limiter.take("k", limit: limit, now: Timestamp(milliseconds: 1_001_000)) == 1)
        }
    }

    @Test func concurrentTakesNeverSpendATokenTwice() async throws {
        try await withDatabase { db, config async throws in
            // Two limiters as two app servers have them: on PostgreSQL each with its own connection pool.
            try await Database.open(config.database, logger: Logger(label: "test")).withRunning { other in
                let first = stores(db, policy: .standard).1
                let second = db.kind == .postgres ? stores(other, policy: .standard).1 : first
                let limit = RateLimiter.Limit(burst: 10, perMinute: 0.001)
                let now = Timestamp.now
                let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for i in 0..<40 {
                        let limiter = i.isMultiple(of: 2) ? first : second
                        group.addTask { try await limiter.take("shared", limit: limit, now: now) == nil }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(allowed == 10)
            }
        }
    }

    @Test func twoAppServersTogetherAllowTheConfiguredRate() async throws {
        let config = try await TestDatabase.config {
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = RateLimiter.Policy(
                reads: .init(burst: 4, perMinute: 1), writes: .init(burst: 4, perMinute: 1),
                registrations: .init(burst: 2, perMinute: 1))
        }
        let one = try await buildApplication(config: config, logger: Logger(label: "test"))
        let two = try await buildApplication(config: config, logger: Logger(label: "test"))
        try await one.test(.router) { first in
            try await two.test(.router) { second in
                let a = TestAPI(client: first, config: config)
                let b = TestAPI(client: second, config: config)
                let ana = try await a.register("ana")
                var served = 0
                for i in 0..<8 where try await (i.isMultiple(of: 2) ? a : b).get("/feed/global", as: ana).status == .ok
                { served += 1 }
                // Failed sign-ins on either server count in one budget.
                for i in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccount {
                    _ = try await (i.isMultiple(of: 2) ? a : b).call(
                        .post, "/auth/login", json: LoginRequest(login: "ana", password: "wrong password"))
                }
                let afterFailures = try await b.logIn(ana)
                if TestDatabase.postgresURL != nil {
                    #expect(served == 4, "two servers share one budget of 4")
                    #expect(afterFailures.status == .tooManyRequests)
                } else {
                    // SQLite has one server by design; each process keeps its own budgets in memory.
                    #expect(served == 8)
                }
            }
        }
        TestDatabase.dispose(config)
    }

    @Test func maintenanceExpiresOldLimitRows() async throws {
        try await withDatabase { db, _ async throws in
            guard db.kind == .postgres else { return }
            let store = PostgresLimitStore(db: db)
            let limit = RateLimiter.Limit(burst: 2, perMinute: 60)
            let policy = LoginThrottle.Policy.standard
            _ = try await store.take("old", limit: limit, now: 1_000)
            _ = try await store.take("new", limit: limit, now: 10_000_000)
            try await store.recordFailure([ThrottleKey(key: "old", free: 5)], policy: policy, now: 1_000)
            try await store.recordFailure([ThrottleKey(key: "new", free: 5)], policy: policy, now: 10_000_000)
            try await store.prune(now: 10_000_000, bucketAge: 60_000, throttleAge: policy.staleAfterMillis)
            let buckets = try await db.read {
                try await $0.rows("SELECT name FROM rate_buckets").map {
                    try $0.decode(column: "name", as: String.self)
                }
            }
            let entries = try await db.read {
                try await $0.rows("SELECT name FROM login_throttle").map {
                    try $0.decode(column: "name", as: String.self)
                }
            }
            #expect(buckets == ["new"])
            #expect(entries == ["new"])
        }
    }
}
