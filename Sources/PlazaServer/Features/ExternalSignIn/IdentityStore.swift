import Crypto
import Foundation
import PlazaAPI

/// Provider accounts linked to people, web sign-ins under way, and nonces already used.
struct IdentityStore: Sendable {
    let db: Database

    static let flowLifetimeMillis: Int64 = 10 * 60_000

    struct Flow: Sendable, Equatable {
        var nonce: String
        var verifier: String
        var next: String
        var linkUserID: Int64?
    }

    /// Records a web sign-in (or, with `linkUserID`, a linking) about to go to the provider;
    /// returns its state and the nonce and PKCE verifier to send.
    func startFlow(provider: String, next: String, linkUserID: Int64?, now: Int64 = Timestamp.now.milliseconds)
        async throws -> (state: String, flow: Flow)
    {
        let state = SessionToken.make()
        let flow = Flow(nonce: SessionToken.make(), verifier: SessionToken.make(), next: next, linkUserID: linkUserID)
        try await db.write { db in
            try await db.exec("DELETE FROM auth_flows WHERE expires_at < \(bind: now)")
            try await db.exec(
                """
                INSERT INTO auth_flows (state_hash, provider, nonce, verifier, next, link_user_id, expires_at)
                VALUES (\(bind: SessionToken.hash(state)), \(bind: provider), \(bind: flow.nonce), \(bind: flow.verifier),
                    \(bind: next), \(bind: linkUserID), \(bind: now + Self.flowLifetimeMillis))
                """)
        }
        return (state, flow)
    }

    /// The flow `state` names, once: it is deleted as it is read.
    func takeFlow(state: String, provider: String, now: Int64 = Timestamp.now.milliseconds) async throws -> Flow? {
        guard
            let row = try await db.write({ db in
                try await db.first(
                    """
                    DELETE FROM auth_flows WHERE state_hash = \(bind: SessionToken.hash(state)) AND provider = \(bind: provider)
                        AND expires_at >= \(bind: now)
                    RETURNING nonce, verifier, next, link_user_id
                    """)
            })
        else { return nil }
        return Flow(
            nonce: try row.decode(column: "nonce", as: String.self),
            verifier: try row.decode(column: "verifier", as: String.self),
            next: try row.decode(column: "next", as: String.self),
            linkUserID: try row.decode(column: "link_user_id", as: Int64?.self))
    }

    /// Records that a token with this nonce was exchanged; false when one already was.
    func useNonce(_ nonce: String, provider: String, until expiry: Int64, now: Int64 = Timestamp.now.milliseconds)
        async throws -> Bool
    {
        let hash = ByteText.hex(SHA256.hash(data: Data(nonce.utf8)))
        return try await db.write { db in
            try await db.exec("DELETE FROM used_nonces WHERE expires_at < \(bind: now)")
            return try await db.first(
                """
                INSERT INTO used_nonces (provider, nonce_hash, expires_at) VALUES (\(bind: provider), \(bind: hash), \(bind: max(expiry, now)))
                ON CONFLICT (provider, nonce_hash) DO NOTHING RETURNING provider
                """) != nil
        }
    }

    /// The person this provider account signs in to, noting the use.
    func user(provider: String, subject: String, now: Int64 = Timestamp.now.milliseconds) async throws -> Int64? {
        try await db.write { db in
            try await db.first(
                """
                UPDATE identities SET last_used_at = \(bind: now) WHERE provider = \(bind: provider) AND subject = \(bind: subject)
                RETURNING user_id
                """)?.decode(column: "user_id", as: Int64.self)
        }
    }

    enum LinkOutcome: Equatable {
        case linked
        case alreadyYours
        /// The provider account signs in to someone else; or this person has another account
        /// of the same provider linked.
        case taken
    }

    /// Links a provider account to `userID`.
    func link(
        provider: String, subject: String, email: String?, to userID: Int64, now: Int64 = Timestamp.now.milliseconds
    )
        async throws -> LinkOutcome
    {
        try await db.write { db -> LinkOutcome in
            if let owner = try await db.first(
                "SELECT user_id FROM identities WHERE provider = \(bind: provider) AND subject = \(bind: subject)")
            {
                return try owner.decode(column: "user_id", as: Int64.self) == userID ? .alreadyYours : .taken
            }
            if try await db.first(
                "SELECT subject FROM identities WHERE user_id = \(bind: userID) AND provider = \(bind: provider)")
                != nil
            {
                return .taken
            }
            try await Self.insert(provider: provider, subject: subject, email: email, userID: userID, now: now, on: db)
            return .linked
        }
    }

    static func insert(
        provider: String, subject: String, email: String?, userID: Int64, now: Int64, on db: Connection
    ) async throws {
        try await db.exec(
            """
            INSERT INTO identities (provider, subject, user_id, email, created_at, last_used_at)
            VALUES (\(bind: provider), \(bind: subject), \(bind: userID), \(bind: email), \(bind: now), \(bind: now))
            """)
    }

    struct Linked: Sendable, Equatable {
        var provider: String
        var email: String?
        var createdAt: Int64
        var lastUsedAt: Int64
    }

    func identities(userID: Int64) async throws -> [Linked] {
        try await db.read { db in
            try await db.rows(
                "SELECT provider, email, created_at, last_used_at FROM identities WHERE user_id = \(bind: userID) ORDER BY provider"
            ).map {
                Linked(
                    provider: try $0.decode(column: "provider", as: String.self),
                    email: try $0.decode(column: "email", as: String?.self),
                    createdAt: try $0.decode(column: "created_at", as: Int64.self),
                    lastUsedAt: try $0.decode(column: "last_used_at", as: Int64.self))
            }
        }
    }

    enum UnlinkOutcome: Equatable { case removed, notLinked, lastWayToSignIn }

    /// Unlinks the person's account at `provider`, unless it is their last way to sign in (no
    /// password and no other provider). The `users` row is locked first, as everywhere.
    func unlink(provider: String, userID: Int64) async throws -> UnlinkOutcome {
        try await db.write { db -> UnlinkOutcome in
            guard
                let person = try await db.first(
                    "SELECT password_hash FROM users WHERE id = \(bind: userID)\(db.dialect.rowLock(.noKeyUpdate) ?? "")"
                )
            else { return .notLinked }
            let hasPassword = !(try person.decode(column: "password_hash", as: String.self)).isEmpty
            let linked = try await db.rows("SELECT provider FROM identities WHERE user_id = \(bind: userID)").map {
                try $0.decode(column: "provider", as: String.self)
            }
            guard linked.contains(provider) else { return .notLinked }
            guard hasPassword || linked.count > 1 else { return .lastWayToSignIn }
            try await db.exec(
                "DELETE FROM identities WHERE user_id = \(bind: userID) AND provider = \(bind: provider)")
            return .removed
        }
    }
}
