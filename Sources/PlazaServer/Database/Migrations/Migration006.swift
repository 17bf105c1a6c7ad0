/// Limits shared by app servers, and the server's own keys.
///
/// `server_keys` holds secrets the server makes for itself on first use (the key that signs
/// device tokens), so every app server on one database signs alike. On PostgreSQL,
/// `rate_buckets` and `login_throttle` hold the rate limiter's buckets and the sign-in
/// throttle's entries for all servers (`PostgresLimitStore`); they are UNLOGGED, since losing
/// them in a crash only forgets recent limits. SQLite keeps those in memory.
enum Migration006 {
    static let migration = Migration(
        version: 6,
        name: "shared_limits",
        statements: [
            "CREATE TABLE server_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL, created_at BIGINT NOT NULL)"
        ],
        postgres: [
            """
            CREATE UNLOGGED TABLE rate_buckets (
                name TEXT PRIMARY KEY,
                tokens DOUBLE PRECISION NOT NULL,
                updated_at BIGINT NOT NULL,
                allowed BOOLEAN NOT NULL
            )
            """,
            "CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at)",
            """
            CREATE UNLOGGED TABLE login_throttle (
                name TEXT PRIMARY KEY,
                failures BIGINT NOT NULL,
                window_start BIGINT NOT NULL,
                locked_until BIGINT NOT NULL,
                budget BIGINT NOT NULL
            )
            """,
            "CREATE INDEX login_throttle_window ON login_throttle (window_start)",
        ]
    )
}
