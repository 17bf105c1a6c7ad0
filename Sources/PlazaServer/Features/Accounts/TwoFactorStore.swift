import Crypto
import Foundation
import PlazaAPI

/// Two-factor sign-in with an authenticator app (TOTP) and one-time recovery codes, as Mastodon
/// and GitHub offer it.
///
/// Turning it on takes two steps: `begin` makes a secret the person adds to their app, `confirm`
/// checks a code from the app against it (so nobody locks themselves out with a secret their app
/// never got) and hands out ten recovery codes, shown once and kept only as SHA-256 hashes.
/// Signing in with it on: the password is checked as before, then `challenge` records the
/// half-done sign-in under a random token (kept hashed, 5 minutes, 5 codes), and `redeem`
/// accepts a current code (each time step once: `last_step`) or an unused recovery code.
struct TwoFactorStore: Sendable {
    let db: Database
    /// Seals the secrets under the key kept outside the database (`PLAZA_SECRET_KEY`).
    let secrets: SecretBox

    static func context(_ userID: Int64) -> String { "two_factor:\(userID)" }

    /// The stored secret's bytes, opened with the server's keys; nil when it does not open.
    func secret(_ row: Row, userID: Int64) throws -> [UInt8]? {
        secrets.open(try row.decode(column: "secret", as: String.self), context: Self.context(userID))
            .flatMap(Base32.decode)
    }

    static let recoveryCodeCount = 10
    static let challengeLifetimeMillis: Int64 = 5 * 60_000
    static let attemptsPerChallenge = 5

    struct Status: Sendable, Equatable {
        var enabled: Bool
        var recoveryCodesLeft: Int
    }

    func status(userID: Int64) async throws -> Status {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT (SELECT COUNT(*) FROM two_factor WHERE user_id = \(bind: userID) AND confirmed_at IS NOT NULL)
                    AS enabled,
                    (SELECT COUNT(*) FROM recovery_codes WHERE user_id = \(bind: userID)) AS codes
                """)
        }
        return Status(
            enabled: try row?.decode(column: "enabled", as: Int64.self) ?? 0 > 0,
            recoveryCodesLeft: Int(try row?.decode(column: "codes", as: Int64.self) ?? 0))
    }

    /// Asked at every sign-in: one primary-key look-up.
    func isEnabled(userID: Int64) async throws -> Bool {
        try await db.read { db in
            try await db.first(
                "SELECT user_id FROM two_factor WHERE user_id = \(bind: userID) AND confirmed_at IS NOT NULL") != nil
        }
    }

    enum BeginOutcome: Equatable {
        case started(secret: [UInt8])
        case alreadyEnabled
    }

    /// A new secret for the person to add to their app, replacing one not yet confirmed.
    func begin(userID: Int64, now: Timestamp = .now) async throws -> BeginOutcome {
        let secret = TOTP.makeSecret()
        let sealed = try secrets.seal(Base32.encode(secret), context: Self.context(userID))
        let stored = try await db.write { db -> Bool in
            try await db.first(
                """
                INSERT INTO two_factor (user_id, secret, confirmed_at, last_step, created_at)
                VALUES (\(bind: userID), \(bind: sealed), NULL, 0, \(bind: now.milliseconds))
                ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
                    last_step = 0
                WHERE two_factor.confirmed_at IS NULL
                RETURNING user_id
                """) != nil
        }
        return stored ? .started(secret: secret) : .alreadyEnabled
    }

    enum ConfirmOutcome: Equatable {
        case enabled(recoveryCodes: [String])
        case wrongCode
        case notStarted
        case alreadyEnabled
    }

    /// Turns two-factor sign-in on when `code` is the app's current code for the secret `begin`
    /// made; returns the recovery codes, which exist nowhere else in the clear.
    func confirm(userID: Int64, code: String, now: Timestamp = .now) async throws -> ConfirmOutcome {
        let codes = (0..<Self.recoveryCodeCount).map { _ in Self.makeRecoveryCode() }
        return try await db.write { db -> ConfirmOutcome in
            guard
                let row = try await db.first(
                    "SELECT secret, confirmed_at FROM two_factor WHERE user_id = \(bind: userID)\(db.dialect.rowLock(.update) ?? "")"
                )
            else { return .notStarted }
            if try row.decode(column: "confirmed_at", as: Int64?.self) != nil { return .alreadyEnabled }
            guard let secret = try secret(row, userID: userID),
                let step = TOTP.matchingStep(code, secret: secret, at: now)
            else { return .wrongCode }
            try await db.exec(
                """
                UPDATE two_factor SET confirmed_at = \(bind: now.milliseconds), last_step = \(bind: step)
                WHERE user_id = \(bind: userID)
                """)
            try await Self.replaceRecoveryCodes(userID: userID, with: codes, on: db)
            return .enabled(recoveryCodes: codes)
        }
    }

    /// New recovery codes for someone with two-factor sign-in on (the old ones stop working);
    /// nil when it is off.
    func regenerateRecoveryCodes(userID: Int64) async throws -> [String]? {
        let codes = (0..<Self.recoveryCodeCount).map { _ in Self.makeRecoveryCode() }
        return try await db.write { db -> [String]? in
            guard
                try await db.first(
                    "SELECT user_id FROM two_factor WHERE user_id = \(bind: userID) AND confirmed_at IS NOT NULL")
                    != nil
            else { return nil }
            try await Self.replaceRecoveryCodes(userID: userID, with: codes, on: db)
            return codes
        }
    }

    /// Turns two-factor sign-in off: the secret, the recovery codes and pending challenges go.
    func disable(userID: Int64) async throws {
        try await db.write { db in
            try await db.exec("DELETE FROM two_factor WHERE user_id = \(bind: userID)")
            try await db.exec("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)")
            try await db.exec("DELETE FROM login_challenges WHERE user_id = \(bind: userID)")
        }
    }

    /// Records a sign-in awaiting its second factor; returns the token the client answers with.
    /// Expired challenges (anyone's) are deleted on the way.
    func challenge(userID: Int64, now: Timestamp = .now) async throws -> String {
        let token = SessionToken.make()
        try await db.write { db in
            try await db.exec("DELETE FROM login_challenges WHERE expires_at < \(bind: now.milliseconds)")
            try await db.exec(
                """
                INSERT INTO login_challenges (token_hash, user_id, expires_at, attempts)
                VALUES (\(bind: SessionToken.hash(token)), \(bind: userID),
                    \(bind: now.milliseconds + Self.challengeLifetimeMillis), 0)
                """)
        }
        return token
    }

    /// The account a live challenge belongs to (for the throttle, before a code is checked).
    func challengedUser(token: String, now: Timestamp = .now) async throws -> Int64? {
        guard token.utf8.count <= 100 else { return nil }
        return try await db.read { db in
            try await db.first(
                """
                SELECT user_id FROM login_challenges
                WHERE token_hash = \(bind: SessionToken.hash(token)) AND expires_at >= \(bind: now.milliseconds)
                    AND attempts < \(bind: Self.attemptsPerChallenge)
                """)?.decode(column: "user_id", as: Int64.self)
        }
    }

    enum RedeemOutcome: Equatable {
        /// The sign-in may complete; the challenge is used up.
        case signedIn(userID: Int64, usedRecoveryCode: Bool)
        case wrongCode
        /// Unknown, expired, or out of attempts.
        case noChallenge
    }

    /// Completes a challenged sign-in with an app code or a recovery code. A wrong code counts
    /// against the challenge; a right one deletes it.
    func redeem(token: String, code: String, now: Timestamp = .now) async throws -> RedeemOutcome {
        guard token.utf8.count <= 100 else { return .noChallenge }
        let tokenHash = SessionToken.hash(token)
        return try await db.write { db -> RedeemOutcome in
            guard
                let row = try await db.first(
                    """
                    SELECT c.user_id, t.secret, t.last_step FROM login_challenges c
                    JOIN two_factor t ON t.user_id = c.user_id AND t.confirmed_at IS NOT NULL
                    WHERE c.token_hash = \(bind: tokenHash) AND c.expires_at >= \(bind: now.milliseconds)
                        AND c.attempts < \(bind: Self.attemptsPerChallenge)
                    """)
            else { return .noChallenge }
            let userID = try row.decode(column: "user_id", as: Int64.self)
            var usedRecoveryCode = false
            var accepted = false
            if let secret = try secret(row, userID: userID),
                let step = TOTP.matchingStep(code, secret: secret, at: now)
            {
                // A step at or before the last one accepted is a code used already.
                accepted =
                    try await db.first(
                        """
                        UPDATE two_factor SET last_step = \(bind: step)
                        WHERE user_id = \(bind: userID) AND last_step < \(bind: step) RETURNING user_id
                        """) != nil
            } else if let normalized = Self.normalizedRecoveryCode(code) {
                accepted =
                    try await db.first(
                        """
                        DELETE FROM recovery_codes
                        WHERE user_id = \(bind: userID) AND code_hash = \(bind: SessionToken.hash(normalized))
                        RETURNING user_id
                        """) != nil
                usedRecoveryCode = accepted
            }
            if accepted {
                try await db.exec("DELETE FROM login_challenges WHERE token_hash = \(bind: tokenHash)")
                return .signedIn(userID: userID, usedRecoveryCode: usedRecoveryCode)
            }
            try await db.exec(
                "UPDATE login_challenges SET attempts = attempts + 1 WHERE token_hash = \(bind: tokenHash)")
            return .wrongCode
        }
    }

    // MARK: recovery codes

    /// Ten letters and digits from base32's alphabet in two groups, e.g. `k3xq7-m2pva`: 50 bits.
    static func makeRecoveryCode() -> String {
        let letters = Base32.encode(ByteText.randomBytes(7)).lowercased().prefix(10)
        return "\(letters.prefix(5))-\(letters.suffix(5))"
    }

    /// The code as stored: lowercase, without the dash and spaces; nil when it cannot be one.
    static func normalizedRecoveryCode(_ code: String) -> String? {
        let kept = code.lowercased().unicodeScalars.filter { $0 != "-" && $0 != " " }
        guard kept.count == 10, kept.allSatisfy({ ("a"..."z").contains($0) || ("2"..."7").contains($0) }) else {
            return nil
        }
        return String(String.UnicodeScalarView(kept))
    }

    private static func replaceRecoveryCodes(userID: Int64, with codes: [String], on db: Connection) async throws {
        try await db.exec("DELETE FROM recovery_codes WHERE user_id = \(bind: userID)")
        for code in codes {
            guard let normalized = normalizedRecoveryCode(code) else { continue }
            try await db.exec(
                """
                INSERT INTO recovery_codes (user_id, code_hash)
                VALUES (\(bind: userID), \(bind: SessionToken.hash(normalized)))
                """)
        }
    }

    /// Seals every secret not sealed under the current key anew under it (`plaza secrets
    /// rotate`), in batches; returns how many, and how many did not open with the keys given.
    func reseal() async throws -> (resealed: Int, unreadable: Int) {
        var resealed = 0
        var unreadable = 0
        var after: Int64 = -1
        while true {
            let from = after
            let rows = try await db.read { db in
                try await db.rows(
                    "SELECT user_id, secret FROM two_factor WHERE user_id > \(bind: from) ORDER BY user_id LIMIT 500")
            }
            guard let last = rows.last else { break }
            after = try last.decode(column: "user_id", as: Int64.self)
            for row in rows {
                let userID = try row.decode(column: "user_id", as: Int64.self)
                let stored = try row.decode(column: "secret", as: String.self)
                guard !secrets.isCurrent(stored) else { continue }
                guard let plain = secrets.open(stored, context: Self.context(userID)) else {
                    unreadable += 1
                    continue
                }
                let sealed = try secrets.seal(plain, context: Self.context(userID))
                try await db.write { db in
                    try await db.exec(
                        "UPDATE two_factor SET secret = \(bind: sealed) WHERE user_id = \(bind: userID) AND secret = \(bind: stored)"
                    )
                }
                resealed += 1
            }
        }
        return (resealed, unreadable)
    }
}
