/// Accounts, sessions, follows, blocks, posts, comments and likes.
/// Times are milliseconds since 1970 (BIGINT) in both dialects; counts are kept on write by triggers.
enum Migration001 {
    static let migration = Migration(
        version: 1,
        name: "core",
        statements: [
            """
            CREATE TABLE users (
                id {id},
                username TEXT NOT NULL,
                username_key TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL,
                email_key TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                display_name TEXT NOT NULL,
                bio TEXT NOT NULL DEFAULT '',
                avatar_media_id BIGINT,
                status_kind TEXT,
                status_text TEXT,
                status_updated_at BIGINT,
                preferences TEXT NOT NULL DEFAULT '{}',
                is_admin BOOLEAN NOT NULL DEFAULT FALSE,
                posts_count BIGINT NOT NULL DEFAULT 0,
                followers_count BIGINT NOT NULL DEFAULT 0,
                following_count BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE sessions (
                id {id},
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                token_hash TEXT NOT NULL UNIQUE,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                user_agent TEXT,
                ip TEXT
            )
            """,
            "CREATE INDEX sessions_user ON sessions (user_id, id)",
            """
            CREATE TABLE follows (
                follower_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                followee_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (follower_id, followee_id)
            ) {without_rowid}
            """,
            "CREATE INDEX follows_followers ON follows (followee_id, created_at, follower_id)",
            "CREATE INDEX follows_following ON follows (follower_id, created_at, followee_id)",
            """
            CREATE TABLE blocks (
                blocker_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                blocked_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (blocker_id, blocked_id)
            ) {without_rowid}
            """,
            "CREATE INDEX blocks_blocked ON blocks (blocked_id, blocker_id)",
            """
            CREATE TABLE posts (
                id {id},
                author_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                title TEXT,
                body TEXT,
                link_url TEXT,
                link_title TEXT,
                link_description TEXT,
                link_image_url TEXT,
                link_site_name TEXT,
                link_fetched_at BIGINT,
                latitude DOUBLE PRECISION,
                longitude DOUBLE PRECISION,
                location_name TEXT,
                activity_type TEXT,
                activity_emoji TEXT,
                activity_color TEXT,
                activity_progress BIGINT,
                activity_completed_at BIGINT,
                price TEXT,
                likes_count BIGINT NOT NULL DEFAULT 0,
                comments_count BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL,
                edited_at BIGINT
            )
            """,
            "CREATE INDEX posts_timeline ON posts (created_at, id)",
            "CREATE INDEX posts_author ON posts (author_id, created_at, id)",
            "CREATE INDEX posts_kind ON posts (kind, created_at, id)",
            """
            CREATE TABLE comments (
                id {id},
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                author_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                body TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX comments_post ON comments (post_id, created_at, id)",
            "CREATE INDEX comments_author ON comments (author_id)",
            """
            CREATE TABLE likes (
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (post_id, user_id)
            ) {without_rowid}
            """,
            "CREATE INDEX likes_post_time ON likes (post_id, created_at, user_id)",
            "CREATE INDEX likes_user ON likes (user_id, post_id)",
        ],
        counters: [
            Counter(table: "posts", key: "author_id", target: "users", column: "posts_count"),
            Counter(table: "follows", key: "follower_id", target: "users", column: "following_count"),
            Counter(table: "follows", key: "followee_id", target: "users", column: "followers_count"),
            Counter(table: "likes", key: "post_id", target: "posts", column: "likes_count"),
            Counter(table: "comments", key: "post_id", target: "posts", column: "comments_count"),
        ]
    )
}
