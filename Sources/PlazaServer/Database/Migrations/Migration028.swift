/// Boosts (step 22): sharing a public post with one's followers.
///
/// - `boosts`: who boosted which post when, each once (`boosts_person`); `id` is a time-ordered
///   id like a post's, which Mastodon apps page by (a boost is a status of its own there).
///   `boosts_post` lists a post's boosters newest first. `posts.boosts_count` is kept by triggers.
/// - `home_entries.boosted_by`: an entry a boost made, at the boost's time; the post's own entries
///   have none. The post comes into each follower's timeline once, however many boost it.
enum Migration028 {
    static let migration = Migration(
        version: 28,
        name: "boosts",
        statements: [
            """
            CREATE TABLE boosts (
                id BIGINT PRIMARY KEY,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE UNIQUE INDEX boosts_person ON boosts (user_id, post_id)",
            "CREATE INDEX boosts_post ON boosts (post_id, created_at, user_id)",
            "ALTER TABLE posts ADD COLUMN boosts_count BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE home_entries ADD COLUMN boosted_by BIGINT",
        ],
        counters: [Counter(table: "boosts", key: "post_id", target: "posts", column: "boosts_count")])
}
