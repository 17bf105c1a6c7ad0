/// Email: verified addresses, single-use tokens mailed to people, and the outbox.
///
/// - `users.email_verified_at`: when the current address was confirmed (NULL: not yet).
/// - `email_tokens`: SHA-256 of each token mailed for `purpose` 'verify' (confirms `email`,
///   which becomes the account's address) or 'reset' (a new password); single use, until
///   `expires_at`. `email_tokens_user` finds a person's tokens (throttling, invalidation).
/// - `mail_outbox`: every message to send, written in the transaction that caused it, sent by
///   `MailService` with retries (`next_attempt_at`, `attempts`), kept after sending without its
///   bodies (they held the tokens) for the admins' list. `mail_outbox_due` is the worker's
///   queue; `mail_outbox_state` the admins' list by state, newest first.
enum Migration012 {
    static let migration = Migration(
        version: 12,
        name: "email",
        statements: [
            "ALTER TABLE users ADD COLUMN email_verified_at BIGINT",
            """
            CREATE TABLE email_tokens (
                token_hash TEXT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL,
                email TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX email_tokens_user ON email_tokens (user_id, purpose, created_at)",
            "CREATE INDEX email_tokens_expiry ON email_tokens (expires_at)",
            """
            CREATE TABLE mail_outbox (
                id BIGINT PRIMARY KEY,
                kind TEXT NOT NULL,
                recipient TEXT NOT NULL,
                subject TEXT NOT NULL,
                text_body TEXT NOT NULL,
                html_body TEXT NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending',
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                sent_at BIGINT,
                last_error TEXT
            )
            """,
            "CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE state = 'pending'",
            "CREATE INDEX mail_outbox_state ON mail_outbox (state, id)",
        ]
    )
}
