import Configuration
import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Signing in with other providers", .serialized)
struct IdentityTests {
    /// Runs `body` with an issuer on loopback and a Plaza that trusts it as provider `test`.
    func withProvider(_ body: @Sendable (TestAPI, TestIssuer) async throws -> Void) async throws {
        try await TestIssuer.run { issuer in
            try await withApp({ $0.authProviders = [issuer.provider] }) { api in try await body(api, issuer) }
        }
    }

    func exchange(_ api: TestAPI, _ token: String, nonce: String? = nil, as account: Account? = nil) async throws
        -> TestResponse
    {
        try await api.call(
            .post, "/auth/providers/test/token", as: account, json: ProviderTokenRequest(idToken: token, nonce: nonce))
    }

    @Test func aNativeAppsTokenMakesAnAccountOnceAndThenSignsIn() async throws {
        try await withProvider { api, issuer in
            let providers = try await api.get("/auth/providers").decode([AuthProviderInfo].self)
            #expect(providers == [AuthProviderInfo(id: "test", name: "Test ID", kind: "oidc")])

            let first = try await exchange(api, try await issuer.idToken(nonce: "nonce-1"), nonce: "nonce-1")
            #expect(first.status == .created)
            let auth = try first.decode(AuthResponse.self)
            #expect(auth.user.user.username == "ana" && auth.user.email == "ana@provider.test")
            // The provider vouched for the address.
            #expect(auth.user.emailVerified)
            // The app's own audience (its bundle id) is accepted too, and the nonce may come hashed.
            let hashed = ByteText.hex(SHA256.hash(data: Data("nonce-2".utf8)))
            let again = try await exchange(
                api, try await issuer.idToken(nonce: hashed, audience: "com.example.app"), nonce: "nonce-2")
            #expect(again.status == .ok)
            #expect(try again.decode(AuthResponse.self).user.user.id == auth.user.user.id)

            let linked = try await api.page(
                "/me/identities?limit=10",
                as: Account(
                    token: auth.token, me: auth.user, password: ""), of: LinkedIdentity.self)
            #expect(linked.items.map(\.provider) == ["test"] && linked.items[0].email == "ana@provider.test")
            // It has no password: signing in with one fails, and the provider is the only way in.
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: ""))
                    .status != .ok)
            let last = try await api.call(.delete, "/me/identities/test", token: auth.token)
            #expect(last.status == .conflict && last.error?.code == "last_sign_in_method")
            // A password can be set without a current one; then the provider can go.
            #expect(
                try await api.call(
                    .put, "/me/password", token: auth.token,
                    json: ChangePasswordRequest(currentPassword: "", newPassword: "a password now")
                )
                .status == .noContent)
            #expect(try await api.call(.delete, "/me/identities/test", token: auth.token).status == .noContent)
            #expect(try await api.call(.delete, "/me/identities/test", token: auth.token).status == .notFound)
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: "a password now"))
                    .status == .ok)
        }
    }

    @Test func tokensThatMustNotSignInAreRefused() async throws {
        try await withProvider { api, issuer in
            let stranger = P256.Signing.PrivateKey()
            let cases: [(String, String, String?)] = [
                ("bad signature", try await issuer.idToken(nonce: "a", signingKey: stranger), "a"),
                ("wrong audience", try await issuer.idToken(nonce: "b", audience: "someone-else"), "b"),
                ("wrong issuer", try await issuer.idToken(nonce: "c", issuer: "https://evil.example"), "c"),
                ("expired", try await issuer.idToken(nonce: "d", expiresIn: -60), "d"),
                ("wrong nonce", try await issuer.idToken(nonce: "e"), "not-e"),
                ("no nonce", try await issuer.idToken(nonce: nil), nil),
                ("not a JWT", "not.a-token", nil),
                ("unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", nil),
            ]
            for (what, token, nonce) in cases {
                let refused = try await exchange(api, token, nonce: nonce)
                #expect(refused.status == .unauthorized, "\(what)")
                #expect(refused.error?.code == "invalid_provider_token", "\(what): \(refused.text)")
            }
            // A replayed token: the same nonce twice.
            let token = try await issuer.idToken(nonce: "once")
            #expect(try await exchange(api, token, nonce: "once").status == .created)
            let replay = try await exchange(api, token, nonce: "once")
            #expect(replay.status == .unauthorized && replay.text.contains("already used"))
            // Nothing else made an account.
            let count = try await api.withDatabase { db in
                try await db.read {
                    try await $0.first("SELECT COUNT(*) AS n FROM users")?.decode(column: "n", as: Int.self)
                }
            }
            #expect(count == 1)
            #expect(
                try await api.call(.post, "/auth/providers/nope/token", json: ProviderTokenRequest(idToken: token))
                    .status == .notFound)
            #expect(
                try await api.call(.post, "/auth/providers/test/token", json: ProviderTokenRequest()).status
                    == .unprocessableContent)
        }
    }

    @Test func anUnknownKeyIsLookedUpOnceAndARotatedOneAccepted() async throws {
        try await withProvider { api, issuer in
            #expect(try await exchange(api, try await issuer.idToken(nonce: "k1"), nonce: "k1").status == .created)
            #expect(issuer.jwksFetches == 1)
            // The issuer rotates to a new key: the first token signed with it makes Plaza look again.
            issuer.publish(kid: "key-2")
            #expect(
                try await exchange(api, try await issuer.idToken(nonce: "k3", kid: "key-2"), nonce: "k3").status == .ok)
            #expect(issuer.jwksFetches == 2)
            // A token that names no key (allowed while a provider has one) is checked against each.
            let unnamed = try await issuer.idToken(nonce: "k4", namingTheKey: false)
            #expect(JWTHeaderFields.parse(unnamed)?.kid == nil)
            #expect(try await exchange(api, unnamed, nonce: "k4").status == .ok)
            let forged = try await issuer.idToken(
                nonce: "k5", namingTheKey: false, signingKey: P256.Signing.PrivateKey())
            #expect(try await exchange(api, forged, nonce: "k5").status == .unauthorized)
            // A key the issuer never published, within the minute: not looked up again, refused.
            let unknown = try await issuer.idToken(nonce: "k2", kid: "key-9", signingKey: P256.Signing.PrivateKey())
            let refused = try await exchange(api, unknown, nonce: "k2")
            #expect(refused.status == .unauthorized && refused.text.contains("unknown key"))
            #expect(issuer.jwksFetches == 2)
        }
    }

    @Test func aProviderThatIsDownIsReportedAs502() async throws {
        try await withProvider { api, issuer in
            let token = try await issuer.idToken(nonce: "down")
            issuer.setUp(false)
            let down = try await exchange(api, token, nonce: "down")
            #expect(down.status == .badGateway && down.error?.code == "provider_unavailable")
            issuer.setUp(true)
            #expect(try await exchange(api, token, nonce: "down").status == .created)
        }
    }

    @Test func anAddressAnotherAccountHasIsNeverJoinedToIt() async throws {
        try await withProvider { api, issuer in
            _ = try await api.register("ana")
            issuer.signInNext(.init(subject: "s-ana", email: "ANA@example.com"))
            let conflict = try await exchange(api, try await issuer.idToken(nonce: "x"), nonce: "x")
            #expect(conflict.status == .conflict && conflict.error?.code == "email_in_use")
            // An address the provider does not vouch for is not taken at all: the account has none.
            issuer.signInNext(.init(subject: "s-other", email: "ana@example.com", emailVerified: false, name: "Ana B"))
            let made = try await exchange(api, try await issuer.idToken(nonce: "y"), nonce: "y")
            #expect(made.status == .created)
            let me = try made.decode(AuthResponse.self).user
            #expect(me.email == "" && !me.emailVerified && me.user.displayName == "Ana B")
            #expect(me.user.username != "ana" && me.user.username.hasPrefix("ana"))
            // Nothing to confirm yet; adding an address needs no password the account never had.
            let token = try made.decode(AuthResponse.self).token
            #expect(try await api.call(.post, "/me/email/verification", token: token).error?.code == "no_email")
            #expect(
                try await api.call(
                    .put, "/me/email", token: token,
                    json: ChangeEmailRequest(email: "ana.b@example.com", currentPassword: "")
                ).status == .accepted)
            let link = try #require(try await api.mails(to: "ana.b@example.com").first?.token)
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: link)).status
                    == .noContent)
            let after = try await api.call(.get, "/me", token: token).decode(Me.self)
            #expect(after.email == "ana.b@example.com" && after.emailVerified)
            // There was no old address to tell, so nothing was queued for one.
            let strays = try await api.withDatabase { db in
                try await db.read {
                    try await $0.first("SELECT COUNT(*) AS n FROM mail_outbox WHERE recipient = ''")?.decode(
                        column: "n", as: Int.self)
                }
            }
            #expect(strays == 0)
        }
    }

    @Test func twoFactorSignInStillAsksForTheCode() async throws {
        try await withProvider { api, issuer in
            let made = try await exchange(api, try await issuer.idToken(nonce: "t1"), nonce: "t1")
            let auth = try made.decode(AuthResponse.self)
            let account = Account(token: auth.token, me: auth.user, password: "")
            _ = try await TwoFactorTests.enable(api, account)
            let asked = try await exchange(api, try await issuer.idToken(nonce: "t2"), nonce: "t2")
            #expect(asked.status == .unauthorized && asked.error?.code == "second_factor_required")
            #expect(asked.error?.challenge != nil)
        }
    }

    @Test func aFacebookAccessTokenIsCheckedWithGraph() async throws {
        try await TestIssuer.run { issuer in
            try await withApp({ $0.authProviders = [issuer.facebook] }) { api in
                let person = TestIssuer.Person(subject: "10001", email: "fb@example.com", name: "Fay Book")
                let exchange = { (token: String) in
                    try await api.call(
                        .post, "/auth/providers/facebook/token", json: ProviderTokenRequest(accessToken: token))
                }
                let made = try await exchange(issuer.facebookToken(person))
                #expect(made.status == .created)
                let me = try made.decode(AuthResponse.self).user
                // "fb" is too short for a username: the name gives one.
                #expect(me.user.username == "FayBook" && me.user.displayName == "Fay Book" && me.emailVerified)
                #expect(try await exchange(issuer.facebookToken(person)).status == .ok)
                // A token another app got, or one Facebook does not know, signs in nobody.
                for token in [issuer.facebookToken(person, app: "999"), "EAAmadeup"] {
                    let refused = try await exchange(token)
                    #expect(refused.status == .unauthorized && refused.error?.code == "invalid_provider_token")
                }
                #expect(try await api.get("/auth/providers").decode([AuthProviderInfo].self).first?.kind == "oauth2")

                // The web sign-in: OAuth 2's code for an access token, then the same Graph checks.
                let response = try await api.page(.get, "/api/v1/auth/providers/facebook/start?next=/spaces")
                let url = try #require(response.headers[.location])
                let state = try #require(response.setCookie(WebIdentityPages.stateCookie)).prefix(while: { $0 != ";" })
                issuer.signInNext(person)
                let (redirect, code, flowState) = try issuer.approve(url)
                let back = try await api.page(
                    .get, String(redirect.dropFirst("http://localhost:0".count)) + "?code=\(code)&state=\(flowState)",
                    cookie: String(state))
                #expect(back.status == .seeOther && back.headers[.location] == "/spaces")
                let session = try #require(back.setCookie(WebSession.sessionCookie)).prefix(while: { $0 != ";" })
                #expect(
                    try await api.page(.get, "/", cookie: String(session)).text.contains(#"data-signed-in="FayBook""#))
            }
        }
    }

    @Test func signInWithApplesClientSecretIsAnES256JWTFromTheTeamsKey() async throws {
        let key = P256.Signing.PrivateKey()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("AuthKey_\(UUID().uuidString).p8").path
        try key.pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var apple = AuthProvider(id: "apple", kind: .apple, clientID: "com.example.plaza.web")
        (apple.teamID, apple.keyID, apple.privateKeyFile) = ("TEAM123456", "KEY1234567", file)
        let secret = try #require(try await SignInProviders.clientSecret(for: apple))
        let parts = secret.split(separator: ".").map { ByteText.bytes(base64url: $0) ?? [] }
        let header = try JSONSerialization.jsonObject(with: Data(parts[0])) as? [String: String]
        #expect(header?["alg"] == "ES256" && header?["kid"] == "KEY1234567")
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(parts[1])) as? [String: Any])
        #expect(claims["iss"] as? String == "TEAM123456" && claims["sub"] as? String == "com.example.plaza.web")
        #expect(claims["aud"] as? String == "https://appleid.apple.com")
        let lifetime = ((claims["exp"] as? Double) ?? 0) - ((claims["iat"] as? Double) ?? 0)
        #expect(lifetime > 0 && lifetime <= 15_777_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parts[2])
        #expect(
            key.publicKey.isValidSignature(
                signature, for: Data(secret.split(separator: ".").prefix(2).joined(separator: ".").utf8)))
        // Google and other providers send the configured secret.
        var google = AuthProvider(id: "google", kind: .google, clientID: "x")
        google.clientSecret = "configured"
        #expect(try await SignInProviders.clientSecret(for: google) == "configured")
    }

    static func reader(_ pairs: [String: String]) -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in pairs {
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                .string(value), isSecret: false)
        }
        return ConfigReader(providers: [InMemoryProvider(name: "test", values: values)])
    }

    @Test func providersAreReadFromTheEnvironmentAndAFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("providers-\(UUID().uuidString).json")
        try Data(
            #"[{"id":"corp","name":"Corp SSO","issuer":"https://sso.corp.example","clientId":"plaza","scopes":["openid","email"]}]"#
                .utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let providers = try AuthProvider.read(
            from: Self.reader([
                "plaza.auth.providers": "google, facebook", "plaza.auth.google.client.id": "g-id",
                "plaza.auth.google.client.secret": "g-secret", "plaza.auth.google.audiences": "ios-id, android-id",
                "plaza.auth.facebook.client.id": "fb-app", "plaza.auth.facebook.client.secret": "fb-secret",
                "plaza.auth.facebook.graph.url": "http://127.0.0.1:9/graph",
                "plaza.auth.providers.file": file.path,
            ]).scoped(to: "plaza"))
        #expect(providers.map(\.id) == ["corp", "google", "facebook"])
        #expect(
            providers[0].name == "Corp SSO" && providers[0].kind == .oidc && providers[0].scopes == ["openid", "email"])
        #expect(providers[0].metadataURL == "https://sso.corp.example/.well-known/openid-configuration")
        #expect(providers[1].kind == .google && providers[1].issuer == "https://accounts.google.com")
        #expect(providers[1].acceptedAudiences == ["g-id", "ios-id", "android-id"])
        #expect(providers[2].kind == .facebook && providers[2].graphURL == "http://127.0.0.1:9/graph")
        let refused: [[String: String]] = [
            ["plaza.auth.providers": "Bad-Id", "plaza.auth.bad-id.client.id": "x"],
            ["plaza.auth.providers": "google"],
            ["plaza.auth.providers": "google", "plaza.auth.google.client.id": "x"],
            ["plaza.auth.providers": "corp", "plaza.auth.corp.client.id": "x"],
            ["plaza.auth.providers": "apple", "plaza.auth.apple.client.id": "x"],
            ["plaza.auth.providers": "corp", "plaza.auth.corp.client.id": "x", "plaza.auth.corp.issuer": "ftp://x"],
            ["plaza.auth.providers.file": "/nonexistent/providers.json"],
        ]
        for pairs in refused {
            #expect(throws: ConfigurationError.self, "\(pairs)") {
                try AuthProvider.read(from: Self.reader(pairs).scoped(to: "plaza"))
            }
        }
    }

    // MARK: the web sign-in

    /// Starts a sign-in in a browser with `cookie`: the provider's URL and the state cookie.
    func start(_ api: TestAPI, _ query: String, cookie: String? = nil) async throws -> (url: String, cookie: String) {
        let response = try await api.page(.get, "/api/v1/auth/providers/test/start?\(query)", cookie: cookie)
        #expect(response.status == .found)
        let state = try #require(response.setCookie(WebIdentityPages.stateCookie))
        return (
            try #require(response.headers[.location]),
            String(state.prefix(while: { $0 != ";" }))
        )
    }

    @Test func theBrowserGoesToTheProviderAndComesBackSignedIn() async throws {
        try await withProvider { api, issuer in
            let (url, stateCookie) = try await start(api, "next=/explore")
            #expect(url.hasPrefix("\(issuer.base)/authorize?"))
            #expect(
                url.contains("redirect_uri=http%3A%2F%2Flocalhost%3A0%2Fapi%2Fv1%2Fauth%2Fproviders%2Ftest%2Fcallback"))
            let (redirect, code, state) = try issuer.approve(url)
            let callback = String(redirect.dropFirst("http://localhost:0".count)) + "?code=\(code)&state=\(state)"

            // Another browser (without the state cookie) cannot finish it.
            let elsewhere = try await api.page(.get, callback)
            #expect(elsewhere.status == .badRequest && elsewhere.text.contains("another browser"))
            let back = try await api.page(.get, callback, cookie: stateCookie)
            #expect(back.status == .seeOther && back.headers[.location] == "/explore")
            let session = try #require(back.setCookie(WebSession.sessionCookie)).prefix(while: { $0 != ";" })
            let home = try await api.page(.get, "/", cookie: String(session))
            #expect(home.text.contains(#"data-signed-in="ana""#))
            // The state works once.
            #expect(try await api.page(.get, callback, cookie: stateCookie).status == .badRequest)
            // The provider's refusal is shown, not an error page.
            let denied = try await api.page(.get, "/api/v1/auth/providers/test/callback?error=access_denied")
            #expect(denied.status == .badRequest && denied.text.contains("You cancelled the sign-in."))
            // The sign-in page offers the provider.
            #expect(try await api.page(.get, "/login").text.contains("Continue with Test ID"))
        }
    }

    @Test func settingsLinkAProviderToTheSignedInAccount() async throws {
        try await withProvider { api, issuer in
            let ana = try await api.register("ana")
            issuer.signInNext(.init(subject: "s-ana-2", email: "ana.elsewhere@provider.test"))
            // Without the page's CSRF token another site cannot start a linking.
            #expect(
                try await api.page(.get, "/api/v1/auth/providers/test/start?link=1", cookie: ana.cookie).status
                    == .forbidden)
            let (url, stateCookie) = try await start(
                api, "link=1&csrf=\(ana.csrf)", cookie: ana.cookie)
            let (redirect, code, state) = try issuer.approve(url)
            let back = try await api.page(
                .get, String(redirect.dropFirst("http://localhost:0".count)) + "?code=\(code)&state=\(state)",
                cookie: stateCookie)
            #expect(back.status == .seeOther && back.headers[.location] == "/settings")
            let linked = try await api.page("/me/identities?limit=10", as: ana, of: LinkedIdentity.self).items
            #expect(linked.map(\.provider) == ["test"])
            _ = try await api.mails(to: "ana@example.com", subject: "Test ID sign-in added")
            let settings = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(settings.text.contains(#"data-identity="test""#) && settings.text.contains("Remove"))
            // The provider account now signs in to Ana.
            let signedIn = try await exchange(api, try await issuer.idToken(nonce: "l1"), nonce: "l1")
            #expect(signedIn.status == .ok)
            #expect(try signedIn.decode(AuthResponse.self).user.user.id == ana.id)
            // Someone else cannot link the same provider account.
            let bob = try await api.register("bob")
            let (url2, cookie2) = try await start(api, "link=1&csrf=\(bob.csrf)", cookie: bob.cookie)
            let (redirect2, code2, state2) = try issuer.approve(url2)
            let refused = try await api.page(
                .get, String(redirect2.dropFirst("http://localhost:0".count)) + "?code=\(code2)&state=\(state2)",
                cookie: cookie2)
            #expect(refused.status == .conflict && refused.text.contains("already signs in to another account"))
            #expect(try await api.page("/me/identities?limit=10", as: bob, of: LinkedIdentity.self).items.isEmpty)
        }
    }
}
