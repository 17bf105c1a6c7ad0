/// Hashtags, content warnings and sensitive media (step 22).
///
/// - `tags`: each tag once, by its key (`Hashtag.key`: folded as search folds text), with the
///   form first written, and whether moderators keep it out of trends.
/// - `post_tags`: the tags of each post's title and text, keyed for reading a tag's posts newest
///   first (`/hashtags/{tag}/posts`); `post_tags_post` finds a post's own when it changes or goes.
///   PostgreSQL's `tags_key_order` reads keys in code point order, as SQLite's key does, for
///   the composer's suggestions by prefix.
/// - `tag_follows`: who follows which tag; `tag_follows_tag` finds a new post's readers by tag.
/// - `posts.content_warning` and `posts.sensitive`: the warning shown over a post's text and
///   media, and whether its media is blurred until opened.
/// - Filled from the posts there are, so every tag already written has its page.
enum Migration026 {
    static let migration = Migration(
        version: 26,
        name: "hashtags and content warnings",
        statements: [
            """
            CREATE TABLE tags (
                key TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                trendable BOOLEAN NOT NULL DEFAULT TRUE
            )
            """,
            """
            CREATE TABLE post_tags (
                tag TEXT NOT NULL REFERENCES tags(key),
                created_at BIGINT NOT NULL,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                PRIMARY KEY (tag, created_at, post_id)
            ) {without_rowid}
            """,
            "CREATE INDEX post_tags_post ON post_tags (post_id)",
            """
            CREATE TABLE tag_follows (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                tag TEXT NOT NULL REFERENCES tags(key),
                created_at BIGINT NOT NULL,
                PRIMARY KEY (user_id, tag)
            ) {without_rowid}
            """,
            "CREATE INDEX tag_follows_tag ON tag_follows (tag, user_id)",
            "ALTER TABLE posts ADD COLUMN content_warning TEXT",
            "ALTER TABLE posts ADD COLUMN sensitive BOOLEAN NOT NULL DEFAULT FALSE",
        ],
        postgres: [#"CREATE INDEX tags_key_order ON tags (key COLLATE "C")"#],
        code: { db in try await indexTags(on: db) }
    )

    /// How many posts one step of the indexing reads.
    static let batch = 500

    /// Indexes the tags of the posts written before tags were.
    static func indexTags(on db: Connection) async throws {
        var after = Int64.min
        while true {
            let rows = try await db.rows(
                """
                SELECT id, created_at, title, body FROM posts
                WHERE id > \(bind: after) AND (title LIKE '%#%' OR body LIKE '%#%') ORDER BY id LIMIT \(bind: batch)
                """)
            guard let last = rows.last else { break }
            after = try last.decode(column: "id", as: Int64.self)
            for row in rows {
                let title = try row.decode(column: "title", as: String?.self)
                let body = try row.decode(column: "body", as: String?.self)
                try await TagStore.index(
                    post: try row.decode(column: "id", as: Int64.self),
                    createdAt: try row.decode(column: "created_at", as: Int64.self),
                    tags: Array(Hashtag.tags(in: title, body).prefix(Hashtag.maxPerPost)), on: db)
            }
            if rows.count < batch { break }
        }
    }
}
