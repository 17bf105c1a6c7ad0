/// Account deletion: `users.deletion_due_at` is when an account its owner asked to delete goes
/// for good (until then it is hidden like a suspended one, and signing in again keeps it), and
/// `retired_usernames` keeps the names of deleted accounts from being taken by someone else.
enum Migration019 {
    static let migration = Migration(
        version: 19,
        name: "account deletion",
        statements: [
            "ALTER TABLE users ADD COLUMN deletion_due_at BIGINT",
            "CREATE INDEX users_deletion_due ON users (deletion_due_at) WHERE deletion_due_at IS NOT NULL",
            "CREATE TABLE retired_usernames (username_key TEXT PRIMARY KEY, retired_at BIGINT NOT NULL)",
        ]
    )
}
