/// Spaces and the posts mapped to them, private collections of saved posts and links, the
/// link-preview queue, and the indexes behind the activity heatmap.
enum Migration003 {
    static let migration = Migration(
        version: 3,
        name: "spaces_collections_previews",
        statements: [
            """
            CREATE TABLE spaces (
                id {id},
                slug TEXT NOT NULL,
                slug_key TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                description TEXT NOT NULL DEFAULT '',
                search_key TEXT NOT NULL,
                image TEXT,
                owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                members_count BIGINT NOT NULL DEFAULT 0,
                posts_count BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX spaces_created ON spaces (created_at, id)",
            """
            CREATE TABLE space_members (
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (space_id, user_id)
            ) {without_rowid}
            """,
            "CREATE INDEX space_members_user ON space_members (user_id, created_at, space_id)",
            // `created_at` is the post's, so a space feed is one walk of this index.
            """
            CREATE TABLE post_spaces (
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                space_id BIGINT NOT NULL REFERENCES spaces(id) ON DELETE CASCADE,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (post_id, space_id)
            ) {without_rowid}
            """,
            "CREATE INDEX post_spaces_feed ON post_spaces (space_id, created_at, post_id)",
            """
            CREATE TABLE collections (
                id {id},
                owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                items_count BIGINT NOT NULL DEFAULT 0,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX collections_owner ON collections (owner_id, created_at, id)",
            // `post_id` has no foreign key: a saved post that is deleted leaves its item behind,
            // shown as no longer available.
            """
            CREATE TABLE collection_items (
                id {id},
                collection_id BIGINT NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
                owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id BIGINT,
                url TEXT,
                note TEXT NOT NULL DEFAULT '',
                link_state TEXT,
                link_title TEXT,
                link_description TEXT,
                link_image_url TEXT,
                link_site_name TEXT,
                link_fetched_at BIGINT,
                saved_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX collection_items_list ON collection_items (collection_id, saved_at, id)",
            "CREATE UNIQUE INDEX collection_items_post ON collection_items (collection_id, post_id)",
            "CREATE INDEX collection_items_saved ON collection_items (owner_id, post_id)",
            "CREATE INDEX collection_items_link_pending ON collection_items (url) WHERE link_state = 'pending'",
            // One row per URL: the fetch queue, its retries, and the result shared by every
            // post and saved item that shows the URL.
            """
            CREATE TABLE link_previews (
                url TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                requested_by BIGINT NOT NULL,
                title TEXT,
                description TEXT,
                image_url TEXT,
                site_name TEXT,
                error TEXT,
                fetched_at BIGINT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX link_previews_due ON link_previews (next_attempt_at) WHERE state = 'pending'",
            // A preview's image is media of the person who asked for it, not one of their uploads.
            "ALTER TABLE media ADD COLUMN link_preview BOOLEAN NOT NULL DEFAULT FALSE",
            "CREATE INDEX posts_link_pending ON posts (link_url) WHERE link_url IS NOT NULL AND link_fetched_at IS NULL",
            "CREATE INDEX posts_activity_posted ON posts (author_id, created_at) WHERE kind = 'activity'",
            "CREATE INDEX posts_activity_completed ON posts (author_id, activity_completed_at) WHERE activity_completed_at IS NOT NULL",
        ],
        counters: [
            Counter(table: "space_members", key: "space_id", target: "spaces", column: "members_count"),
            Counter(table: "post_spaces", key: "space_id", target: "spaces", column: "posts_count"),
            Counter(table: "collection_items", key: "collection_id", target: "collections", column: "items_count"),
        ]
    )
}
