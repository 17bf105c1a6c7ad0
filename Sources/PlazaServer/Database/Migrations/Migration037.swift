/// Offline-first clients (step 24): a creating or toggling request sent with an
/// `Idempotency-Key` is done once. `idempotency_keys` keeps, per person and key, a fingerprint of
/// the request (method, path and body: 32 hex digits of SHA-256) and the answer it got, for 24
/// hours (`IdempotencyStore`); `status` is 0 while the first request is still being answered,
/// by the claim `claim` names (a random token: only that request may record or release it).
/// Mastodon's statuses, which kept their keys apart for an hour, use the same store.
enum Migration037 {
    static let migration = Migration(
        version: 37,
        name: "idempotency keys",
        statements: [
            """
            CREATE TABLE idempotency_keys (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                idempotency_key TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                claim TEXT NOT NULL,
                status INTEGER NOT NULL,
                content_type TEXT,
                body TEXT,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, idempotency_key)
            )
            """,
            "CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)",
            "DROP TABLE mastodon_idempotency",
        ])
}
