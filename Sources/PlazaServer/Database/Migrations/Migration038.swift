/// Home timelines fanned out in batches (step 25): a new post waits in `home_pending` until
/// `HomeTimeline.enterPending` enters a whole batch of posts in their followers' timelines at once,
/// follower by follower, so each follower's timeline page is written once per batch rather than
/// once per post. Until then a follower's home feed reads the post from here (`HomeTimeline`).
/// A deleted post leaves with its row.
enum Migration038 {
    static let migration = Migration(
        version: 38,
        name: "home pending",
        statements: [
            """
            CREATE TABLE home_pending (
                post_id BIGINT PRIMARY KEY REFERENCES posts(id) ON DELETE CASCADE,
                author_id BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX home_pending_author ON home_pending (author_id, created_at, post_id)",
        ])
}
