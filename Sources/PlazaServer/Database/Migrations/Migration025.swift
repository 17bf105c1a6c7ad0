/// The instance's moderators (`users.is_moderator`): they handle every report, suspend members
/// and read the audit log, as admins do, but change none of the instance's settings, sign-ups,
/// invites or roles. Set by admins (`PUT /admin/users/{username}/role`, `plaza user role`).
enum Migration025 {
    static let migration = Migration(
        version: 25,
        name: "instance moderators",
        statements: ["ALTER TABLE users ADD COLUMN is_moderator BOOLEAN NOT NULL DEFAULT FALSE"])
}
