import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// A browser's view of the app: pages, forms and the cookie session.
extension TestAPI {
    func page(
        _ method: HTTPRequest.Method = .get, _ path: String, cookie: String? = nil, form: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws
        -> TestResponse
    {
        var headers = extra
        if let cookie { headers[.cookie] = cookie }
        if form != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await client.execute(
            uri: path, method: method, headers: headers, body: form.map { ByteBuffer(string: $0) })
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The API, authenticated the way the web app's scripts are: the session cookie plus (optionally) the CSRF header.
    func cookieCall(
        _ method: HTTPRequest.Method, _ path: String, session: String, csrf: String?, json: String? = nil,
        extra: HTTPFields = [:]
    ) async throws
        -> TestResponse
    {
        var headers = extra
        headers[.cookie] = "\(WebSession.sessionCookie)=\(session)"
        if let csrf { headers[WebSession.csrfHeader] = csrf }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await client.execute(
            uri: "/api/v1" + path, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }
}

extension Account {
    var cookie: String { "\(WebSession.sessionCookie)=\(token)" }
    var csrf: String { WebSession.csrfToken(secret: token) }
}

extension TestResponse {
    /// The value of `name` in the response's Set-Cookie headers, with its attributes.
    func setCookie(_ name: String) -> String? {
        headers[values: .setCookie].first { $0.hasPrefix("\(name)=") }
    }

    /// The CSRF token a page embeds for its forms and scripts.
    var pageCSRF: String? {
        guard let range = text.range(of: #"name="csrf-token" content=""#) else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }
}

func formEncode(_ fields: [String: String]) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(
        separator: "&")
}

@Suite("Web app: pages, cookie sessions and CSRF")
struct WebTests {
    @Test func signingInThroughTheFormSetsAStrictSessionCookie() async throws {
        try await withApp { api async throws in
            _ = try await api.register("ana", password: "correct horse battery")
            // The sign-in page hands an anonymous browser a nonce cookie and the token derived from it.
            let loginPage = try await api.page(.get, "/login")
            #expect(loginPage.status == .ok)
            let nonceCookie = try #require(loginPage.setCookie(WebSession.nonceCookie))
            #expect(nonceCookie.contains("HttpOnly") && nonceCookie.contains("SameSite=Lax"))
            let nonce = String(nonceCookie.dropFirst(WebSession.nonceCookie.count + 1).prefix { $0 != ";" })
            let token = try #require(loginPage.pageCSRF)
            #expect(token == WebSession.csrfToken(secret: nonce))
            let jar = "\(WebSession.nonceCookie)=\(nonce)"

            // No token, or another browser's: refused, and no session is made.
            let forged = try await api.page(
                .post, "/login", cookie: jar, form: formEncode(["login": "ana", "password": "correct horse battery"]))
            #expect(forged.status == .forbidden)
            #expect(forged.setCookie(WebSession.sessionCookie) == nil)
            let foreign = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode([
                    "login": "ana", "password": "correct horse battery",
                    "_csrf": WebSession.csrfToken(secret: "someone-else-entirely"),
                ]))
            #expect(foreign.status == .forbidden)
            // A cross-site form post is refused even with a token (browsers say where it came from).
            let crossSite = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode(["login": "ana", "password": "correct horse battery", "_csrf": token]),
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            #expect(crossSite.status == .forbidden)

            // A wrong password shows the form again with the message and the login kept, and no cookie.
            let wrong = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode(["login": "ana", "password": "nope nope nope", "_csrf": token]))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("Wrong username, email or password.") && wrong.text.contains(#"value="ana""#))
            #expect(wrong.setCookie(WebSession.sessionCookie) == nil)

            // The right one: a redirect to `next` (only ever on this site) and the session cookie.
            let ok = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode([
                    "login": "ana", "password": "correct horse battery", "_csrf": token, "next": "//evil.example/x",
                ]))
            #expect(ok.status == .seeOther)
            #expect(ok.headers[.location] == "/")
            let session = try #require(ok.setCookie(WebSession.sessionCookie))
            #expect(
                session.contains("HttpOnly") && session.contains("SameSite=Lax") && session.contains("Path=/")
                    && !session.contains("Secure"))
            let value = String(session.dropFirst(WebSession.sessionCookie.count + 1).prefix { $0 != ";" })
            let home = try await api.page(.get, "/", cookie: "\(WebSession.sessionCookie)=\(value)")
            #expect(home.text.contains(#"data-signed-in="ana""#))

            // X-Forwarded-Proto from a client that is no trusted proxy changes nothing (HTTPS
            // cookies and HSTS are in TransportSecurityTests).
            let spoofed = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode([
                    "login": "ana", "password": "correct horse battery", "_csrf": token, "next": "/explore",
                ]),
                headers: [HTTPField.Name("X-Forwarded-Proto")!: "https"])
            #expect(spoofed.headers[.location] == "/explore")
            #expect(spoofed.setCookie(WebSession.sessionCookie)?.contains("Secure") == false)
            #expect(spoofed.headers[.strictTransportSecurity] == nil)
        }
    }

    @Test func afterSignInOnlyPathsOnThisSiteAreFollowed() {
        #expect(WebController.safeNext("/p/1?x=2") == "/p/1?x=2")
        for unsafe in [
            "//evil.example", "/\t/evil.example", "/\\evil.example", "/\n/evil.example", "https://evil.example", "evil",
            "/ /x", nil,
        ] {
            #expect(WebController.safeNext(unsafe) == "/", "\(String(describing: unsafe))")
        }
    }

    /// A browser whose session was revoked elsewhere still holds the old cookie: it can sign in
    /// again, and the page clears it.
    @Test func aStaleSessionCookieDoesNotLockTheBrowserOut() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            #expect(try await api.call(.post, "/auth/logout", as: ana).status == .noContent)
            let page = try await api.page(.get, "/login", cookie: ana.cookie)
            #expect(page.setCookie(WebSession.sessionCookie)?.contains("Max-Age=0") == true)
            let nonce = try #require(page.setCookie(WebSession.nonceCookie)).split(separator: ";")[0]
            let token = try #require(page.pageCSRF)
            let again = try await api.page(
                .post, "/login", cookie: "\(ana.cookie); \(nonce)",
                form: formEncode(["login": "ana", "password": ana.password, "_csrf": token]))
            #expect(again.status == .seeOther)
            #expect(again.setCookie(WebSession.sessionCookie) != nil)
        }
    }

    @Test func theCookieSlidesWithUseAndSigningInAgainReplacesTheSession() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let renewed = try #require(
                try await api.page(.get, "/", cookie: ana.cookie).setCookie(WebSession.sessionCookie))
            #expect(
                renewed.hasPrefix("\(ana.cookie);")
                    && renewed.contains("Max-Age=\(api.config.accounts.sessionIdleDays * 86_400)"))
            let again = try await api.page(
                .post, "/login", cookie: ana.cookie,
                form: formEncode(["login": "ana", "password": ana.password, "_csrf": ana.csrf]))
            #expect(again.status == .seeOther)
            #expect(try await api.get("/me", as: ana).status == .unauthorized, "the browser's old session ended")
            let sessions = try await api.cookieCall(
                .get, "/me/sessions",
                session: String(
                    try #require(again.setCookie(WebSession.sessionCookie)).split(separator: ";")[0].dropFirst(
                        WebSession.sessionCookie.count + 1)), csrf: nil)
            #expect(try sessions.decode(Page<Session>.self).items.count == 1)
        }
    }

    @Test func aPlusInAPagesQueryIsASpace() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            #expect(
                try await api.call(
                    .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "ds", name: "Data Science")
                ).status == .created)
            let found = try await api.page(.get, "/spaces?q=data+science").text
            #expect(found.contains("href=\"/s/ds\""))
            #expect(found.contains("value=\"data science\""))
        }
    }

    @Test func signingUpValidatesLikeTheAPIAndLosesNothing() async throws {
        try await withApp { api async throws in
            let page = try await api.page(.get, "/signup")
            let nonce = try #require(page.setCookie(WebSession.nonceCookie)).split(separator: ";")[0]
            let token = try #require(page.pageCSRF)
            let bad = try await api.page(
                .post, "/signup", cookie: String(nonce),
                form: formEncode([
                    "username": "x", "email": "cleo@example.com", "password": "long enough pw", "displayName": "Cleo",
                    "_csrf": token,
                ]))
            #expect(bad.status == .unprocessableContent)
            #expect(
                bad.text.contains(#"value="cleo@example.com""#) && bad.text.contains(#"value="Cleo""#)
                    && bad.text.contains("role=\"alert\""))
            let good = try await api.page(
                .post, "/signup", cookie: String(nonce),
                form: formEncode([
                    "username": "cleo", "email": "cleo@example.com", "password": "long enough pw",
                    "displayName": "Cleo", "_csrf": token,
                ]))
            #expect(good.status == .seeOther)
            #expect(good.setCookie(WebSession.sessionCookie) != nil)
            #expect(try await api.get("/users/cleo").decode(User.self).displayName == "Cleo")
            // Garbage instead of a form is a 400, not a crash.
            let garbage = try await api.page(.post, "/signup", cookie: String(nonce), form: "%%%=&&&")
            #expect(garbage.status == .badRequest)
        }
    }

    @Test func theAPIAcceptsTheCookieOnlyWithTheCSRFHeaderForWrites() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            // Reads need no token.
            let me = try await api.cookieCall(.get, "/me", session: ana.token, csrf: nil)
            #expect(try me.decode(Me.self).user.username == "ana")
            let body = #"{"kind":"text","body":"from the web"}"#
            let missing = try await api.cookieCall(.post, "/posts", session: ana.token, csrf: nil, json: body)
            #expect(missing.status == .forbidden)
            #expect(missing.error?.code == "csrf_failed")
            let others = try await api.cookieCall(.post, "/posts", session: ana.token, csrf: ben.csrf, json: body)
            #expect(others.status == .forbidden)
            let crossSite = try await api.cookieCall(
                .post, "/posts", session: ana.token, csrf: ana.csrf, json: body,
                extra: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            #expect(crossSite.status == .forbidden)
            #expect(try await api.page(.get, "/u/ana").text.contains("from the web") == false)
            let created = try await api.cookieCall(.post, "/posts", session: ana.token, csrf: ana.csrf, json: body)
            #expect(created.status == .created)
            #expect(try created.decode(Post.self).author.username == "ana")
            // A stale cookie is just signed out (no 401 for a page that anyone may read).
            let stale = try await api.cookieCall(.get, "/feed/global", session: "not-a-session", csrf: nil)
            #expect(stale.status == .ok)
            #expect(try await api.cookieCall(.get, "/me", session: "not-a-session", csrf: nil).status == .unauthorized)
        }
    }

    @Test func signingOutRevokesTheSessionAndClearsTheCookie() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let noToken = try await api.page(.post, "/logout", cookie: ana.cookie, form: "")
            #expect(noToken.status == .forbidden)
            #expect(try await api.cookieCall(.get, "/me", session: ana.token, csrf: nil).status == .ok)
            let out = try await api.page(.post, "/logout", cookie: ana.cookie, form: formEncode(["_csrf": ana.csrf]))
            #expect(out.status == .seeOther)
            #expect(out.headers[.location] == "/login")
            #expect(out.setCookie(WebSession.sessionCookie)?.contains("Max-Age=0") == true)
            #expect(try await api.get("/me", as: ana).status == .unauthorized)
        }
    }

    @Test func everyPageCarriesTheSecurityHeadersAndEscapesWhatPeopleWrote() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(
                ana, "<script>alert(1)</script> & more", title: "<img src=x onerror=alert(1)>")
            for path in ["/", "/explore", "/p/\(post.id)", "/u/ana", "/spaces", "/search?q=more", "/login"] {
                let page = try await api.page(.get, path)
                #expect(page.status == .ok, "\(path)")
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                let csp = try #require(page.headers[.contentSecurityPolicy])
                #expect(
                    csp.contains("script-src 'self'") && csp.contains("default-src 'none'")
                        && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe"))
                #expect(page.headers[.cacheControl] == "no-store")
                #expect(page.headers[.xContentTypeOptions] == "nosniff")
                #expect(!page.text.contains("<script>alert") && !page.text.contains("<img src=x"), "\(path)")
                #expect(
                    !page.text.contains(" style=") && !page.text.contains("<script>"),
                    "inline code or styles on \(path) would break the CSP")
            }
            let postPage = try await api.page(.get, "/p/\(post.id)")
            #expect(postPage.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"))
        }
    }

    @Test func aCollectionOlderThanTheNewestHundredHasItsPage() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let oldest = try await api.call(
                .post, "/collections", as: ana, json: CollectionRequest(name: "The first crate")
            ).decode(SavedCollection.self)
            for i in 0..<101 {
                _ = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "crate \(i)"))
            }
            let page = try await api.page(.get, "/collections/\(oldest.id)", cookie: ana.cookie)
            #expect(page.status == .ok && page.text.contains("The first crate"), "\(page.status)")
            #expect(try await api.page(.get, "/collections/not-an-id", cookie: ana.cookie).status == .notFound)
        }
    }

    @Test func pagesAnswerAnonymousOwnerAndOtherUserAsTheAPIDoes() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let post = try await api.textPost(ana, "ana's post", title: "Hello")
            let collection = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "Crate"))
                .decode(SavedCollection.self)

            // Signed-in only pages send an anonymous visitor to sign in, and back afterwards.
            for path in [
                "/compose", "/settings", "/notifications", "/collections", "/collections/\(collection.id)", "/history",
                "/p/\(post.id)/edit",
            ] {
                let page = try await api.page(.get, path)
                #expect(page.status == .seeOther, "\(path)")
                #expect(page.headers[.location]?.hasPrefix("/login?next=%2F") == true, "\(path)")
            }
            // The owner edits; another person gets a 403 page; a private collection is a 404 to others.
            #expect(try await api.page(.get, "/p/\(post.id)/edit", cookie: ana.cookie).status == .ok)
            let notYours = try await api.page(.get, "/p/\(post.id)/edit", cookie: ben.cookie)
            #expect(notYours.status == .forbidden)
            #expect(notYours.headers[.contentType] == "text/html; charset=utf-8")
            #expect(
                try await api.page(.get, "/collections/\(collection.id)", cookie: ana.cookie).text.contains("Crate"))
            #expect(try await api.page(.get, "/collections/\(collection.id)", cookie: ben.cookie).status == .notFound)

            // Edit and delete controls only on one's own posts.
            let asAna = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie).text
            let asBen = try await api.page(.get, "/p/\(post.id)", cookie: ben.cookie).text
            let anonymous = try await api.page(.get, "/p/\(post.id)").text
            #expect(asAna.contains("/p/\(post.id)/edit") && asAna.contains("DELETE /api/v1/posts/\(post.id)"))
            #expect(!asBen.contains("/p/\(post.id)/edit") && !asBen.contains("DELETE /api/v1/posts/\(post.id)"))
            #expect(anonymous.contains("ana&#39;s post") || anonymous.contains("ana's post"))
            #expect(anonymous.contains("Sign in</a> to comment"))

            // Blocks hide both ways, as in the API.
            #expect(try await api.call(.put, "/users/ben/block", as: ana).status == .ok)
            #expect(try await api.page(.get, "/p/\(post.id)", cookie: ben.cookie).status == .notFound)
            #expect(try await api.page(.get, "/u/ana", cookie: ben.cookie).status == .notFound)

            // Unknown pages are HTML 404s; the API keeps its JSON errors.
            let missing = try await api.page(.get, "/no/such/page")
            #expect(missing.status == .notFound)
            #expect(missing.text.contains("<h1>404"))
            #expect(try await api.page(.get, "/p/123").status == .notFound)
            #expect(try await api.get("/posts/123").error?.code == "not_found")
            // Whichever the method, a path no door serves is the web app's 404 page; under the
            // other doors' paths (the APIs, media, OAuth) it is their JSON error.
            let put = try await api.page(.put, "/no/such/page", form: "a=b")
            #expect(put.status == .notFound && put.text.contains("<h1>404"))
            for path in ["/api/v1/no-such-thing", "/api/v2/no-such-thing", "/media/1/2/3", "/oauth/no-such-thing"] {
                let json = try await api.page(.get, path)
                #expect(json.status == .notFound, "\(path)")
                #expect(json.headers[.contentType]?.hasPrefix("application/json") == true, "\(path)")
            }
            // A form's blank fields are absent, not invalid (the search form without JavaScript).
            let search = try await api.page(.get, "/search?type=posts&q=hello&in=all&kind=&near=&radiusKm=")
            #expect(search.status == .ok)
            #expect(search.text.contains("id=\"post-\(post.id)\""))
            // A bad query parameter is a 4xx page, not a 500.
            #expect(try await api.page(.get, "/explore?cursor=nonsense").status == .badRequest)
        }
    }

    @Test func feedsPageByCursorAndServeFragmentsForInfiniteScroll() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for i in 0..<25 { _ = try await api.textPost(ana, "post number \(i)") }
            let first = try await api.page(.get, "/explore").text
            #expect(first.components(separatedBy: "class=\"card post ").count - 1 == 20)
            #expect(first.contains("post number 24") && !first.contains("post number 4<"))
            let next = try #require(
                first.range(of: #"class="more" href=""#).map { first[$0.upperBound...].prefix { $0 != "\"" } })
            let fragment = try await api.page(
                .get, String(next).replacingOccurrences(of: "&amp;", with: "&") + "&fragment=1"
            ).text
            #expect(!fragment.contains("<html"))
            #expect(fragment.components(separatedBy: "class=\"card post ").count - 1 == 5)
            #expect(fragment.contains("post number 0") && !fragment.contains("class=\"more\""))
            let post = try await api.textPost(ana, "fresh one")
            let card = try await api.page(.get, "/fragments/post/\(post.id)").text
            #expect(card.contains("id=\"post-\(post.id)\"") && card.contains("fresh one") && !card.contains("<html"))
        }
    }

    @Test func theSpacePageRemembersTheLastSpaceAndComposeOffersMySpaces() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for slug in ["cs101", "math"] {
                #expect(
                    try await api.call(
                        .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: slug, name: slug.uppercased())
                    ).status == .created)
            }
            #expect(try await api.page(.get, "/spaces/last", cookie: ana.cookie).headers[.location] == "/spaces")
            #expect(try await api.page(.get, "/s/math", cookie: ana.cookie).status == .ok)
            #expect(try await api.page(.get, "/spaces/last", cookie: ana.cookie).headers[.location] == "/s/math")
            let compose = try await api.page(.get, "/compose?space=math", cookie: ana.cookie).text
            #expect(
                compose.contains(#"name="spaces" value="cs101""#) && compose.contains(#"name="spaces" value="math""#))
            #expect(try await api.page(.get, "/s/nowhere").status == .notFound)
        }
    }

    @Test func staticFilesAreServedWithVersionedCaching() async throws {
        try await withApp { api async throws in
            let home = try await api.page(.get, "/").text
            let version = try #require(
                home.range(of: "/assets/app.js?v=").map { home[$0.upperBound...].prefix { $0 != "\"" } })
            let script = try await api.page(.get, "/assets/app.js?v=\(version)")
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(script.text.contains("X-CSRF-Token"))
            #expect(try await api.page(.get, "/assets/app.js").headers[.cacheControl] == "no-cache")
            #expect(try await api.page(.get, "/assets/plaza.css").headers[.contentType] == "text/css; charset=utf-8")
            #expect(try await api.page(.get, "/assets/../Templates/layout.mustache").status == .notFound)
            #expect(try await api.page(.get, "/assets/nothing.js").status == .notFound)
        }
    }

    @Test func scriptsAndStylesAreGzippedForBrowsersThatTakeIt() async throws {
        try await withApp { api async throws in
            for path in ["/assets/app.js", "/assets/plaza.css", "/assets/icon.svg"] {
                let plain = try await api.page(.get, path)
                #expect(plain.headers[.contentEncoding] == nil && plain.headers[.vary] == "Accept-Encoding")
                let zipped = try await api.page(.get, path, headers: [.acceptEncoding: "gzip, deflate, br, zstd"])
                #expect(zipped.headers[.contentEncoding] == "gzip" && zipped.headers[.vary] == "Accept-Encoding")
                let bytes = Array(zipped.body.readableBytesView)
                #expect(bytes.count < plain.body.readableBytes)
                #expect(try Self.gunzip(bytes) == Array(plain.body.readableBytesView), "\(path) unzips to itself")
                let refused = try await api.page(.get, path, headers: [.acceptEncoding: "gzip;q=0, *"])
                #expect(refused.headers[.contentEncoding] == nil)
            }
            // A PNG is compressed already; a page carries the CSRF token, so it is never compressed (BREACH).
            let png = try await api.page(.get, "/assets/icon-192.png", headers: [.acceptEncoding: "gzip"])
            #expect(png.headers[.contentEncoding] == nil && png.headers[.vary] == nil)
            #expect(try await api.page(.get, "/", headers: [.acceptEncoding: "gzip"]).headers[.contentEncoding] == nil)
        }
    }

    @Test(arguments: [
        ("gzip", true), ("GZip;q=0.5", true), ("deflate, gzip", true), ("*", true), ("br", false), ("", false),
        ("gzip;q=0", false), ("gzip; q=0.000", false), ("*;q=0", false), ("gzip;q=0, *", false),
        ("x-gzip", true), ("gzip;q=nonsense", true), (";;,,=", false),
    ])
    func acceptEncodingIsReadAsRFC9110Says(header: String, gzip: Bool) {
        #expect(Gzip.isAccepted(by: header) == gzip, "\(header)")
    }

    /// `bytes` through the system's gzip, which checks the member's CRC and length. Started as
    /// the server starts its children (`ChildProcess`): Foundation's `Process.run()` crashed this
    /// suite now and then, reading past a buffer as it does in the server (see `ChildProcess`).
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gunzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (packed, unpacked) = (
            folder.appendingPathComponent("in.gz").path, folder.appendingPathComponent("out").path
        )
        try Data(bytes).write(to: URL(fileURLWithPath: packed))
        let outcome = try ChildProcess.runBlocking(
            ["/bin/sh", "-c", "gzip -dc \"$0\" > \"$1\"", packed, unpacked], timeout: .seconds(60),
            errorLog: folder.appendingPathComponent("errors").path)
        #expect(outcome.status == 0, "\(outcome.errorTail)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: unpacked)))
    }

    @Test func theNotificationBadgeAndPagesShowWhatHappened() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let post = try await api.textPost(ana, "like me")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: ben).status == .ok)
            try await api.follow(ben, "ana")
            let home = try await api.page(.get, "/", cookie: ana.cookie).text
            #expect(home.contains(#"data-count="2""#))
            let notifications = try await api.page(.get, "/notifications", cookie: ana.cookie).text
            #expect(notifications.contains("ben liked your post") && notifications.contains("ben followed you"))
            let profile = try await api.page(.get, "/u/ana", cookie: ben.cookie).text
            #expect(profile.contains(#"data-follow="ana" aria-pressed="true""#))
            // Ana tracks no activity: her profile shows none to others, and her own card to her.
            #expect(!profile.contains("class=\"heatmap\""))
            #expect(try await api.page(.get, "/u/ana", cookie: ana.cookie).text.contains("class=\"heatmap\""))
            _ = try await api.post(
                ana,
                CreatePostRequest(kind: .activity, body: "Run", activity: ActivityInput(type: "Running", progress: 100))
            )
            #expect(try await api.page(.get, "/u/ana", cookie: ben.cookie).text.contains("class=\"heatmap\""))
        }
    }

    @Test func aPhotoCardLinksToItsPost() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "hi", mediaIds: [media.id]))
            let explore = try await api.page(.get, "/explore").text
            #expect(explore.contains(#"<a class="photo" href="/p/\#(post.id)">"#))
            #expect(!explore.contains("/p/\(media.id)"), "the photo's id is not a post")
        }
    }
}
