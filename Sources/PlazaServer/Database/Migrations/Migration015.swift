/// Video: media processed in the background, and posts that wait for them.
///
/// - `media.state`: `ready`, `processing` (a video whose poster is stored and whose upload, kept
///   as the file `<id>/source`, waits to be transcoded) or `failed` (`failure` says why);
///   `progress` (percent) while processing; `duration_ms` for a video. A worker claims a
///   processing video by setting `lease_until`; `attempts` counts the claims, so a video that
///   keeps killing its worker is given up. `media_processing` is the workers' queue.
/// - `posts.processing`: true while one of the post's videos is not ready; only its author sees
///   it then. The mentions' notifications and the event that publishes it wait until it is ready.
/// - `users.media_bytes` follows a change of `media.bytes` too (a video's upload is replaced by
///   its transcoded file), by triggers as for inserts and deletes.
enum Migration015 {
    static let migration = Migration(
        version: 15,
        name: "video",
        statements: [
            "ALTER TABLE media ADD COLUMN state TEXT NOT NULL DEFAULT 'ready'",
            "ALTER TABLE media ADD COLUMN duration_ms BIGINT",
            "ALTER TABLE media ADD COLUMN progress INTEGER",
            "ALTER TABLE media ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE media ADD COLUMN lease_until BIGINT",
            "ALTER TABLE media ADD COLUMN failure TEXT",
            "CREATE INDEX media_processing ON media (created_at) WHERE state = 'processing'",
            "ALTER TABLE posts ADD COLUMN processing BOOLEAN NOT NULL DEFAULT FALSE",
        ],
        sqlite: [
            """
            CREATE TRIGGER media_bytes_update AFTER UPDATE OF bytes ON media BEGIN
                UPDATE users SET media_bytes = media_bytes - OLD.bytes + NEW.bytes WHERE id = NEW.owner_id; END
            """
        ],
        postgres: [
            """
            CREATE FUNCTION media_bytes_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE users SET media_bytes = media_bytes - OLD.bytes + NEW.bytes WHERE id = NEW.owner_id;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER media_bytes_update AFTER UPDATE OF bytes ON media FOR EACH ROW
                WHEN (OLD.bytes IS DISTINCT FROM NEW.bytes) EXECUTE FUNCTION media_bytes_update()
            """,
        ]
    )
}
