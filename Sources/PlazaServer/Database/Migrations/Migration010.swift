/// Two-factor sign-in (`TwoFactorStore`).
///
/// - `two_factor`: a person's TOTP secret (base32), `confirmed_at` NULL while it is being set up,
///   and `last_step`, the newest time step a code was accepted for, so each code works once.
/// - `recovery_codes`: SHA-256 of each unused one-time recovery code.
/// - `login_challenges`: a sign-in whose password was right and whose second factor is awaited,
///   by the SHA-256 of the challenge token handed to the client; `attempts` caps the codes tried
///   on one challenge; `login_challenges_expiry` finds the expired ones to delete.
enum Migration010 {
    static let migration = Migration(
        version: 10,
        name: "two_factor",
        statements: [
            """
            CREATE TABLE two_factor (
                user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                secret TEXT NOT NULL,
                confirmed_at BIGINT,
                last_step BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE recovery_codes (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                code_hash TEXT NOT NULL,
                PRIMARY KEY (user_id, code_hash)
            ) {without_rowid}
            """,
            """
            CREATE TABLE login_challenges (
                token_hash TEXT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                expires_at BIGINT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX login_challenges_expiry ON login_challenges (expires_at)",
            "CREATE INDEX login_challenges_user ON login_challenges (user_id)",
        ]
    )
}
