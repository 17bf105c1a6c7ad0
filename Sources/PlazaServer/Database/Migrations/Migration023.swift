/// Running an instance: its settings as admins set them (`instance_settings`, a row a setting:
/// name, description, rules, contact, terms, registration mode; a setting without a row has its
/// default from the environment), invite links, and sign-ups waiting for approval
/// (`users.pending_since`, with `suspended_at` set too, so that every query that hides suspended
/// people hides them, and they cannot sign in, until an admin approves), and who stores the most
/// media, for the admins' overview.
enum Migration023 {
    static let migration = Migration(
        version: 23,
        name: "registrations and instance settings",
        statements: [
            "CREATE TABLE instance_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "ALTER TABLE users ADD COLUMN pending_since BIGINT",
            "ALTER TABLE users ADD COLUMN sign_up_reason TEXT",
            "CREATE INDEX users_pending ON users (pending_since, id) WHERE pending_since IS NOT NULL",
            // The admins' overview: who stores the most.
            "CREATE INDEX users_media_bytes ON users (media_bytes DESC, id) WHERE media_bytes > 0",
            """
            CREATE TABLE invites (
                id BIGINT PRIMARY KEY, code TEXT NOT NULL UNIQUE,
                created_by BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                max_uses BIGINT, uses BIGINT NOT NULL DEFAULT 0, expires_at BIGINT, created_at BIGINT NOT NULL)
            """,
        ])
}
