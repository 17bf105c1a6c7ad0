/// Boosts reach home timelines in batches (step 25), as new posts do (`Migration038`): a boost,
/// or the undoing of a boost already entered, waits in `boost_pending` until
/// `HomeTimeline.enterPendingBoosts` enters (or takes out) a whole batch at once, follower by
/// follower. Until then a follower's home feed reads a waiting boost from here. The queue row
/// of a boost undone before it was entered goes with the boost; every row goes with its post or
/// its booster.
///
/// `follows_fanout` gains `pulled`, so that the fan-out's walk of an account's followers
/// (`f.followee_id = ? AND NOT f.pulled`) reads the index alone: SQLite (3.54) does not take a
/// partial index's own condition as answered by it, and read each follow's row for `pulled`.
enum Migration039 {
    static let migration = Migration(
        version: 39,
        name: "boost pending",
        statements: [
            """
            CREATE TABLE boost_pending (
                boost_id BIGINT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                undo BOOLEAN NOT NULL
            )
            """,
            "CREATE INDEX boost_pending_booster ON boost_pending (user_id, created_at, post_id)",
            "CREATE INDEX boost_pending_post ON boost_pending (post_id)",
            "DROP INDEX follows_fanout",
            "CREATE INDEX follows_fanout ON follows (followee_id, follower_id, pulled) WHERE NOT pulled",
        ])
}
