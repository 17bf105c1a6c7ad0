import Foundation
import PlazaAPI

/// Addresses proved by mail and passwords reset by mail.
///
/// Each flow mails a random token (256 bits; only its SHA-256 is kept in `email_tokens`) in the
/// same transaction that records it (`MailOutbox`), so a token never exists without its mail
/// nor a mail without its token. Redeeming a token deletes it: each works once.
/// Every write here locks the person's `users` row first, then their tokens: one order, and
/// concurrent requests for one person take turns (the throttles count correctly).
struct EmailStore: Sendable {
    let db: Database
    let outbox: MailOutbox
    let templates: MailTemplates
    /// Wakes the mail worker after a commit.
    let signal: WorkSignal

    static let verifyLifetimeMillis: Int64 = 24 * 3_600_000
    static let resetLifetimeMillis: Int64 = 3_600_000
    /// One mail of a kind per person per minute; at most `mailsPerHour` an hour.
    static let resendIntervalMillis: Int64 = 60_000
    static let mailsPerHour = 5

    enum Purpose: String { case verify, reset }

    private struct Person {
        var id: Int64
        var email: String
        var displayName: String
        var verified: Bool
        /// What their mails speak.
        var language: Language
    }

    private static func lockPerson(_ condition: SQL, on db: Connection) async throws -> Person? {
        guard
            let row = try await db.first(
                "SELECT id, email, display_name, email_verified_at, preferences FROM users WHERE \(condition)\(db.dialect.rowLock(.noKeyUpdate) ?? "")"
            )
        else { return nil }
        return Person(
            id: try row.decode(column: "id", as: Int64.self), email: try row.decode(column: "email", as: String.self),
            displayName: try row.decode(column: "display_name", as: String.self),
            verified: try row.decode(column: "email_verified_at", as: Int64?.self) != nil,
            language: Language(preferences: try row.decode(column: "preferences", as: String.self)))
    }

    /// Seconds until another mail of `purpose` may go to this person, or nil when one may now.
    private static func wait(for purpose: Purpose, userID: Int64, now: Int64, on db: Connection) async throws -> Int? {
        let rows = try await db.rows(
            """
            SELECT created_at FROM email_tokens WHERE user_id = \(bind: userID) AND purpose = \(bind: purpose.rawValue)
                AND created_at > \(bind: now - 3_600_000)
            ORDER BY created_at DESC LIMIT \(bind: mailsPerHour)
            """)
        let times = try rows.map { try $0.decode(column: "created_at", as: Int64.self) }
        if let last = times.first, now - last < resendIntervalMillis {
            return Int((resendIntervalMillis - (now - last) + 999) / 1000)
        }
        if times.count >= mailsPerHour, let oldest = times.last {
            return Int((3_600_000 - (now - oldest) + 999) / 1000)
        }
        return nil
    }

    /// Records a token and queues its mail.
    private func issue(
        _ purpose: Purpose, for person: Person, email: String, now: Int64, on db: Connection,
        message: (String) -> MailMessage
    ) async throws {
        let token = SessionToken.make()
        let lifetime = purpose == .verify ? Self.verifyLifetimeMillis : Self.resetLifetimeMillis
        try await db.exec("DELETE FROM email_tokens WHERE expires_at < \(bind: now)")
        try await db.exec(
            """
            INSERT INTO email_tokens (token_hash, user_id, purpose, email, created_at, expires_at)
            VALUES (\(bind: SessionToken.hash(token)), \(bind: person.id), \(bind: purpose.rawValue), \(bind: email),
                \(bind: now), \(bind: now + lifetime))
            """)
        try await outbox.enqueue(message(token), now: now, on: db)
    }

    enum SendOutcome: Equatable {
        case sent
        case alreadyVerified
        case tooSoon(retryAfter: Int)
        /// The account has no address (a provider gave none): `PUT /me/email` adds one.
        case noAddress
    }

    /// Mails a link that confirms the person's pending new address, else their current one.
    func sendVerification(userID: Int64, now: Int64 = Timestamp.now.milliseconds) async throws -> SendOutcome {
        let templates = templates
        let outcome = try await db.write { db -> SendOutcome in
            guard let person = try await Self.lockPerson("id = \(bind: userID)", on: db) else {
                return .alreadyVerified
            }
            let pending = try await Self.pendingEmail(userID: userID, now: now, on: db)
            guard pending != nil || !person.verified else { return .alreadyVerified }
            if let wait = try await Self.wait(for: .verify, userID: userID, now: now, on: db) {
                return .tooSoon(retryAfter: wait)
            }
            let address = pending ?? person.email
            guard !address.isEmpty else { return .noAddress }
            try await issue(.verify, for: person, email: address, now: now, on: db) { token in
                templates.verifyEmail(
                    to: address, name: person.displayName, token: token, change: pending != nil,
                    language: person.language)
            }
            return .sent
        }
        if outcome == .sent { signal.wake() }
        return outcome
    }

    /// Column `pending_email` of users `u`: the newest unexpired address awaiting confirmation
    /// that is not the current one.
    static func pendingEmail(now: Int64) -> SQL {
        """
        (SELECT t.email FROM email_tokens t
            WHERE t.user_id = u.id AND t.purpose = 'verify' AND t.expires_at > \(bind: now) AND lower(t.email) <> u.email_key
            ORDER BY t.created_at DESC LIMIT 1) AS pending_email
        """
    }

    static func pendingEmail(userID: Int64, now: Int64, on db: Connection) async throws -> String? {
        try await db.first("SELECT \(pendingEmail(now: now)) FROM users u WHERE u.id = \(bind: userID)")?.decode(
            column: "pending_email", as: String?.self)
    }

    /// Starts a change of address: mails a link to `newEmail`; the account keeps its address until
    /// the link is opened. Throws 409 when another account has it.
    func requestChange(userID: Int64, to newEmail: String, now: Int64 = Timestamp.now.milliseconds) async throws
        -> SendOutcome
    {
        let templates = templates
        let outcome = try await db.write { db -> SendOutcome in
            guard let person = try await Self.lockPerson("id = \(bind: userID)", on: db) else {
                return .alreadyVerified
            }
            if newEmail.lowercased() == person.email.lowercased() {
                // Back to the current address: forget the pending change.
                try await db.exec(
                    "DELETE FROM email_tokens WHERE user_id = \(bind: userID) AND purpose = 'verify' AND lower(email) <> \(bind: person.email.lowercased())"
                )
                return .alreadyVerified
            }
            if try await db.first("SELECT id FROM users WHERE email_key = \(bind: newEmail.lowercased())") != nil {
                throw AccountStore.emailTaken
            }
            if let wait = try await Self.wait(for: .verify, userID: userID, now: now, on: db) {
                return .tooSoon(retryAfter: wait)
            }
            try await issue(.verify, for: person, email: newEmail, now: now, on: db) { token in
                templates.verifyEmail(
                    to: newEmail, name: person.displayName, token: token, change: true, language: person.language)
            }
            return .sent
        }
        if outcome == .sent { signal.wake() }
        return outcome
    }

    enum VerifyOutcome: Equatable {
        case verified(userID: Int64)
        case invalid
    }

    /// Confirms the address a verification token was mailed to; when it is a new address it
    /// replaces the old one, which is told. 409 when another account took it meanwhile.
    func verify(token: String, now: Int64 = Timestamp.now.milliseconds) async throws -> VerifyOutcome {
        let hash = SessionToken.hash(token)
        let templates = templates
        let outcome = try await db.write { db -> VerifyOutcome in
            guard
                let row = try await db.first(
                    "SELECT user_id, email FROM email_tokens WHERE token_hash = \(bind: hash) AND purpose = 'verify' AND expires_at > \(bind: now)"
                )
            else { return .invalid }
            let userID = try row.decode(column: "user_id", as: Int64.self)
            let email = try row.decode(column: "email", as: String.self)
            guard let person = try await Self.lockPerson("id = \(bind: userID)", on: db) else { return .invalid }
            guard
                try await db.first(
                    "DELETE FROM email_tokens WHERE token_hash = \(bind: hash) RETURNING user_id") != nil
            else { return .invalid }
            if email.lowercased() != person.email.lowercased() {
                if try await db.first(
                    "SELECT id FROM users WHERE email_key = \(bind: email.lowercased()) AND id <> \(bind: userID)")
                    != nil
                {
                    throw AccountStore.emailTaken
                }
                try await db.exec(
                    """
                    UPDATE users SET email = \(bind: email), email_key = \(bind: email.lowercased()), email_verified_at = \(bind: now)
                    WHERE id = \(bind: userID)
                    """)
                // Tokens mailed to the old address no longer prove anything.
                try await db.exec("DELETE FROM email_tokens WHERE user_id = \(bind: userID)")
                // An account a provider made may have had no address to tell.
                if !person.email.isEmpty {
                    try await outbox.enqueue(
                        templates.emailChanged(
                            to: person.email, name: person.displayName, newAddress: email, language: person.language),
                        now: now,
                        on: db)
                }
            } else {
                try await db.exec("UPDATE users SET email_verified_at = \(bind: now) WHERE id = \(bind: userID)")
                try await db.exec(
                    "DELETE FROM email_tokens WHERE user_id = \(bind: userID) AND purpose = 'verify' AND lower(email) = \(bind: email.lowercased())"
                )
            }
            return .verified(userID: userID)
        }
        signal.wake()
        return outcome
    }

    /// Tells the person a provider can now sign in to their account (nothing without an address).
    func notifyProviderLinked(userID: Int64, provider: String) async throws {
        let templates = templates
        let queued = try await db.write { db -> Bool in
            guard let person = try await Self.lockPerson("id = \(bind: userID)", on: db), !person.email.isEmpty else {
                return false
            }
            try await outbox.enqueue(
                templates.providerLinked(
                    to: person.email, name: person.displayName, provider: provider, language: person.language), on: db)
            return true
        }
        if queued { signal.wake() }
    }

    /// Mails a reset link to the account with this address, if there is one that may sign in (not
    /// suspended; one whose deletion is pending may, to keep it) and it is not throttled; the
    /// caller answers the same in every case.
    func requestReset(email: String, now: Int64 = Timestamp.now.milliseconds) async throws {
        let templates = templates
        let sent = try await db.write { db -> Bool in
            guard
                let person = try await Self.lockPerson(
                    "email_key = \(bind: email.lowercased()) AND \(AccountStore.maySignIn(now: now))", on: db),
                try await Self.wait(for: .reset, userID: person.id, now: now, on: db) == nil
            else { return false }
            try await issue(.reset, for: person, email: person.email, now: now, on: db) { token in
                templates.passwordReset(
                    to: person.email, name: person.displayName, token: token, language: person.language)
            }
            return true
        }
        if sent { signal.wake() }
    }

    /// Sets a new password with a reset token: the token and the person's other reset tokens
    /// go, every session ends, and the address counts as verified (the link proved it).
    /// Returns the person, or nil when the token is unknown, used or expired.
    func resetPassword(token: String, hash passwordHash: String, now: Int64 = Timestamp.now.milliseconds)
        async throws -> Int64?
    {
        let hash = SessionToken.hash(token)
        return try await db.write { db -> Int64? in
            guard
                let row = try await db.first(
                    "SELECT user_id, email FROM email_tokens WHERE token_hash = \(bind: hash) AND purpose = 'reset' AND expires_at > \(bind: now)"
                )
            else { return nil }
            let userID = try row.decode(column: "user_id", as: Int64.self)
            guard
                let person = try await Self.lockPerson(
                    "id = \(bind: userID) AND \(AccountStore.maySignIn(now: now))", on: db),
                try await db.first("DELETE FROM email_tokens WHERE token_hash = \(bind: hash) RETURNING user_id")
                    != nil
            else { return nil }
            let sameAddress = try row.decode(column: "email", as: String.self).lowercased() == person.email.lowercased()
            try await db.exec(
                """
                UPDATE users SET password_hash = \(bind: passwordHash),
                    email_verified_at = \(sameAddress ? SQL("COALESCE(email_verified_at, \(bind: now))") : "email_verified_at")
                WHERE id = \(bind: userID)
                """)
            try await db.exec("DELETE FROM email_tokens WHERE user_id = \(bind: userID) AND purpose = 'reset'")
            try await AccountStore.deleteSessions(of: userID, on: db)
            return userID
        }
    }
}
