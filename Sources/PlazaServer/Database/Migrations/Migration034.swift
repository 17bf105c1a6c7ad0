/// A Mastodon app's push carries the token that subscribed (`access_token`), so that tapping the
/// push opens the notification: `push_devices.app_token` keeps it sealed (`AppPushTokens`),
/// bound to its row. It goes with the row, and the row with the session (`ON DELETE CASCADE`):
/// a revoked token's subscription and sealed copy are gone together.
enum Migration034 {
    static let migration = Migration(
        version: 34,
        name: "mastodon_push_token",
        statements: [
            "ALTER TABLE push_devices ADD COLUMN app_token TEXT"
        ])
}
