import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// A Mastodon app's view of Plaza: its own paths, form or JSON bodies, its tokens.
extension TestAPI {
    func mastodon(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, form: [(String, String)]? = nil,
        json: String? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(string: MastodonTests.encode(form))
        } else if let json {
            headers[.contentType] = "application/json"
            body = ByteBuffer(string: json)
        }
        let response = try await client.execute(uri: path, method: method, headers: headers, body: body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// Registers an app; its client id and secret.
    func mastodonApp(scopes: String = "read write follow push", redirect: String = "https://app.example/cb")
        async throws -> (id: String, secret: String)
    {
        let response = try await mastodon(
            .post, "/api/v1/apps",
            form: [("client_name", "Test App"), ("redirect_uris", redirect), ("scopes", scopes)])
        #expect(response.status == .ok, "register app: \(response.text)")
        let app = try response.json()
        return (try #require(app["client_id"]?.stringValue), try #require(app["client_secret"]?.stringValue))
    }

    /// The code `account` gives `app` on the consent page (allowed), for `redirect`.
    func mastodonCode(
        _ account: Account, app: (id: String, secret: String), scopes: String = "read write follow push",
        redirect: String = "https://app.example/cb", challenge: String? = nil
    ) async throws -> String {
        var query = [
            ("response_type", "code"), ("client_id", app.id), ("redirect_uri", redirect), ("scope", scopes),
            ("state", "xyz"),
        ]
        if let challenge { query += [("code_challenge", challenge), ("code_challenge_method", "S256")] }
        let consent = try await page(.get, "/oauth/authorize?" + MastodonTests.encode(query), cookie: account.cookie)
        #expect(consent.status == .ok, "consent page: \(consent.text)")
        let allowed = try await page(
            .post, "/oauth/authorize", cookie: account.cookie,
            form: MastodonTests.encode(query + [("_csrf", account.csrf), ("decision", "allow")]))
        #expect(allowed.status == .found)
        let location = try #require(allowed.headers[.location])
        #expect(location.hasPrefix(redirect + "?code="))
        #expect(location.hasSuffix("&state=xyz"))
        let components = try #require(URLComponents(string: location))
        return try #require(components.queryItems?.first { $0.name == "code" }?.value)
    }

    /// A token for `account` through the whole authorization-code flow.
    func mastodonToken(_ account: Account, scopes: String = "read write follow push") async throws -> String {
        let app = try await mastodonApp(scopes: scopes)
        let code = try await mastodonCode(account, app: app, scopes: scopes)
        let response = try await mastodon(
            .post, "/oauth/token",
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("client_secret", app.secret), ("redirect_uri", "https://app.example/cb"),
            ])
        #expect(response.status == .ok, "token: \(response.text)")
        return try #require(try response.json()["access_token"]?.stringValue)
    }
}

extension TestResponse {
    func json() throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)) }

    /// The `Link` header's target for `rel`.
    func link(_ rel: String) -> String? {
        guard let header = headers[HTTPField.Name("Link")!] else { return nil }
        for part in header.components(separatedBy: ", ") where part.hasSuffix("rel=\"\(rel)\"") {
            guard let start = part.firstIndex(of: "<"), let end = part.firstIndex(of: ">") else { continue }
            return String(part[part.index(after: start)..<end])
        }
        return nil
    }
}

extension JSONValue {
    var array: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }
    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }
    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }
}

@Suite("Mastodon client API")
struct MastodonTests {
    static func encode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(
            separator: "&")
    }

    // MARK: OAuth

    @Test func appsAreRegisteredFromFormsAndJSON() async throws {
        try await withApp { api async throws in
            let form = try await api.mastodon(
                .post, "/api/v1/apps",
                form: [
                    ("client_name", "Mona"), ("redirect_uris", "mona://oauth\nurn:ietf:wg:oauth:2.0:oob"),
                    ("scopes", "read write:statuses follow"), ("website", "https://mona.example"),
                ])
            #expect(form.status == .ok)
            let app = try form.json()
            #expect(app["name"]?.stringValue == "Mona")
            #expect(app["website"]?.stringValue == "https://mona.example")
            #expect(app["redirect_uri"]?.stringValue == "mona://oauth\nurn:ietf:wg:oauth:2.0:oob")
            #expect(app["redirect_uris"]?.array.count == 2)
            #expect(app["scopes"]?.array.compactMap(\.stringValue) == ["read", "write:statuses", "follow"])
            #expect(app["client_id"]?.stringValue?.isEmpty == false)
            #expect(app["client_secret"]?.stringValue?.isEmpty == false)

            let json = try await api.mastodon(
                .post, "/api/v1/apps",
                json:
                    #"{"client_name":"Ice Cubes","redirect_uris":["icecubesapp://"],"scopes":"read write follow push"}"#
            )
            #expect(json.status == .ok)
            #expect(try json.json()["redirect_uri"]?.stringValue == "icecubesapp://")

            // Bad registrations: a clear 422 in Mastodon's words, nothing stored.
            for (fields, message) in [
                ([("redirect_uris", "https://a.example/cb")], "Application name can't be blank"),
                ([("client_name", "X")], "Redirect URI can't be blank"),
                (
                    [("client_name", "X"), ("redirect_uris", "javascript:alert(1)")],
                    "Redirect URI must be an absolute URI."
                ),
                ([("client_name", "X"), ("redirect_uris", "/relative")], "Redirect URI must be an absolute URI."),
                (
                    [("client_name", "X"), ("redirect_uris", "https://a.example/cb#frag")],
                    "Redirect URI must be an absolute URI."
                ),
                (
                    [("client_name", "X"), ("redirect_uris", "https://a.example/cb"), ("scopes", "read admin:write")],
                    "Scopes are not all known scopes"
                ),
                (
                    [("client_name", "X"), ("redirect_uris", "https://a.example/cb"), ("website", "ftp://x")],
                    "Website is not an http(s) URL"
                ),
            ] {
                let response = try await api.mastodon(.post, "/api/v1/apps", form: fields)
                #expect(response.status == .unprocessableContent, "\(fields)")
                #expect(try response.json()["error"]?.stringValue == "Validation failed: \(message)")
            }
            let count = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT count(*) AS n FROM oauth_apps") }?.decode(
                    column: "n", as: Int.self)
            }
            #expect(count == 2)
            let malformed = try await api.mastodon(.post, "/api/v1/apps", json: "[1,2]")
            #expect(malformed.status == .badRequest)
        }
    }

    @Test func anAppGetsATokenThroughConsentWithPKCE() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let app = try await api.mastodonApp()
            let query = Self.encode([
                ("response_type", "code"), ("client_id", app.id), ("redirect_uri", "https://app.example/cb"),
                ("scope", "read write"), ("state", "s1"), ("force_login", "False"), ("lang", "None"),
            ])
            // Signed out: the sign-in page, which comes back here.
            let signedOut = try await api.page(.get, "/oauth/authorize?" + query)
            #expect(signedOut.status == .seeOther)
            let next = try #require(signedOut.headers[.location])
            #expect(next.hasPrefix("/login?next="))
            let signIn = try await WebSeedStoriesTests.signInThroughTheForm(
                api, "ana", next: try #require(URLComponents(string: next)?.queryItems?.first?.value))
            #expect(signIn.headers[.location] == "/oauth/authorize?" + query)

            // An unknown app or an unregistered redirect is shown here, never sent anywhere.
            let unknown = try await api.page(
                .get, "/oauth/authorize?response_type=code&client_id=nope&redirect_uri=https://evil.example/",
                cookie: ana.cookie)
            #expect(unknown.status == .badRequest)
            #expect(unknown.headers[.location] == nil)
            let evil = try await api.page(
                .get, "/oauth/authorize?response_type=code&client_id=\(app.id)&redirect_uri=https://evil.example/",
                cookie: ana.cookie)
            #expect(evil.status == .badRequest)
            #expect(evil.headers[.location] == nil)
            // A scope the app did not register, or another response type: said here, not sent to the
            // app's address (anyone may register an app: this page redirects nobody unasked).
            for (scope, type) in [("read admin:read", "code"), ("read", "token")] {
                let refused = try await api.page(
                    .get,
                    "/oauth/authorize?"
                        + Self.encode([
                            ("response_type", type), ("client_id", app.id), ("redirect_uri", "https://app.example/cb"),
                            ("scope", scope), ("state", "s2"),
                        ]))
                #expect(refused.status == .badRequest)
                #expect(refused.headers[.location] == nil)
            }

            // The consent page names the app and what it asks for.
            let consent = try await api.page(.get, "/oauth/authorize?" + query, cookie: ana.cookie)
            #expect(consent.status == .ok)
            // Browsers hold the form's redirect to form-action: the app's origin is allowed there.
            #expect(
                consent.headers[.contentSecurityPolicy]?.contains("form-action 'self' https://app.example;") == true)
            #expect(consent.text.contains("Authorize Test App"))
            #expect(consent.text.contains("<code>write</code>"))
            // Denied: the app hears so.
            let denied = try await api.page(
                .post, "/oauth/authorize", cookie: ana.cookie,
                form: query + "&_csrf=\(ana.csrf)&decision=deny")
            #expect(denied.headers[.location]?.hasPrefix("https://app.example/cb?error=access_denied") == true)
            #expect(denied.headers[.location]?.hasSuffix("&state=s1") == true)
            // A forged form (no CSRF token) is refused.
            let forged = try await api.page(
                .post, "/oauth/authorize", cookie: ana.cookie, form: query + "&decision=allow")
            #expect(forged.status == .forbidden)

            // PKCE (S256): the code is redeemed with the verifier, and only once.
            let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
            let challenge = try #require(OAuthStore.challenge(verifier: verifier))
            #expect(challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "RFC 7636's example")
            var code = try await api.mastodonCode(ana, app: app, scopes: "read write", challenge: challenge)
            func exchange(_ fields: [(String, String)]) async throws -> TestResponse {
                try await api.mastodon(.post, "/oauth/token", form: fields)
            }
            let wrongVerifier = try await exchange([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("redirect_uri", "https://app.example/cb"), ("code_verifier", String(repeating: "a", count: 43)),
            ])
            #expect(wrongVerifier.status == .badRequest)
            #expect(try wrongVerifier.json()["error"]?.stringValue == "invalid_grant")
            // That spent the code: even the right verifier cannot use it now.
            let spent = try await exchange([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("redirect_uri", "https://app.example/cb"), ("code_verifier", verifier),
            ])
            #expect(try spent.json()["error"]?.stringValue == "invalid_grant")
            code = try await api.mastodonCode(ana, app: app, scopes: "read write", challenge: challenge)
            // A public client (no secret) with the verifier: a token with the granted scopes.
            let granted = try await exchange([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("redirect_uri", "https://app.example/cb"), ("code_verifier", verifier), ("oauth_info", "issuer"),
            ])
            #expect(granted.status == .ok, "\(granted.text)")
            let body = try granted.json()
            #expect(body["token_type"]?.stringValue == "Bearer")
            #expect(body["scope"]?.stringValue == "read write")
            #expect(body["created_at"]?.number != nil)
            #expect(granted.headers[.cacheControl] == "no-store")
            let token = try #require(body["access_token"]?.stringValue)

            // Without PKCE, a client must give its secret; a wrong one is an unknown client.
            code = try await api.mastodonCode(ana, app: app, scopes: "read")
            let noSecret = try await exchange([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("redirect_uri", "https://app.example/cb"),
            ])
            #expect(try noSecret.json()["error"]?.stringValue == "invalid_grant")
            code = try await api.mastodonCode(ana, app: app, scopes: "read")
            let badSecret = try await exchange([
                ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                ("client_secret", "wrong"), ("redirect_uri", "https://app.example/cb"),
            ])
            #expect(badSecret.status == .unauthorized)
            #expect(try badSecret.json()["error"]?.stringValue == "invalid_client")
            let other = try await exchange([
                ("grant_type", "password"), ("client_id", app.id), ("client_secret", app.secret),
            ])
            #expect(try other.json()["error"]?.stringValue == "unsupported_grant_type")

            // The token is a session: it works, settings list it with the app's name, and revoking ends it.
            let me = try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: token)
            #expect(me.status == .ok)
            #expect(try me.json()["acct"]?.stringValue == "ana")
            let sessions = try await api.get("/me/sessions", as: ana).decode(Page<Session>.self).items
            #expect(sessions.contains { $0.app == "Test App" && $0.scopes == "read write" })
            let settings = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(settings.text.contains("<strong class=\"app\">Test App</strong> (read write)"))
            // An app's token is no browser session, and cannot reach what guards the account.
            let asCookie = try await api.page(.get, "/settings", cookie: "\(WebSession.sessionCookie)=\(token)")
            #expect(asCookie.status == .seeOther, "signed out")
            #expect(try await api.call(.get, "/me/sessions", token: token).status == .forbidden)
            #expect(
                try await api.call(.put, "/me/password", token: token, json: ["password": "new password 123"]).status
                    == .forbidden)
            #expect(
                try await api.call(
                    .delete, "/me", token: token, json: CurrentPasswordRequest(currentPassword: ana.password)
                ).status == .forbidden)
            #expect(try await api.call(.get, "/me/export", token: token).status == .forbidden)
            #expect(
                try await api.page(.get, "/settings", headers: [.authorization: "Bearer \(token)"]).status == .forbidden
            )
            #expect(try await api.call(.get, "/me", token: token).status == .ok)
            let verifyApp = try await api.mastodon(.get, "/api/v1/apps/verify_credentials", token: token)
            #expect(try verifyApp.json()["name"]?.stringValue == "Test App")
            // Another app cannot revoke it (RFC 7009: still 200); its own app can.
            let otherApp = try await api.mastodonApp()
            let notTheirs = try await exchange([])
            #expect(notTheirs.status == .unauthorized)
            let byOther = try await api.mastodon(
                .post, "/oauth/revoke",
                form: [("client_id", otherApp.id), ("client_secret", otherApp.secret), ("token", token)])
            #expect(byOther.status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: token).status == .ok)
            let revoked = try await api.mastodon(
                .post, "/oauth/revoke", form: [("client_id", app.id), ("client_secret", app.secret), ("token", token)])
            #expect(revoked.status == .ok)
            let after = try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: token)
            #expect(after.status == .unauthorized)
            #expect(try after.json()["error"]?.stringValue == "The access token is invalid")
        }
    }

    @Test func outOfBandShowsTheCodeAndMetadataDescribesTheServer() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let oob = "urn:ietf:wg:oauth:2.0:oob"
            let app = try await api.mastodonApp(scopes: "read", redirect: oob)
            let query = Self.encode([("response_type", "code"), ("client_id", app.id), ("scope", "read")])
            let shown = try await api.page(
                .post, "/oauth/authorize", cookie: ana.cookie, form: query + "&_csrf=\(ana.csrf)&decision=allow")
            #expect(shown.status == .ok)
            let code = try #require(
                shown.text.components(separatedBy: "id=\"oauth-code\" class=\"code\" readonly value=\"").dropFirst()
                    .first?
                    .prefix { $0 != "\"" })
            let token = try await api.mastodon(
                .post, "/oauth/token",
                json: """
                    {"grant_type":"authorization_code","code":"\(code)","client_id":"\(app.id)",\
                    "client_secret":"\(app.secret)","redirect_uri":"\(oob)"}
                    """)
            #expect(token.status == .ok, "\(token.text)")

            let metadata = try await api.mastodon(.get, "/.well-known/oauth-authorization-server").json()
            #expect(metadata["authorization_endpoint"]?.stringValue?.hasSuffix("/oauth/authorize") == true)
            #expect(metadata["code_challenge_methods_supported"]?.array == [.string("S256")])
            #expect(metadata["scopes_supported"]?.array.contains(.string("read:statuses")) == true)
        }
    }

    @Test func scopesLimitWhatATokenDoes() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let reader = try await api.mastodonToken(ana, scopes: "read")
            #expect(try await api.mastodon(.get, "/api/v1/timelines/home", token: reader).status == .ok)
            let post = try await api.mastodon(.post, "/api/v1/statuses", token: reader, form: [("status", "hi")])
            #expect(post.status == .forbidden)
            #expect(try post.json()["error"]?.stringValue == "This action is outside the authorized scopes")
            // Plaza's own API: `read` reads, `write` changes.
            #expect(try await api.get("/me", as: nil).status == .unauthorized)
            #expect(try await api.call(.get, "/me", token: reader).status == .ok)
            let plazaPost = try await api.call(
                .post, "/posts", token: reader, json: CreatePostRequest(kind: .text, body: "hi"))
            #expect(plazaPost.status == .forbidden)
            #expect(plazaPost.error?.code == "insufficient_scope")

            // `follow` follows, and posts nothing.
            let follower = try await api.mastodonToken(ana, scopes: "read follow")
            let follow = try await api.mastodon(.post, "/api/v1/accounts/\(bea.id)/follow", token: follower)
            #expect(follow.status == .ok)
            #expect(try follow.json()["following"]?.bool == true)
            #expect(
                try await api.mastodon(.post, "/api/v1/statuses", token: follower, form: [("status", "x")]).status
                    == .forbidden)
            // Granular scopes: write:statuses posts but does not favourite.
            let poster = try await api.mastodonToken(ana, scopes: "read:statuses write:statuses")
            let made = try await api.mastodon(.post, "/api/v1/statuses", token: poster, form: [("status", "hello")])
            #expect(made.status == .ok)
            let id = try #require(try made.json()["id"]?.stringValue)
            #expect(
                try await api.mastodon(.post, "/api/v1/statuses/\(id)/favourite", token: poster).status == .forbidden)
            #expect(try await api.mastodon(.get, "/api/v1/notifications", token: poster).status == .forbidden)

            // An app's own token (client_credentials): public reads and its own credentials only.
            let app = try await api.mastodonApp(scopes: "read write")
            let appToken = try await api.mastodon(
                .post, "/oauth/token",
                form: [
                    ("grant_type", "client_credentials"), ("client_id", app.id), ("client_secret", app.secret),
                    ("scope", "read"),
                ])
            #expect(appToken.status == .ok)
            let bare = try #require(try appToken.json()["access_token"]?.stringValue)
            #expect(try await api.mastodon(.get, "/api/v1/apps/verify_credentials", token: bare).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/timelines/public", token: bare).status == .ok)
            #expect(
                try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: bare).status == .unauthorized
            )
            #expect(try await api.mastodon(.get, "/api/v1/timelines/home", token: bare).status == .unauthorized)
            // Wider than registered: refused.
            let wide = try await api.mastodon(
                .post, "/oauth/token",
                form: [
                    ("grant_type", "client_credentials"), ("client_id", app.id), ("client_secret", app.secret),
                    ("scope", "read push"),
                ])
            #expect(try wide.json()["error"]?.stringValue == "invalid_scope")
            // An unknown token is a 401, even on a public route.
            #expect(try await api.mastodon(.get, "/api/v1/timelines/public", token: "nope").status == .unauthorized)
            #expect(try await api.mastodon(.get, "/api/v1/timelines/public").status == .ok)
        }
    }

    // MARK: entities

    /// Keys of Mastodon's documented examples that Plaza leaves out, per entity, because it has
    /// no such feature (quotes, collections, featured profiles, moved accounts); every other
    /// documented key must be there, with the documented JSON type (or null).
    static let leftOut: [String: Set<String>] = [
        "Account": ["feature_approval"],
        "Status": [
            "quote_approval", "tagged_collections", "account.feature_approval", "media_attachments[].meta.colors",
            // A video's (the recorded status has one); Plaza gives a photo's size only.
            "media_attachments[].meta.original.bitrate", "media_attachments[].meta.original.duration",
            "media_attachments[].meta.original.frame_rate",
        ],
        "MediaAttachment": ["meta.colors"],
        "Instance_v2": [
            "configuration.vapid", "configuration.timelines_access", "configuration.limited_federation",
            "configuration.accounts.max_profile_fields", "configuration.accounts.profile_field_name_limit",
            "configuration.accounts.profile_field_value_limit", "configuration.accounts.max_note_length",
            "configuration.accounts.max_display_name_lenth",  // sic, in the documentation
            // A rule's translations, by language: Plaza's rules are written in one.
            "rules[].translations.de", "rules[].translations.es", "rules[].translations.fr",
            "rules[].translations.nl", "rules[].translations.ru", "rules[].translations.zh-CN",
            "rules[].translations.zh-TW",
        ],
    ]

    /// The documented keys missing from `ours` (dotted paths; `[]` for an array's items), and
    /// those present with another JSON type.
    static func differences(_ documented: JSONValue, _ ours: JSONValue, path: String = "") -> [String] {
        switch (documented, ours) {
        case (.object(let doc), .object(let mine)):
            return doc.keys.sorted().flatMap { key -> [String] in
                let at = path.isEmpty ? key : "\(path).\(key)"
                guard let value = mine[key] else { return [at] }
                return differences(doc[key]!, value, path: at)
            }
        case (.array(let doc), .array(let mine)):
            guard let first = doc.first, let ourFirst = mine.first else { return [] }
            return differences(first, ourFirst, path: path + "[]")
        case (.null, _), (_, .null): return []
        case (.string, .string), (.number, .number), (.bool, .bool): return []
        default: return ["\(path) (type)"]
        }
    }

    static func fixture(_ name: String) throws -> JSONValue {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mastodon/\(name).json")
        return try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: url))
    }

    static func expectDocumented(_ name: String, _ ours: JSONValue, leaving allowed: Set<String>? = nil) throws {
        let missing = differences(try fixture(name), ours).filter {
            !(allowed ?? leftOut[
                name.components(separatedBy: "_").first == "Instance" ? name : String(name.prefix { $0 != "_" })] ?? [])
                .contains($0)
        }
        #expect(missing.isEmpty, "\(name): \(missing)")
    }

    @Test func entitiesHaveTheDocumentedFields() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let anaToken = try await api.mastodonToken(ana)
            let beaToken = try await api.mastodonToken(bea)
            // A photo uploaded through /api/v2/media, in a status.
            let form = MediaFixtures.multipart(
                try MediaFixtures.sample(.jpeg), filename: "p.jpg", contentType: "image/jpeg",
                fields: ["description": "A bowl of ramen"])
            let uploaded = try await api.client.execute(
                uri: "/api/v2/media", method: .post,
                headers: [.authorization: "Bearer \(anaToken)", .contentType: form.contentType], body: form.body)
            #expect(uploaded.status == .ok, "\(String(buffer: uploaded.body))")
            let media = try JSONDecoder().decode(JSONValue.self, from: Data(uploaded.body.readableBytesView))
            try Self.expectDocumented("MediaAttachment", media)
            #expect(media["type"]?.stringValue == "image")
            #expect(media["description"]?.stringValue == "A bowl of ramen", "the upload's alt text")
            let mediaID = try #require(media["id"]?.stringValue)
            let fetched = try await api.mastodon(.get, "/api/v1/media/\(mediaID)", token: anaToken)
            #expect(fetched.status == .ok)
            let described = try await api.mastodon(
                .put, "/api/v1/media/\(mediaID)", token: anaToken, form: [("description", "Ramen with an egg")])
            #expect(try described.json()["description"]?.stringValue == "Ramen with an egg")
            let notHers = try await api.mastodon(
                .put, "/api/v1/media/\(mediaID)", token: beaToken, form: [("description", "mine")])
            #expect(notHers.status == .notFound)
            #expect(try await api.mastodon(.get, "/api/v1/media/\(mediaID)", token: beaToken).status == .notFound)

            let created = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [("status", "Lunch at https://food.example/menu #ramen with @bea"), ("media_ids[]", mediaID)])
            #expect(created.status == .ok, "\(created.text)")
            let status = try created.json()
            try Self.expectDocumented("Status", status)
            try Self.expectDocumented("Status_recorded_with_media", status, leaving: Self.leftOut["Status"])
            #expect(status["visibility"]?.stringValue == "public")
            #expect(status["media_attachments"]?.array.count == 1)
            #expect(status["tags"]?.array.first?["name"]?.stringValue == "ramen")
            #expect(
                status["content"]?.stringValue
                    == "<p>Lunch at <a href=\"https://food.example/menu\" rel=\"nofollow noopener ugc\" target=\"_blank\">https://food.example/menu</a> "
                    + "<a href=\"\(api.config.baseURL)/tags/ramen\" class=\"mention hashtag\" rel=\"tag\">#<span>ramen</span></a> with "
                    + "<span class=\"h-card\"><a href=\"\(api.config.baseURL)/@bea\" class=\"u-url mention\">@<span>bea</span></a></span></p>"
            )
            #expect(status["account"]?["avatar"]?.stringValue?.hasSuffix("/assets/avatars/missing.png") == true)
            let statusID = try #require(status["id"]?.stringValue)

            // A comment is a reply: the post's context holds it.
            let reply = try await api.mastodon(
                .post, "/api/v1/statuses", token: beaToken,
                json: #"{"status":"Looks great","in_reply_to_id":"\#(statusID)"}"#)
            #expect(reply.status == .ok, "\(reply.text)")
            #expect(try reply.json()["in_reply_to_id"]?.stringValue == statusID)
            let context = try await api.mastodon(.get, "/api/v1/statuses/\(statusID)/context", token: beaToken).json()
            try Self.expectDocumented("Context", context)
            #expect(context["descendants"]?.array.first?["content"]?.stringValue == "<p>Looks great</p>")

            #expect(
                try await api.mastodon(.post, "/api/v1/statuses/\(statusID)/favourite", token: beaToken).status == .ok)
            // A reply (a comment) has no favourites: a 422 that says so.
            let replyID = try #require(try reply.json()["id"]?.stringValue)
            let onComment = try await api.mastodon(.post, "/api/v1/statuses/\(replyID)/favourite", token: anaToken)
            #expect(onComment.status == .unprocessableContent)
            let notifications = try await api.mastodon(.get, "/api/v1/notifications", token: anaToken).json()
            let types = notifications.array.compactMap { $0["type"]?.stringValue }
            #expect(types.contains("favourite") && types.contains("mention"), "\(types)")
            for note in notifications.array { try Self.expectDocumented("Notification", note) }

            let account = try await api.mastodon(.get, "/api/v1/accounts/verify_credentials", token: anaToken).json()
            try Self.expectDocumented("Account", account)
            #expect(account["source"]?["note"] != nil)
            #expect(account["statuses_count"]?.number == 1)
            let relationships = try await api.mastodon(
                .get, "/api/v1/accounts/relationships?id[]=\(bea.id)&id[]=999", token: anaToken)
            let relationship = try #require(try relationships.json().array.first)
            #expect(try relationships.json().array.count == 1)
            try Self.expectDocumented("Relationship", relationship)

            for (name, path) in [("Instance_v1", "/api/v1/instance"), ("Instance_v2", "/api/v2/instance/")] {
                let instance = try await api.mastodon(.get, path)
                #expect(instance.status == .ok)
                try Self.expectDocumented(name, try instance.json())
                #expect(
                    try instance.json()["version"]?.stringValue == "4.3.0 (compatible; Plaza \(PlazaVersion.number))")
            }

            let app = try await api.mastodon(
                .post, "/api/v1/apps", form: [("client_name", "A"), ("redirect_uris", "https://a.example/")])
            try Self.expectDocumented("Application", try app.json())
            let marker = try await api.mastodon(
                .post, "/api/v1/markers", token: anaToken,
                form: [("home[last_read_id]", statusID), ("notifications[last_read_id]", "12")])
            #expect(marker.status == .ok)
            let markers = try await api.mastodon(
                .get, "/api/v1/markers?timeline[]=home&timeline[]=notifications", token: anaToken)
            try Self.expectDocumented("Marker", try markers.json())
            #expect(try markers.json()["home"]?["last_read_id"]?.stringValue == statusID)
            // Markers live in the preferences, which a person may write anything into.
            #expect(
                try await api.call(
                    .patch, "/me/preferences", as: ana,
                    raw: #"{"mastodonMarkers":{"home":{"lastReadId":"1","updatedAt":"x","version":1e300}}}"#
                ).status == .ok)
            let odd = try await api.mastodon(.get, "/api/v1/markers?timeline[]=home", token: anaToken)
            #expect(try odd.json()["home"]?["version"]?.number == 0)
            #expect(
                try await api.mastodon(.post, "/api/v1/markers", token: anaToken, form: [("home[last_read_id]", "5")])
                    .status == .ok)
            try Self.expectDocumented(
                "Preferences", try await api.mastodon(.get, "/api/v1/preferences", token: anaToken).json())
            let token = try await api.mastodon(
                .post, "/oauth/token",
                form: [("grant_type", "client_credentials"), ("client_id", "x"), ("client_secret", "y")])
            #expect(token.status == .unauthorized)
        }
    }

    @Test func aLinkPreviewIsTheStatusCard() async throws {
        let mapper = MastodonMapper(baseURL: "https://plaza.example")
        var link = LinkPreview(
            url: "https://www.youtube.com/watch?v=eiHXASgRTcA", title: "A video", description: "About it",
            imageURL: "/media/1/medium?k=x", siteName: "YouTube")
        link.fetchedAt = .now
        let card = try JSONDecoder().decode(JSONValue.self, from: MastodonJSON.encoder.encode(mapper.card(link)))
        try Self.expectDocumented("PreviewCard_link", card, leaving: [])
        #expect(card["type"]?.stringValue == "video")
        #expect(card["image"]?.stringValue == "https://plaza.example/media/1/medium?k=x")
        #expect(card["embed_url"]?.stringValue == "https://www.youtube-nocookie.com/embed/eiHXASgRTcA")
    }

    // MARK: statuses and timelines

    @Test func timelinesPageWithLinkHeadersAndStatusesFollowAudiences() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            try await api.follow(bea, "ana")
            let anaToken = try await api.mastodonToken(ana)
            let beaToken = try await api.mastodonToken(bea)
            let catToken = try await api.mastodonToken(cat)
            var ids: [String] = []
            for n in 1...5 {
                let made = try await api.mastodon(
                    .post, "/api/v1/statuses", token: anaToken, form: [("status", "post \(n)")],
                    headers: [HTTPField.Name("Idempotency-Key")!: "k\(n)"])
                ids.append(try #require(try made.json()["id"]?.stringValue))
            }
            // A retry with the same key is the same status, not a new one.
            let retried = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken, form: [("status", "post 5")],
                headers: [HTTPField.Name("Idempotency-Key")!: "k5"])
            #expect(try retried.json()["id"]?.stringValue == ids[4])

            // Bea's home, two at a time, by the Link header.
            var seen: [String] = []
            var next: String? = "/api/v1/timelines/home?limit=2"
            while let path = next {
                let page = try await api.mastodon(.get, path, token: beaToken)
                #expect(page.status == .ok)
                seen += try page.json().array.compactMap { $0["id"]?.stringValue }
                next = page.link("next").map { String($0.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }) }
                if let prev = page.link("prev") { #expect(prev.contains("min_id=")) }
                #expect(seen.count <= 5)
            }
            #expect(seen == ids.reversed())
            // Newer than the second: the three after it, newest first.
            let newer = try await api.mastodon(.get, "/api/v1/timelines/home?since_id=\(ids[1])", token: beaToken)
            #expect(try newer.json().array.compactMap { $0["id"]?.stringValue } == Array(ids[2...].reversed()))
            let older = try await api.mastodon(.get, "/api/v1/timelines/public?max_id=\(ids[2])", token: catToken)
            #expect(try older.json().array.compactMap { $0["id"]?.stringValue } == [ids[1], ids[0]])
            #expect(
                try await api.mastodon(.get, "/api/v1/timelines/home?max_id=abc", token: beaToken).status
                    == .unprocessableContent)

            // Followers only: bea (a follower) reads it, cat and anonymous do not.
            let privateStatus = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [("status", "for followers"), ("visibility", "private")])
            let privateID = try #require(try privateStatus.json()["id"]?.stringValue)
            #expect(try privateStatus.json()["visibility"]?.stringValue == "private")
            #expect(try await api.mastodon(.get, "/api/v1/statuses/\(privateID)", token: beaToken).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/statuses/\(privateID)", token: catToken).status == .notFound)
            #expect(try await api.mastodon(.get, "/api/v1/statuses/\(privateID)").status == .notFound)
            #expect(
                try await api.mastodon(.post, "/api/v1/statuses/\(privateID)/favourite", token: catToken).status
                    == .notFound)
            #expect(
                try await api.mastodon(
                    .post, "/api/v1/statuses", token: catToken,
                    form: [("status", "sneaky"), ("in_reply_to_id", privateID)]
                ).status == .notFound)
            let direct = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken, form: [("status", "dm"), ("visibility", "direct")])
            #expect(direct.status == .unprocessableContent)
            #expect(
                try await api.mastodon(.post, "/api/v1/statuses", token: anaToken, form: [("status", " ")]).status
                    == .unprocessableContent)

            // Edit and delete: the author only; a delete answers the text, to redraft.
            #expect(
                try await api.mastodon(.put, "/api/v1/statuses/\(ids[0])", token: beaToken, form: [("status", "x")])
                    .status
                    == .notFound)
            let edited = try await api.mastodon(
                .put, "/api/v1/statuses/\(ids[0])", token: anaToken, form: [("status", "post one")])
            #expect(try edited.json()["content"]?.stringValue == "<p>post one</p>")
            #expect(try edited.json()["edited_at"]?.stringValue != nil)
            #expect(try await api.mastodon(.delete, "/api/v1/statuses/\(ids[0])", token: beaToken).status == .notFound)
            let deleted = try await api.mastodon(.delete, "/api/v1/statuses/\(ids[0])", token: anaToken)
            #expect(try deleted.json()["text"]?.stringValue == "post one")
            #expect(try await api.mastodon(.get, "/api/v1/statuses/\(ids[0])", token: anaToken).status == .notFound)

            // Bookmarks land in a "Bookmarks" collection.
            let bookmarked = try await api.mastodon(.post, "/api/v1/statuses/\(ids[1])/bookmark", token: beaToken)
            #expect(try bookmarked.json()["bookmarked"]?.bool == true)
            #expect(try await api.mastodon(.post, "/api/v1/statuses/\(ids[1])/bookmark", token: beaToken).status == .ok)
            // Two first bookmarks at once (another person, two posts) make one collection.
            let catBookmarks = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for id in ids[1...2] {
                    group.addTask {
                        try await api.mastodon(.post, "/api/v1/statuses/\(id)/bookmark", token: catToken).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(catBookmarks == [.ok, .ok])
            let catCollections = try await api.get("/collections", as: cat).decode(Page<SavedCollection>.self).items
            #expect(catCollections.map(\.name) == ["Bookmarks"])
            #expect(catCollections.first?.counts.items == 2)
            let unbookmarked = try await api.mastodon(.post, "/api/v1/statuses/\(ids[1])/unbookmark", token: beaToken)
            #expect(try unbookmarked.json()["bookmarked"]?.bool == false)

            // Accounts: lookup, statuses, followers.
            let lookup = try await api.mastodon(.get, "/api/v1/accounts/lookup?acct=ana", token: catToken)
            #expect(try lookup.json()["id"]?.stringValue == ana.id)
            #expect(
                try await api.mastodon(.get, "/api/v1/accounts/lookup?acct=ana@elsewhere.example").status == .notFound)
            let followers = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/followers", token: catToken)
            #expect(try followers.json().array.compactMap { $0["acct"]?.stringValue } == ["bea"])
            #expect(try await api.mastodon(.get, "/api/v1/accounts/12345").status == .notFound)
            #expect(try await api.mastodon(.get, "/api/v1/accounts/abc").status == .notFound)
            // A block hides the blocker's account from the blocked.
            #expect(try await api.mastodon(.post, "/api/v1/accounts/\(cat.id)/block", token: anaToken).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)", token: catToken).status == .notFound)
            // One's own block leaves muting them to oneself, as on Plaza's API (it was a 404).
            let muted = try await api.mastodon(.post, "/api/v1/accounts/\(cat.id)/mute", token: anaToken)
            #expect(muted.status == .ok)
            #expect(try muted.json()["muting"]?.bool == true && muted.json()["blocking"]?.bool == true)
        }
    }

    @Test func notificationsSearchAndEmptyFeatures() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let anaToken = try await api.mastodonToken(ana)
            let beaToken = try await api.mastodonToken(bea)
            let post = try await api.textPost(ana, "Ramen in Tokyo")
            _ = try await api.mastodon(.post, "/api/v1/accounts/\(ana.id)/follow", token: beaToken)
            _ = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/favourite", token: beaToken)
            let all = try await api.mastodon(.get, "/api/v1/notifications", token: anaToken).json().array
            #expect(all.compactMap { $0["type"]?.stringValue }.sorted() == ["favourite", "follow"])
            let onlyFollows = try await api.mastodon(.get, "/api/v1/notifications?types[]=follow", token: anaToken)
            #expect(try onlyFollows.json().array.count == 1)
            // Grouped (v2): a second like joins the first's group.
            let cat = try await api.register("cat")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: cat).status == .ok)
            let grouped = try await api.mastodon(.get, "/api/v2/notifications", token: anaToken).json()
            let likes = try #require(
                grouped["notification_groups"]?.array.first { $0["type"]?.stringValue == "favourite" })
            #expect(likes["notifications_count"]?.number == 2)
            #expect(likes["sample_account_ids"]?.array.compactMap(\.stringValue) == [cat.id, bea.id])
            #expect(likes["most_recent_notification_id"]?.number != nil, "a number, as Ice Cubes reads it")
            #expect(likes["status_id"]?.stringValue == post.id)
            #expect(Set(grouped["accounts"]?.array.compactMap { $0["acct"]?.stringValue } ?? []) == ["bea", "cat"])
            #expect(grouped["statuses"]?.array.compactMap { $0["id"]?.stringValue } == [post.id])
            let favouriteID = try #require(all.first { $0["type"]?.stringValue == "favourite" }?["id"]?.stringValue)
            #expect(
                try await api.mastodon(.get, "/api/v1/notifications/\(favouriteID)", token: beaToken).status
                    == .notFound)
            #expect(
                try await api.mastodon(.post, "/api/v1/notifications/\(favouriteID)/dismiss", token: anaToken).status
                    == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/notifications", token: anaToken).json().array.count == 1)
            #expect(try await api.mastodon(.post, "/api/v1/notifications/clear", token: anaToken).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/notifications", token: anaToken).json().array.isEmpty)
            #expect(try await api.get("/me", as: ana).decode(Me.self).unreadNotifications == 0)

            let found = try await api.mastodon(.get, "/api/v2/search?q=ramen", token: beaToken).json()
            #expect(found["statuses"]?.array.first?["id"]?.stringValue == post.id)
            let people = try await api.mastodon(.get, "/api/v2/search?q=%40ana&type=accounts", token: beaToken).json()
            #expect(people["accounts"]?.array.first?["acct"]?.stringValue == "ana")
            #expect(people["statuses"]?.array.isEmpty == true)
            let byURL = try await api.mastodon(
                .get, "/api/v2/search?q=\(api.config.baseURL)/posts/\(post.id)", token: beaToken
            ).json()
            #expect(byURL["statuses"]?.array.count == 1)

            for path in [
                "/api/v1/custom_emojis", "/api/v1/lists", "/api/v1/filters", "/api/v2/filters", "/api/v1/followed_tags",
                "/api/v1/announcements", "/api/v1/trends", "/api/v1/follow_requests",
            ] {
                let response = try await api.mastodon(.get, path, token: anaToken)
                #expect(response.status == .ok, "\(path)")
                #expect(try response.json() == .array([]), "\(path)")
            }
            #expect(try await api.mastodon(.get, "/api/v1/lists").status == .unauthorized)
            #expect(try await api.mastodon(.get, "/api/v1/streaming/health").text == "OK")
        }
    }

    // MARK: streaming

    @Test func theStreamingAPITellsNewStatusesAndNotifications() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let beaToken = try await api.mastodonToken(bea)
            try await api.follow(bea, "ana")
            let user = try await EventStreamClient.connect(port: port, token: beaToken, path: "/api/v1/streaming/user")
            let catToken = try await api.mastodonToken(try await api.register("cat"))
            let publicStream = try await EventStreamClient.connect(
                port: port, token: catToken, path: "/api/v1/streaming/public")
            defer {
                user.close()
                publicStream.close()
            }
            #expect(user.status == 200 && publicStream.status == 200)
            #expect(await user.waitForHeartbeat(), "the stream opens with a comment")
            let hidden = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "followers", audience: .followers))
            let post = try await api.textPost(ana, "Hello, stream")
            let received = await user.waitFor(2)
            #expect(received.map(\.event) == ["update", "update"])
            #expect(received.compactMap { try? $0.decode(JSONValue.self)["id"]?.stringValue } == [hidden.id, post.id])
            // The public stream tells only the public post.
            let everyone = await publicStream.waitFor(1)
            #expect(everyone.map(\.event) == ["update"])
            #expect(try everyone.first?.decode(JSONValue.self)["content"]?.stringValue == "<p>Hello, stream</p>")
            // A like on bea's post reaches her as a notification; a deletion as its id.
            let beas = try await api.textPost(bea, "mine")
            #expect(try await api.call(.put, "/posts/\(beas.id)/like", as: ana).status == .ok)
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            let later = await user.waitFor(5)
            #expect(later.dropFirst(2).map(\.event) == ["update", "notification", "delete"])
            #expect(later.last?.data == post.id)
            let note = try #require(try later.dropFirst(3).first?.decode(JSONValue.self))
            #expect(note["type"]?.stringValue == "favourite")
            #expect(note["account"]?["acct"]?.stringValue == "ana")
            for path in ["/api/v1/streaming/user", "/api/v1/streaming/public"] {
                let anonymous = try await EventStreamClient.connect(port: port, token: nil, path: path)
                #expect(anonymous.status == 401, "\(path)")
                anonymous.close()
            }
        }
    }

    @Test func theStreamingWebSocketTakesSubscriptions() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            try await api.follow(bea, "ana")
            let token = try await api.mastodonToken(bea)
            let plain = try await api.mastodon(.get, "/api/v1/streaming", token: token)
            #expect(plain.status == .badRequest)
            let received = NIOLockedValueBox([String]())
            // The token as the subprotocol, as Ice Cubes sends it; echoed by the server.
            let close = try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/api/v1/streaming",
                configuration: .init(additionalHeaders: [.secWebSocketProtocol: token]), logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                func next() async throws -> JSONValue {
                    guard case .text(let text) = try await messages.next() else { return .null }
                    received.withLockedValue { $0.append(text) }
                    return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                }
                try await outbound.write(.text(#"{"type":"subscribe","stream":"user"}"#))
                try await outbound.write(.text(#"{"type":"subscribe","stream":"hashtag","tag":"x"}"#))
                // Commands are taken in order: once the second is answered, the first holds.
                #expect(try await next()["error"]?.stringValue == "Unknown stream type")
                let post = try await api.textPost(ana, "Over the socket")
                let update = try await next()
                #expect(update["event"]?.stringValue == "update")
                #expect(update["stream"] == .array([.string("user")]))
                let payload = try JSONDecoder().decode(
                    JSONValue.self, from: Data(try #require(update["payload"]?.stringValue).utf8))
                #expect(payload["id"]?.stringValue == post.id)
                #expect(payload["content"]?.stringValue == "<p>Over the socket</p>")
                // Unsubscribed, the user stream says nothing; the public one (asked next) does.
                try await outbound.write(.text(#"{"type":"unsubscribe","stream":"user"}"#))
                try await outbound.write(.text(#"{"type":"subscribe","stream":"public"}"#))
                try await outbound.write(.text("not json"))
                #expect(try await next()["error"]?.stringValue == "Could not parse the message")
                let second = try await api.textPost(ana, "Public now")
                let update2 = try await next()
                #expect(update2["stream"] == .array([.string("public")]))
                #expect(update2["payload"]?.stringValue?.contains(second.id) == true)
                try await outbound.close(.normalClosure, reason: nil)
            }
            #expect(close?.closeCode == .normalClosure)
            #expect(received.withLockedValue { $0.count } == 4)

            // No token, or a wrong one: the upgrade is refused (hummingbird-websocket answers 400).
            for headers: HTTPFields in [[:], [.secWebSocketProtocol: "wrong"], [.authorization: "Bearer wrong"]] {
                await #expect(throws: (any Error).self) {
                    try await WebSocketClient.connect(
                        url: "ws://127.0.0.1:\(port)/api/v1/streaming?stream=user",
                        configuration: .init(additionalHeaders: headers), logger: Logger(label: "ws")
                    ) { _, _, _ in }
                }
            }
        }
    }

    /// A new connection's first head must arrive within the idle timeout (`HeadDeadlineChannel`);
    /// once upgraded, a quiet WebSocket is not held to that deadline.
    @Test func anUpgradedWebSocketOutlivesTheFirstHeadDeadline() async throws {
        let config = try await TestDatabase.config { $0.http.idleTimeoutSeconds = 1 }
        try await TestDatabase.cleaningUp(config) {
            // The token first, through the router: a live HTTP connection would itself be closed
            // by a second's idle timeout between two requests on a loaded machine.
            let token = try await buildApplication(config: config, logger: Logger(label: "test")).test(.router) {
                client in
                let api = TestAPI(client: client, config: config)
                return try await api.mastodonToken(try await api.register("bea"))
            }
            try await buildApplication(config: config, logger: Logger(label: "test")).test(.live) { client in
                let close = try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(client.port!)/api/v1/streaming?access_token=\(token)",
                    logger: Logger(label: "ws")
                ) { inbound, outbound, _ in
                    var messages = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
                    // Quiet for more than twice the timeout, then still answered.
                    try await Task.sleep(for: .seconds(2.5))
                    try await outbound.write(.text("still there?"))
                    guard case .text(let text) = try await messages.next() else {
                        Issue.record("the socket was closed")
                        return
                    }
                    let answer = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                    #expect(
                        answer == .object(["error": .string("Could not parse the message"), "status": .number(400)]))
                    try await outbound.close(.normalClosure, reason: nil)
                }
                #expect(close?.closeCode == .normalClosure)
            }
        }
    }

    @Test func aTokenHasOnePushSubscription() async throws {
        try await withApp({ $0.push.allowed = AddressPolicy(allowing: [IPBlock("127.0.0.1")!]) }) { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let noPush = try await api.mastodonToken(ana, scopes: "read write")
            let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
            let fields = [
                ("subscription[endpoint]", "http://127.0.0.1:9/push"),
                // Mastodon apps send plain base64, with padding.
                ("subscription[keys][p256dh]", key.base64EncodedString()),
                ("subscription[keys][auth]", Data(repeating: 7, count: 16).base64EncodedString()),
                ("data[alerts][mention]", "1"), ("policy", "followed"),
            ]
            #expect(try await api.mastodon(.post, "/api/v1/push/subscription", form: fields).status == .unauthorized)
            #expect(
                try await api.mastodon(.post, "/api/v1/push/subscription", token: noPush, form: fields).status
                    == .forbidden)
            #expect(try await api.mastodon(.get, "/api/v1/push/subscription", token: token).status == .notFound)
            let made = try await api.mastodon(.post, "/api/v1/push/subscription", token: token, form: fields)
            #expect(made.status == .ok, "\(made.text)")
            let subscription = try made.json()
            #expect(subscription["alerts"]?["mention"]?.bool == true)
            #expect(subscription["alerts"]?["favourite"]?.bool == false)
            #expect(subscription["policy"]?.stringValue == "followed")
            #expect(subscription["standard"]?.bool == false)
            // A second one replaces the first; a PUT changes the alerts.
            let again = try await api.mastodon(.post, "/api/v1/push/subscription", token: token, form: fields)
            #expect(try again.json()["id"] != subscription["id"])
            let changed = try await api.mastodon(
                .put, "/api/v1/push/subscription", token: token, form: [("data[alerts][favourite]", "true")])
            #expect(try changed.json()["alerts"]?["favourite"]?.bool == true)
            #expect(try changed.json()["alerts"]?["mention"]?.bool == true)
            let devices = try await api.get("/me/push-devices", as: ana).decode(Page<PushDevice>.self).items
            #expect(devices.count == 1)
            // Bad input: a clear 422, nothing stored.
            for bad in [
                [("subscription[endpoint]", "ftp://x")] + fields.dropFirst(),
                [fields[0], ("subscription[keys][p256dh]", "short"), fields[2]],
                fields + [("data[policy]", "friends")],
            ] {
                let refused = try await api.mastodon(.post, "/api/v1/push/subscription", token: token, form: Array(bad))
                #expect(refused.status == .unprocessableContent, "\(bad)")
            }
            #expect(try await api.mastodon(.get, "/api/v1/push/subscription", token: token).status == .ok)
            #expect(try await api.mastodon(.delete, "/api/v1/push/subscription", token: token).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/push/subscription", token: token).status == .notFound)
        }
    }

    @Test func legacyWebPushEncryptionRoundTrips() throws {
        // The receiver's side of aesgcm (draft-ietf-webpush-encryption-04), written out here.
        let receiver = P256.KeyAgreement.PrivateKey()
        let auth = [UInt8](repeating: 9, count: 16)
        let sealed = try WebPushCrypto.encryptLegacy(
            Array("hello".utf8), p256dh: Array(receiver.publicKey.x963Representation), auth: auth)
        let shared = try receiver.sharedSecretFromKeyAgreement(
            with: try P256.KeyAgreement.PublicKey(x963Representation: sealed.serverPublic))
        let ikm = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: Array("Content-Encoding: auth".utf8) + [0], outputByteCount: 32)
        let receiverPublic = Array(receiver.publicKey.x963Representation)
        let context =
            Array("P-256".utf8) + [0, 0, 65] + receiverPublic + [0, 65] + sealed.serverPublic
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: sealed.salt)
        let cek = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: aesgcm".utf8) + [0] + context, outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0] + context, outputByteCount: 12)
        let box = try AES.GCM.SealedBox(
            nonce: try AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }),
            ciphertext: sealed.body.dropLast(16), tag: sealed.body.suffix(16))
        #expect(Array(try AES.GCM.open(box, using: cek)) == [0, 0] + Array("hello".utf8))
    }

    /// Every Mastodon operation of the OpenAPI document, as three callers: anonymous (401 where
    /// the document says a token is required), an app's token with only `profile` (403, but for
    /// the two that `profile` covers, and public reads), and the person's full token (past
    /// authorization: never 401 or 403). The entity-specific checks (another person's status,
    /// notification, media, subscription) are in the tests above.
    @Test func everyMastodonOperationChecksItsToken() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let full = try await api.mastodonToken(ana)
            let profileOnly = try await api.mastodonToken(ana, scopes: "profile")
            let post = try await api.textPost(ana, "hello")
            let document = try await api.mastodon(.get, "/api/v1/openapi.json").json()
            guard case .object(let paths)? = document["paths"] else {
                Issue.record("the document has no paths")
                return
            }
            var checked = 0
            for (path, item) in paths {
                guard case .object(let operations) = item else { continue }
                for (method, operation) in operations {
                    guard operation["tags"]?.array.contains(.string("Mastodon")) == true else { continue }
                    // Streams never end; they are tested above. OAuth's endpoints take the app's
                    // credentials, not a token (the OAuth tests and the matrix).
                    if path.contains("/streaming/") || !path.hasPrefix("/api/") { continue }
                    let security = operation["security"]?.array ?? []
                    let required = !security.isEmpty && !security.contains(.object([:]))
                    let concrete = path.replacingOccurrences(of: "{id}", with: post.id).replacingOccurrences(
                        of: "{tag}", with: "hello")
                    let verb = try #require(HTTPRequest.Method(method.uppercased()))
                    let anonymous = try await api.mastodon(verb, concrete)
                    if required {
                        #expect(anonymous.status == .unauthorized, "anonymous \(method) \(path)")
                    } else {
                        #expect(anonymous.status != .unauthorized, "anonymous \(method) \(path)")
                    }
                    let narrow = try await api.mastodon(verb, concrete, token: profileOnly)
                    if path.hasSuffix("/accounts/verify_credentials") || path.hasSuffix("/apps/verify_credentials") {
                        #expect(narrow.status == .ok, "profile \(method) \(path)")
                    } else if required {
                        #expect(narrow.status == .forbidden, "profile \(method) \(path): \(narrow.status)")
                    }
                    let allowed = try await api.mastodon(verb, concrete, token: full)
                    #expect(
                        allowed.status != .unauthorized && allowed.status != .forbidden,
                        "full token \(method) \(path): \(allowed.status) \(allowed.text.prefix(200))")
                    #expect(allowed.status.code < 500, "\(method) \(path)")
                    checked += 1
                }
            }
            #expect(checked > 60)
        }
    }

    // MARK: parsing

    @Test func parametersComeFromQueryFormsAndJSON() throws {
        let form = try MastodonParams(form: "media_ids%5B%5D=1&media_ids[]=2&status=a+b%26c&sensitive=1")
        #expect(form.strings("media_ids") == ["1", "2"])
        #expect(form.string("status") == "a b&c")
        #expect(form.bool("sensitive") == true)
        #expect(throws: PlazaError.self) { try MastodonParams(form: "a=%ZZ") }
        #expect(throws: PlazaError.self) { try MastodonParams(form: String(repeating: "a=1&", count: 300)) }
        #expect(OAuthScopes("read+write:statuses")?.names == ["read", "write:statuses"])
        #expect(OAuthScopes("read admin:read") == nil)
        #expect(OAuthScopes(nil)?.names == ["read"])
        let follow = OAuthScopes("follow")!
        #expect(follow.allows("write:follows") && follow.allows("read:blocks") && !follow.allows("write:statuses"))
        #expect(OAuthScopes("write")!.allows("write:media") && !OAuthScopes("write")!.allows("read:statuses"))
        #expect(OAuthStore.challenge(verifier: "short") == nil)
        #expect(OAuthStore.challenge(verifier: String(repeating: "a", count: 42) + "/") == nil)
        let links = PublicLinks(base: "https://plaza.test")
        #expect(PostTextHTML.render("a <b>\n\nc\nd", links: links) == "<p>a &lt;b&gt;</p><p>c<br>d</p>")
        #expect(
            PostTextHTML.render("see https://x.example/a?b=1&c=2. #Ramen @bob", links: links)
                == "<p>see <a href=\"https://x.example/a?b=1&amp;c=2\" rel=\"nofollow noopener ugc\" target=\"_blank\">https://x.example/a?b=1&amp;c=2</a>. "
                + "<a href=\"https://plaza.test/tags/Ramen\" class=\"mention hashtag\" rel=\"tag\">#<span>Ramen</span></a> "
                + "<span class=\"h-card\"><a href=\"https://plaza.test/@bob\" class=\"u-url mention\">@<span>bob</span></a></span></p>"
        )
        #expect(PostTextHTML.render("https:// x", links: links) == "<p>https:// x</p>")
        // A quote after a link stays outside it, escaped.
        #expect(
            PostTextHTML.render(#""https://x.example/a", https://y.example/&"#, links: links)
                == "<p>&quot;<a href=\"https://x.example/a\" rel=\"nofollow noopener ugc\" target=\"_blank\">https://x.example/a</a>&quot;, "
                + "<a href=\"https://y.example/&amp;\" rel=\"nofollow noopener ugc\" target=\"_blank\">https://y.example/&amp;</a></p>"
        )
        // A mark that combines with `&` or `<` does not hide it from the escaping.
        #expect(HTMLText.escape("&\u{301}<\u{301}") == "&amp;\u{301}&lt;\u{301}")
    }
}
