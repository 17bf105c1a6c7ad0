import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Accounts and sessions")
struct AccountsTests {
    @Test func registerReturnsTheUserAndAWorkingToken() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            #expect(ana.me.user.username == "ana")
            #expect(ana.me.email == "ana@example.com")
            #expect(ana.me.user.displayName == "ana")
            #expect(ana.me.user.counts == User.Counts(posts: 0, followers: 0, following: 0))
            #expect(ana.token.count >= 43)  // 256 bits, base64url
            let me = try await api.get("/me", as: ana).decode(Me.self)
            #expect(me.user.id == ana.id)
            #expect(me.preferences == .object([:]))
        }
    }

    @Test func usernamesAndEmailsAreUniqueCaseInsensitively() async throws {
        try await withApp { api async throws in
            _ = try await api.register("ana")
            let sameName = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(username: "ANA", email: "other@example.com", password: "long enough"))
            #expect(sameName.status == .conflict)
            #expect(sameName.error?.code == "username_taken")
            let sameEmail = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(username: "other", email: "Ana@Example.com", password: "long enough"))
            #expect(sameEmail.status == .conflict)
            #expect(sameEmail.error?.code == "email_taken")
        }
    }

    @Test(arguments: [
        ("ab", "a@example.com", "long enough", "username"),
        ("has space", "a@example.com", "long enough", "username"),
        (String(repeating: "a", count: 31), "a@example.com", "long enough", "username"),
        ("valid_name", "not-an-email", "long enough", "email"),
        ("valid_name", "a@example.com", "short", "password"),
        ("valid_name", "a@example.com", String(repeating: "x", count: 129), "password"),
    ])
    func registerRejectsInvalidFields(username: String, email: String, password: String, field: String) async throws {
        try await withApp { api async throws in
            let response = try await api.call(
                .post, "/auth/register", json: RegisterRequest(username: username, email: email, password: password))
            #expect(response.status == .unprocessableContent)
            #expect(response.error?.field == field)
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "valid_name", password: password))
                    .status == .unauthorized)
        }
    }

    @Test func longPasswordsCountInFullAndAreNotTruncated() async throws {
        try await withApp { api async throws in
            let long = String(repeating: "p", count: 100) + "A"
            _ = try await api.register("ana", password: long)
            let wrongTail = String(repeating: "p", count: 100) + "B"
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: wrongTail)).status
                    == .unauthorized)
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: long)).status == .ok
            )
        }
    }

    @Test func loginWorksWithUsernameOrEmail() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for login in ["ana", "ANA", "ana@example.com", "Ana@Example.com"] {
                let response = try await api.call(
                    .post, "/auth/login", json: LoginRequest(login: login, password: ana.password))
                #expect(response.status == .ok, "\(login)")
                let auth = try response.decode(AuthResponse.self)
                #expect(auth.user.user.id == ana.id)
                #expect(auth.token != ana.token)
            }
        }
    }

    @Test func unknownUserAndWrongPasswordLookTheSame() async throws {
        try await withApp { api async throws in
            _ = try await api.register("ana")
            let wrong = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: "not the password"))
            let unknown = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "nobody", password: "not the password"))
            #expect(wrong.status == .unauthorized)
            #expect(unknown.status == .unauthorized)
            #expect(wrong.text == unknown.text)
        }
    }

    /// The suite runs at bcrypt cost 4; the configured cost is what goes into every hash, and an
    /// unknown user is checked against a decoy made at that same cost.
    @Test func passwordsAreStoredAsBcryptAtTheConfiguredCost() async throws {
        for (cost, prefix) in [(11, "$2b$11$"), (4, "$2b$04$")] {
            try await withApp({ $0.accounts.bcryptCost = cost }) { api async throws in
                let ana = try await api.register("ana")
                let stored = try await api.withDatabase { db in
                    try await db.read {
                        try await $0.first("SELECT password_hash FROM users WHERE username = \(bind: ana.username)")?
                            .decode(column: "password_hash", as: String.self)
                    }
                }
                #expect(stored?.hasPrefix(prefix) == true, "\(stored ?? "")")
                #expect(
                    try await api.logIn(ana)
                        .status == .ok)
            }
        }
        let hasher = PasswordHasher(cost: 5)
        let hash = try await hasher.hash("secret")
        #expect(hash.hasPrefix("$2b$05$"))
        #expect(try await hasher.verify("secret", hash: hash))
        #expect(try await !hasher.verify("Secret", hash: hash))
        #expect(try await !hasher.verify("secret", hash: nil))
        #expect(PasswordHasher.decoy(cost: 5).hasPrefix("$2b$05$"))
        #expect(PasswordHasher.decoy(cost: 5) == PasswordHasher.decoy(cost: 5), "made once per cost")
    }

    @Test func repeatedFailuresAreThrottledWithRetryAfterButNeverForever() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for _ in 0..<LoginThrottle.Policy.standard.freeFailuresPerAccount {
                #expect(
                    try await api.call(
                        .post, "/auth/login", json: LoginRequest(login: "ana", password: "wrong password")
                    ).status == .unauthorized)
            }
            // Now even the right password waits, so guessing cannot go on.
            let throttled = try await api.logIn(ana)
            #expect(throttled.status == .tooManyRequests)
            #expect(throttled.error?.code == "rate_limited")
            let retry = try #require(throttled.headers[.retryAfter].flatMap { Int($0) })
            #expect(retry > 0 && retry <= 30)
            // Unknown accounts are throttled the same way.
            for _ in 0..<5 {
                _ = try await api.call(
                    .post, "/auth/login", json: LoginRequest(login: "ghost", password: "wrong password"))
            }
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ghost", password: "wrong password"))
                    .status == .tooManyRequests)
            // The existing session is unaffected.
            #expect(try await api.get("/me", as: ana).status == .ok)
        }
    }

    @Test func logoutRevokesOnlyThatToken() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let second = try await api.logIn(ana).decode(AuthResponse.self)
            #expect(try await api.call(.post, "/auth/logout", as: ana).status == .noContent)
            let revoked = try await api.get("/me", as: ana)
            #expect(revoked.status == .unauthorized)
            #expect(revoked.error?.code == "invalid_token")
            #expect(try await api.call(.get, "/me", token: second.token).status == .ok)
            #expect(try await api.call(.post, "/auth/logout").status == .unauthorized)
        }
    }

    @Test func meNeedsAValidToken() async throws {
        try await withApp { api async throws in
            #expect(try await api.get("/me").status == .unauthorized)
            #expect(try await api.call(.get, "/me", token: "made-up").status == .unauthorized)
            #expect(try await api.call(.get, "/me", headers: [.authorization: "Basic YTpi"]).status == .unauthorized)
            // Even public routes refuse a bad token, so clients notice they are signed out.
            #expect(try await api.call(.get, "/feed/global", token: "made-up").status == .unauthorized)
        }
    }

    @Test func patchMeUpdatesProfileAndStatus() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let updated = try await api.call(
                .patch, "/me", as: ana,
                json: UpdateMeRequest(
                    displayName: "Ana Lima", bio: "Hi!", status: .set(StatusInput(kind: "safe", text: "All good"))))
            #expect(updated.status == .ok)
            let me = try updated.decode(Me.self)
            #expect(me.user.displayName == "Ana Lima")
            #expect(me.user.bio == "Hi!")
            #expect(me.user.status?.kind == "safe")
            #expect(me.user.status?.text == "All good")
            // Leaving fields out keeps them; null clears the status.
            let cleared = try await api.call(.patch, "/me", as: ana, raw: #"{"status": null}"#).decode(Me.self)
            #expect(cleared.user.status == nil)
            #expect(cleared.user.displayName == "Ana Lima")
            let profile = try await api.get("/users/ana").decode(User.self)
            #expect(profile.bio == "Hi!")
        }
    }

    @Test func patchMeValidates() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let cases: [(String, String)] = [
                (#"{"displayName": ""}"#, "displayName"),
                (#"{"displayName": "\#(String(repeating: "x", count: 61))"}"#, "displayName"),
                (#"{"bio": "\#(String(repeating: "x", count: 501))"}"#, "bio"),
                (#"{"status": {"kind": "Not OK!", "text": "x"}}"#, "status.kind"),
                (#"{"status": {"kind": "safe"}}"#, "status.text"),
                (#"{"displayName": 42}"#, "displayName"),
            ]
            for (body, field) in cases {
                let response = try await api.call(.patch, "/me", as: ana, raw: body)
                #expect(response.status == .unprocessableContent, "\(body)")
                #expect(response.error?.field == field, "\(body)")
            }
            #expect(try await api.get("/me", as: ana).decode(Me.self).user.displayName == "ana")
            #expect(try await api.call(.patch, "/me", raw: #"{"bio": "x"}"#).status == .unauthorized)
        }
    }

    @Test func changingThePasswordRevokesOtherSessions() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let other = try await api.logIn(ana).decode(AuthResponse.self)
            let wrong = try await api.call(
                .put, "/me/password", as: ana,
                json: ChangePasswordRequest(currentPassword: "nope nope", newPassword: "a new password"))
            #expect(wrong.status == .forbidden)
            let short = try await api.call(
                .put, "/me/password", as: ana,
                json: ChangePasswordRequest(currentPassword: ana.password, newPassword: "short"))
            #expect(short.status == .unprocessableContent)
            #expect(short.error?.field == "newPassword")
            let ok = try await api.call(
                .put, "/me/password", as: ana,
                json: ChangePasswordRequest(currentPassword: ana.password, newPassword: "a new password"))
            #expect(ok.status == .noContent)
            #expect(try await api.get("/me", as: ana).status == .ok)
            #expect(try await api.call(.get, "/me", token: other.token).status == .unauthorized)
            #expect(
                try await api.logIn(ana)
                    .status == .unauthorized)
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: "a new password"))
                    .status == .ok)
        }
    }

    @Test func preferencesAreAPrivateJSONObject() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let saved = try await api.call(
                .put, "/me/preferences", as: ana, raw: #"{"lastSpace": "cs101", "textSize": 1.2}"#)
            #expect(saved.status == .ok)
            let read = try await api.get("/me/preferences", as: ana).decode(JSONValue.self)
            #expect(read["lastSpace"]?.stringValue == "cs101")
            #expect(try await api.get("/me", as: ana).decode(Me.self).preferences["lastSpace"]?.stringValue == "cs101")
            #expect(try await api.get("/me/preferences", as: bob).decode(JSONValue.self) == .object([:]))
            #expect(try await api.get("/me/preferences").status == .unauthorized)
            #expect(try await api.call(.put, "/me/preferences", as: ana, raw: "[1, 2]").status == .unprocessableContent)
            let big = #"{"x": "\#(String(repeating: "a", count: 5000))"}"#
            #expect(try await api.call(.put, "/me/preferences", as: ana, raw: big).status == .unprocessableContent)
            #expect(
                try await api.get("/me/preferences", as: ana).decode(JSONValue.self)["lastSpace"]?.stringValue
                    == "cs101")
        }
    }

    @Test func sessionsCanBeListedAndRevokedOnlyByTheirOwner() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let phone = try await api.logIn(ana, headers: [.userAgent: "PhoneApp/1.0"]).decode(AuthResponse.self)
            let sessions = try await api.page("/me/sessions", as: ana, of: Session.self).items
            #expect(sessions.count == 2)
            #expect(sessions.filter(\.current).count == 1)
            let phoneSession = try #require(sessions.first { $0.userAgent == "PhoneApp/1.0" })
            #expect(!phoneSession.current)
            #expect(phoneSession.expiresAt > phoneSession.lastUsedAt)
            // Bob cannot see or revoke Ana's sessions.
            #expect(try await api.page("/me/sessions", as: bob, of: Session.self).items.count == 1)
            #expect(try await api.call(.delete, "/me/sessions/\(phoneSession.id)", as: bob).status == .notFound)
            #expect(try await api.call(.get, "/me", token: phone.token).status == .ok)
            #expect(try await api.call(.delete, "/me/sessions/\(phoneSession.id)").status == .unauthorized)
            #expect(try await api.call(.delete, "/me/sessions/\(phoneSession.id)", as: ana).status == .noContent)
            #expect(try await api.call(.get, "/me", token: phone.token).status == .unauthorized)
            #expect(try await api.call(.delete, "/me/sessions/not-an-id", as: ana).status == .notFound)
        }
    }

    @Test func idleSessionsExpire() async throws {
        try await withDatabase { db, config in
            let ids = IDGenerator(node: 1)
            // Time moves by rewriting last use, not by waiting: a busy machine cannot expire it early.
            let store = AccountStore(db: db, ids: ids, sessionIdleMillis: 3_600_000, searchWindows: SearchWindowCache())
            let user = try await store.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let token = try await store.createSession(userID: user, userAgent: nil, ip: nil)
            #expect(try await store.identity(token: token)?.userID == user)
            try await db.write { db in try await db.exec("UPDATE sessions SET last_used_at = last_used_at - 7200000") }
            // A store that has not seen the session lately (another app server, or after its
            // short cache) finds it expired.
            let elsewhere = AccountStore(
                db: db, ids: ids, sessionIdleMillis: 3_600_000, searchWindows: SearchWindowCache())
            #expect(try await elsewhere.identity(token: token) == nil)
            try await store.deleteIdleSessions()
            #expect(try await db.read { db in try await db.first("SELECT id FROM sessions") } == nil)
        }
    }

    @Test func tokensAreStoredOnlyAsHashes() async throws {
        try await withDatabase { db, _ in
            let store = AccountStore(
                db: db, ids: IDGenerator(node: 1), sessionIdleMillis: 86_400_000, searchWindows: SearchWindowCache())
            let user = try await store.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let token = try await store.createSession(userID: user, userAgent: nil, ip: nil)
            let stored = try await db.read { db in
                try await db.first("SELECT token_hash FROM sessions")?.decode(column: "token_hash", as: String.self)
            }
            #expect(stored != token)
            #expect(stored == SessionToken.hash(token))
        }
    }
}
