/// A person's own lists, newest first (step 23, Mastodon's `favourites`, `blocks` and `mutes`):
/// the likes, blocks and mutes of one person walked by time, as follows already are.
enum Migration036 {
    static let migration = Migration(
        version: 36,
        name: "personal lists",
        statements: [
            "CREATE INDEX likes_user_time ON likes (user_id, created_at, post_id)",
            "CREATE INDEX blocks_blocker_time ON blocks (blocker_id, created_at, blocked_id)",
            "CREATE INDEX mutes_muter_time ON mutes (muter_id, created_at, muted_id)",
        ])
}
