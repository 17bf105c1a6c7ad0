/// Home timelines filled on write (`HomeTimeline`).
///
/// - `home_entries`: the posts of each person's home feed that come from the people they follow
///   and from themselves, keyed for reading a page newest first. No foreign key on `post_id`:
///   deleting a post takes its entries out itself (through the author's followers), which a
///   cascade could only do by reading an index on `post_id` that every fan-out would pay for.
/// - `users.home_pulled` and `follows.pulled`: an account with many followers is read when a
///   follower's feed is, not entered in each timeline; `follows_pulled` finds a person's pulled
///   follows without reading all of their follows, `follows_fanout` an author's other followers.
/// - Filled from the follows and posts there are, so every feed shows what it showed before.
enum Migration009 {
    static let migration = Migration(
        version: 9,
        name: "home_timelines",
        statements: [
            """
            CREATE TABLE home_entries (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                post_id BIGINT NOT NULL,
                PRIMARY KEY (user_id, created_at, post_id)
            ) {without_rowid}
            """,
            "ALTER TABLE users ADD COLUMN home_pulled BOOLEAN NOT NULL DEFAULT FALSE",
            "ALTER TABLE follows ADD COLUMN pulled BOOLEAN NOT NULL DEFAULT FALSE",
            "CREATE INDEX follows_pulled ON follows (follower_id, followee_id) WHERE pulled",
            // A new post's fan-out reads only this: the followers it is entered for.
            "CREATE INDEX follows_fanout ON follows (followee_id, follower_id) WHERE NOT pulled",
            """
            INSERT INTO home_entries (user_id, created_at, post_id)
            SELECT f.follower_id, p.created_at, p.id FROM follows f JOIN posts p ON p.author_id = f.followee_id
            UNION SELECT author_id, created_at, id FROM posts
            """,
        ]
    )
}
