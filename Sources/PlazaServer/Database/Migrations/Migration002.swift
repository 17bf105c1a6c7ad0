/// Uploaded media, and the media a post or an avatar shows, copied onto the row that shows it
/// (media never changes once processed), so a feed page stays one query.
enum Migration002 {
    static let migration = Migration(
        version: 2,
        name: "media",
        statements: [
            """
            CREATE TABLE media (
                id {id},
                owner_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                content_type TEXT NOT NULL,
                variant_type TEXT NOT NULL,
                width BIGINT NOT NULL,
                height BIGINT NOT NULL,
                blurhash TEXT,
                bytes BIGINT NOT NULL,
                post_id BIGINT,
                used_at BIGINT,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX media_owner ON media (owner_id, id)",
            "CREATE INDEX media_post ON media (post_id)",
            "CREATE INDEX media_unused ON media (created_at) WHERE used_at IS NULL",
            "ALTER TABLE posts ADD COLUMN media TEXT",
            "ALTER TABLE users ADD COLUMN avatar TEXT",
            "ALTER TABLE users DROP COLUMN avatar_media_id",
        ]
    )
}
