import Foundation
import PlazaAPI

/// Users' private data and sessions.
package struct AccountStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let sessionIdleMillis: Int64
    /// A session ends this long after sign-in, however much it is used.
    var sessionMaxMillis: Int64 = 90 * 86_400_000
    /// Cleared when a display name changes: posts are found by their author's name.
    let searchWindows: SearchWindowCache
    let sessionCache = SessionCache()

    struct NewUser: Sendable {
        var username: String
        var email: String
        var passwordHash: String
        var displayName: String
        var isAdmin = false
        /// Made by an operator (command line, demo) or from a provider that vouched for the
        /// address: it needs no confirming.
        var emailVerified = false
        /// Made by signing in with a provider: its account, linked in the same transaction.
        var identity: ProviderAccount?
        /// The preferences to start with, as stored (JSON).
        var preferences = "{}"
        /// How the account joins (`InstanceStore.admission`).
        var admission = Admission.open
    }

    /// How a new account joins, by the instance's registration mode.
    enum Admission: Sendable, Equatable {
        /// At once.
        case open
        /// With an invite's code, one of its uses taken in the account's transaction.
        case invited(code: String)
        /// Waiting for an admin: hidden and unable to sign in (as if suspended) until approved.
        case pending(reason: String)
    }

    /// A provider's account as a sign-in presents it.
    struct ProviderAccount: Sendable {
        var provider: String
        var subject: String
        var email: String?
    }

    /// Creates a user; 409 when the username or email is taken (case-insensitively).
    func createUser(_ new: NewUser) async throws -> Int64 {
        let id = ids.next()
        let usernameKey = new.username.lowercased()
        // An account without an address (a provider gave none) has a key no address can have.
        let emailKey = new.email.isEmpty ? "!\(id)" : new.email.lowercased()
        let now = Timestamp.now.milliseconds
        do {
            try await db.write { db in
                if let row = try await db.first(
                    "SELECT username_key FROM users WHERE username_key = \(bind: usernameKey) OR email_key = \(bind: emailKey) LIMIT 1"
                ) {
                    throw try row.decode(column: "username_key", as: String.self) == usernameKey
                        ? Self.usernameTaken : Self.emailTaken
                }
                // A deleted account's name stays retired: nobody may pose as its owner.
                if try await db.first("SELECT 1 AS ok FROM retired_usernames WHERE username_key = \(bind: usernameKey)")
                    != nil
                {
                    throw Self.usernameTaken
                }
                var pending: (since: Int64, reason: String)?
                switch new.admission {
                case .open: break
                case .invited(let code): try await InstanceStore.useInvite(code, now: now, on: db)
                case .pending(let reason): pending = (now, reason)
                }
                try await db.exec(
                    """
                    INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, is_admin, created_at,
                        email_verified_at, preferences, suspended_at, pending_since, sign_up_reason)
                    VALUES (\(bind: id), \(bind: new.username), \(bind: usernameKey), \(bind: new.email), \(bind: emailKey),
                            \(bind: new.passwordHash), \(bind: new.displayName), \(bind: new.isAdmin), \(bind: now),
                            \(bind: new.emailVerified ? now : nil), \(bind: new.preferences), \(bind: pending?.since),
                            \(bind: pending?.since), \(bind: pending?.reason))
                    """)
                if let identity = new.identity {
                    try await IdentityStore.insert(
                        provider: identity.provider, subject: identity.subject, email: identity.email, userID: id,
                        now: now, on: db)
                }
            }
        } catch  where Dialect.isUniqueViolation(error) {
            throw Self.usernameTaken
        }
        return id
    }

    static let usernameTaken = PlazaError(.conflict, "username_taken", "That username is taken.", field: "username")
    static let emailTaken = PlazaError(.conflict, "email_taken", "An account with that email exists.", field: "email")

    /// The user, password hash, whether they may sign in (`maySignIn`) and whether their sign-up
    /// waits for approval, for a username or email.
    func credentials(login: String) async throws -> (id: Int64, hash: String?, suspended: Bool, pending: Bool)? {
        let key = login.lowercased()
        let column: SQL = key.contains("@") ? "email_key" : "username_key"
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT id, password_hash, \(Self.maySignIn(now: Timestamp.now.milliseconds)) AS may_sign_in,
                        pending_since IS NOT NULL AS pending
                    FROM users WHERE \(column) = \(bind: key)
                    """)
            })
        else { return nil }
        // No password (an account made by a provider): the decoy hash is checked, and fails.
        let hash = try row.decode(column: "password_hash", as: String.self)
        return (
            try row.decode(column: "id", as: Int64.self), hash.isEmpty ? nil : hash,
            !(try row.decode(column: "may_sign_in", as: Bool.self)), try row.decode(column: "pending", as: Bool.self)
        )
    }

    /// True when the person may sign in: not suspended, or hidden only because they asked to
    /// delete the account and its grace period still runs (signing in keeps the account).
    static func maySignIn(now: Int64) -> SQL {
        "(suspended_at IS NULL OR (deletion_due_at IS NOT NULL AND deletion_due_at > \(bind: now)))"
    }

    /// False when the account is suspended or gone (`maySignIn`).
    func maySignIn(userID: Int64) async throws -> Bool {
        try await db.read { db in
            try await db.first(
                "SELECT id FROM users WHERE id = \(bind: userID) AND \(Self.maySignIn(now: Timestamp.now.milliseconds))"
            )
                != nil
        }
    }

    /// True while the person's sign-up waits for an admin's approval.
    func isPending(userID: Int64) async throws -> Bool {
        try await db.read { db in
            try await db.first("SELECT id FROM users WHERE id = \(bind: userID) AND pending_since IS NOT NULL") != nil
        }
    }

    /// The person's password hash; nil when they have none (an account made by a provider).
    func passwordHash(userID: Int64) async throws -> String? {
        try await db.read { db in
            try await db.first("SELECT password_hash FROM users WHERE id = \(bind: userID)")?.decode(
                column: "password_hash", as: String.self)
        }.flatMap { $0.isEmpty ? nil : $0 }
    }

    func setPassword(userID: Int64, hash: String, keepingSession sessionID: Int64) async throws {
        try await db.write { db in
            try await db.exec("UPDATE users SET password_hash = \(bind: hash) WHERE id = \(bind: userID)")
            try await db.exec("DELETE FROM sessions WHERE user_id = \(bind: userID) AND id <> \(bind: sessionID)")
            // A reset link mailed before no longer applies.
            try await db.exec("DELETE FROM email_tokens WHERE user_id = \(bind: userID) AND purpose = 'reset'")
        }
        sessionCache.forget(userID: userID, except: sessionID)
    }

    // MARK: sessions

    /// Starts a session and returns its token (shown once; only its hash is stored). An app's
    /// session (OAuth) names the app and the scopes it was granted. `signingIn`: the person proved
    /// who they are just now (a password, a provider), which keeps an account whose deletion they
    /// asked for (`AccountDeletion`) while its grace period runs.
    package func createSession(
        userID: Int64, userAgent: String?, ip: String?, app: (id: Int64, scopes: OAuthScopes)? = nil,
        signingIn: Bool = false
    ) async throws -> String {
        let token = SessionToken.make()
        let now = Timestamp.now.milliseconds
        let id = ids.next()
        try await db.write { db in
            if signingIn { try await AccountDeletion.cancel(userID: userID, now: now, on: db) }
            try await db.exec(
                """
                INSERT INTO sessions (id, user_id, token_hash, created_at, last_used_at, user_agent, ip, app_id, scopes)
                VALUES (\(bind: id), \(bind: userID), \(bind: SessionToken.hash(token)), \(bind: now), \(bind: now),
                        \(bind: userAgent.map { String($0.prefix(300)) }), \(bind: ip), \(bind: app?.id),
                        \(bind: app?.scopes.description))
                """)
        }
        return token
    }

    /// The identity behind a token, if the session exists, has not been idle too long and is
    /// younger than the absolute lifetime. Refreshes the session's last use at most once a minute.
    package func identity(token: String) async throws -> Identity? {
        let now = Timestamp.now.milliseconds
        let hash = SessionToken.hash(token)
        if let cached = sessionCache.get(hash, now: now), now - cached.lastUsed < sessionIdleMillis,
            now - cached.createdAt < sessionMaxMillis
        {
            return cached.identity
        }
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT s.id, s.user_id, s.created_at, s.last_used_at, s.scopes, u.is_admin FROM sessions s JOIN users u ON u.id = s.user_id
                    WHERE s.token_hash = \(bind: hash) AND u.suspended_at IS NULL
                    """)
            })
        else { return nil }
        let sessionID = try row.decode(column: "id", as: Int64.self)
        let lastUsed = try row.decode(column: "last_used_at", as: Int64.self)
        let createdAt = try row.decode(column: "created_at", as: Int64.self)
        guard now - lastUsed < sessionIdleMillis, now - createdAt < sessionMaxMillis else { return nil }
        var used = lastUsed
        if now - lastUsed > 60_000 {
            try await db.write { db in
                try await db.exec("UPDATE sessions SET last_used_at = \(bind: now) WHERE id = \(bind: sessionID)")
            }
            used = now
        }
        let identity = Identity(
            userID: try row.decode(column: "user_id", as: Int64.self), sessionID: sessionID,
            isAdmin: try row.decode(column: "is_admin", as: Bool.self),
            scopes: try row.decode(column: "scopes", as: String?.self).map { OAuthScopes($0) ?? .defaultScopes })
        sessionCache.put(hash, .init(identity: identity, lastUsed: used, createdAt: createdAt, cachedAt: now))
        return identity
    }

    func sessions(userID: Int64, current: Int64) async throws -> [Session] {
        let (idle, max) = (sessionIdleMillis, sessionMaxMillis)
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT s.id, s.created_at, s.last_used_at, s.user_agent, s.ip, s.scopes, a.name AS app_name
                FROM sessions s LEFT JOIN oauth_apps a ON a.id = s.app_id
                WHERE s.user_id = \(bind: userID) ORDER BY s.id DESC LIMIT 200
                """)
        }
        return try rows.map { row in
            let id = try row.decode(column: "id", as: Int64.self)
            let lastUsed = try row.decode(column: "last_used_at", as: Int64.self)
            let createdAt = try row.decode(column: "created_at", as: Int64.self)
            return Session(
                id: String(id), createdAt: Timestamp(milliseconds: createdAt),
                lastUsedAt: Timestamp(milliseconds: lastUsed),
                expiresAt: Timestamp(milliseconds: min(lastUsed + idle, createdAt + max)),
                userAgent: try row.decode(column: "user_agent", as: String?.self),
                ip: try row.decode(column: "ip", as: String?.self),
                current: id == current, app: try row.decode(column: "app_name", as: String?.self),
                scopes: try row.decode(column: "scopes", as: String?.self))
        }
    }

    /// The OAuth app a session was given to, if any.
    package func app(ofSession id: Int64) async throws -> Int64? {
        try await db.read { db in
            try await db.first("SELECT app_id FROM sessions WHERE id = \(bind: id)")
        }.flatMap { try $0.decode(column: "app_id", as: Int64?.self) }
    }

    /// Ends one of the user's sessions; false when it is not theirs or does not exist.
    func deleteSession(id: Int64, userID: Int64) async throws -> Bool {
        let deleted = try await db.write { db in
            try await db.first("DELETE FROM sessions WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id")
                != nil
        }
        sessionCache.forget(userID: userID, sessionID: id)
        return deleted
    }

    /// Ends every session of `userID` in the caller's transaction and, on PostgreSQL, tells every
    /// app server to forget them when it commits (`SessionRevocations`); call `forgetSessions`
    /// after the commit for this server's cache.
    static func deleteSessions(of userID: Int64, on db: Connection) async throws {
        try await db.exec("DELETE FROM sessions WHERE user_id = \(bind: userID)")
        if let notify = db.dialect.notify(SessionRevocations.channel, String(userID)) { try await db.exec(notify) }
    }

    /// Forgets the cached sessions of `userID` on this server.
    func forgetSessions(of userID: Int64) {
        sessionCache.forget(userID: userID)
    }

    /// Which of these sessions still exist (open streams end when theirs is revoked).
    /// How many people (not suspended) and posts this instance has, for its public description.
    package func instanceCounts() async throws -> (people: Int, posts: Int) {
        try await db.read { db in
            let row = try await db.first(
                "SELECT (SELECT count(*) FROM users WHERE suspended_at IS NULL) AS users, (SELECT count(*) FROM posts) AS posts"
            )
            return (
                Int(try row?.decode(column: "users", as: Int64.self) ?? 0),
                Int(try row?.decode(column: "posts", as: Int64.self) ?? 0)
            )
        }
    }

    func existingSessions(_ ids: [Int64]) async throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.read { db in try await db.rows("SELECT id FROM sessions WHERE id IN (\(binds: ids))") }
        return Set(try rows.map { try $0.decode(column: "id", as: Int64.self) })
    }

    /// Ends sessions past their idle or absolute lifetime, and drops OAuth codes past their ten minutes.
    func deleteIdleSessions(now: Timestamp = .now) async throws {
        let (idle, max) = (now.milliseconds - sessionIdleMillis, now.milliseconds - sessionMaxMillis)
        try await db.write { db in
            try await db.exec("DELETE FROM sessions WHERE last_used_at < \(bind: idle) OR created_at < \(bind: max)")
            try await db.exec("DELETE FROM oauth_codes WHERE expires_at < \(bind: now.milliseconds)")
        }
    }

    // MARK: me

    package func me(userID: Int64) async throws -> Me {
        let now = Timestamp.now.milliseconds
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT \(UserRecord.columns), u.email, u.email_verified_at, \(EmailStore.pendingEmail(now: now)),
                        u.preferences, u.is_admin, u.unread_notifications
                    FROM users u WHERE u.id = \(bind: userID)
                    """)
            })
        else { throw PlazaError.unauthorized }
        let preferences = try row.decode(column: "preferences", as: String.self)
        return Me(
            user: try UserRecord(row: row).user(viewer: nil),
            email: try row.decode(column: "email", as: String.self),
            emailVerified: try row.decode(column: "email_verified_at", as: Int64?.self) != nil,
            pendingEmail: try row.decode(column: "pending_email", as: String?.self),
            preferences: Self.decodePreferences(preferences),
            isAdmin: try row.decode(column: "is_admin", as: Bool.self),
            unreadNotifications: try row.decode(column: "unread_notifications", as: Int.self))
    }

    package func updateProfile(userID: Int64, displayName: String?, bio: String?, status: FieldUpdate<StatusInput>)
        async throws
    {
        var sets: [SQL] = []
        if let displayName { sets.append("display_name = \(bind: displayName)") }
        if let bio { sets.append("bio = \(bind: bio)") }
        switch status {
        case .keep: break
        case .clear: sets.append("status_kind = NULL, status_text = NULL, status_updated_at = NULL")
        case .set(let s):
            sets.append(
                "status_kind = \(bind: s.kind), status_text = \(bind: s.text), status_updated_at = \(bind: Timestamp.now.milliseconds)"
            )
        }
        guard !sets.isEmpty else { return }
        let assignments = sets.joined(separator: ", ")
        try await db.write { db in
            try await db.exec("UPDATE users SET \(assignments) WHERE id = \(bind: userID)")
        }
        if displayName != nil { searchWindows.clear() }
    }

    /// The user's preferences (an empty object for an unknown user).
    func preferences(userID: Int64) async throws -> JSONValue {
        let text = try await db.read { db in
            try await db.first("SELECT preferences FROM users WHERE id = \(bind: userID)")?.decode(
                column: "preferences", as: String.self)
        }
        return text.map(Self.decodePreferences) ?? .object([:])
    }

    /// Sets one key of the user's preferences, writing only when it changes (checked on a
    /// reader first, so repeated views cost no write).
    package func setPreference(_ key: String, to value: JSONValue, userID: Int64) async throws {
        let current = try await db.read { db in
            try await db.first("SELECT preferences FROM users WHERE id = \(bind: userID)")?.decode(
                column: "preferences", as: String.self)
        }
        guard let current, case .object(let preferences) = Self.decodePreferences(current), preferences[key] != value
        else { return }
        try await db.write { db in
            let text = try await Self.lockedPreferences(userID: userID, on: db)
            guard let text, case .object(var preferences) = Self.decodePreferences(text), preferences[key] != value
            else { return }
            preferences[key] = value
            let json = String(decoding: try JSON.encoder.encode(JSONValue.object(preferences)), as: UTF8.self)
            try await db.exec("UPDATE users SET preferences = \(bind: json) WHERE id = \(bind: userID)")
        }
    }

    /// Applies a JSON merge patch (RFC 7396) to the preferences under the row's lock (two
    /// patches at once both land); `check` validates the result and gives the JSON to store.
    func patchPreferences(
        userID: Int64, patch: JSONValue, check: @escaping @Sendable (JSONValue) throws -> String
    ) async throws -> JSONValue {
        try await db.write { db in
            let current = Self.decodePreferences(try await Self.lockedPreferences(userID: userID, on: db) ?? "{}")
            let merged = JSONValue.mergePatch(current, patch)
            let json = try check(merged)
            try await db.exec("UPDATE users SET preferences = \(bind: json) WHERE id = \(bind: userID)")
            return merged
        }
    }

    private static func lockedPreferences(userID: Int64, on db: Connection) async throws -> String? {
        try await db.first(
            "SELECT preferences FROM users WHERE id = \(bind: userID)\(db.dialect.rowLock(.noKeyUpdate) ?? "")"
        )?.decode(column: "preferences", as: String.self)
    }

    static func decodePreferences(_ text: String) -> JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) ?? .object([:])
    }

    func setPreferences(userID: Int64, json: String) async throws {
        try await db.write { db in
            try await db.exec("UPDATE users SET preferences = \(bind: json) WHERE id = \(bind: userID)")
        }
    }
}
