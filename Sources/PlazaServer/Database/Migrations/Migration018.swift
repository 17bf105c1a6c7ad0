/// Mastodon apps (OAuth 2): the apps registered with `POST /api/v1/apps`, the authorization
/// codes a person's consent gives them, the app-only tokens of `client_credentials`, and the
/// app and scopes of a session an app signed in with (such a session is a token like any other,
/// listed and revocable in settings), and the statuses posted under an `Idempotency-Key`. Secrets, codes and tokens are kept as SHA-256 hashes.
enum Migration018 {
    static let migration = Migration(
        version: 18,
        name: "oauth apps",
        statements: [
            """
            CREATE TABLE oauth_apps (
                id {id},
                client_id TEXT NOT NULL UNIQUE,
                client_secret_hash TEXT NOT NULL,
                name TEXT NOT NULL,
                website TEXT,
                redirect_uris TEXT NOT NULL,
                scopes TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE oauth_codes (
                code_hash TEXT PRIMARY KEY,
                app_id BIGINT NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                redirect_uri TEXT NOT NULL,
                scopes TEXT NOT NULL,
                code_challenge TEXT,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at)",
            """
            CREATE TABLE oauth_app_tokens (
                token_hash TEXT PRIMARY KEY,
                app_id BIGINT NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
                scopes TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX oauth_app_tokens_app ON oauth_app_tokens (app_id)",
            "ALTER TABLE sessions ADD COLUMN app_id BIGINT REFERENCES oauth_apps(id) ON DELETE CASCADE",
            "ALTER TABLE sessions ADD COLUMN scopes TEXT",
            "CREATE INDEX sessions_app ON sessions (app_id) WHERE app_id IS NOT NULL",
            // A Mastodon app's push subscription (`/api/v1/push/subscription`), one per token: its
            // alerts, policy and encoding as JSON (`MastodonPushSettings`); NULL for Plaza's own devices.
            "ALTER TABLE push_devices ADD COLUMN mastodon TEXT",
            // The statuses made under an `Idempotency-Key` in the last hour, so a retried post is made once.
            """
            CREATE TABLE mastodon_idempotency (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                idempotency_key TEXT NOT NULL,
                status_id BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, idempotency_key)
            )
            """,
        ]
    )
}
