/// Media and saves against hostile users.
///
/// - `media.access_key`: a random key that every media URL carries (`?k=`), so media cannot be
///   found by walking time-ordered ids. Existing media get one here, and the copies of their
///   descriptors on posts, avatars and space images, and link previews' image URLs, are
///   rewritten to carry it.
/// - `users.media_bytes`: the bytes of a person's media, kept by triggers (every path,
///   cascades too), for the storage quota.
/// - `daily_usage`: per person and UTC day, how many uploads and link-preview fetches they
///   asked for, for the daily caps.
/// - Deleting a post deletes the saved items that point to it (a trigger, so cascades do
///   too); items left behind by earlier deletions go now.
/// - Indexes for releasing link-preview images that nothing shows any more.
enum Migration007 {
    static let migration = Migration(
        version: 7,
        name: "media_keys_quotas",
        statements: [
            "ALTER TABLE media ADD COLUMN access_key TEXT",
            "ALTER TABLE users ADD COLUMN media_bytes BIGINT NOT NULL DEFAULT 0",
            "UPDATE users SET media_bytes = COALESCE((SELECT SUM(m.bytes) FROM media m WHERE m.owner_id = users.id), 0)",
            """
            CREATE TABLE daily_usage (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                day BIGINT NOT NULL,
                count BIGINT NOT NULL,
                PRIMARY KEY (user_id, kind, day)
            ) {without_rowid}
            """,
            "CREATE INDEX daily_usage_day ON daily_usage (day)",
            "DELETE FROM collection_items WHERE post_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM posts WHERE posts.id = collection_items.post_id)",
            "CREATE INDEX collection_items_post_id ON collection_items (post_id) WHERE post_id IS NOT NULL",
            "CREATE INDEX posts_link_image ON posts (link_image_url) WHERE link_image_url IS NOT NULL",
            "CREATE INDEX collection_items_link_image ON collection_items (link_image_url) WHERE link_image_url IS NOT NULL",
            "CREATE INDEX link_previews_image ON link_previews (image_url) WHERE image_url IS NOT NULL",
            "CREATE INDEX media_link_previews ON media (id) WHERE link_preview",
        ],
        sqlite: [
            // 128 bits from SQLite's CSPRNG, in hex (new media get base64url; keys are opaque).
            "UPDATE media SET access_key = lower(hex(randomblob(16)))",
            "CREATE TRIGGER media_bytes_insert AFTER INSERT ON media BEGIN UPDATE users SET media_bytes = media_bytes + NEW.bytes WHERE id = NEW.owner_id; END",
            "CREATE TRIGGER media_bytes_delete AFTER DELETE ON media BEGIN UPDATE users SET media_bytes = media_bytes - OLD.bytes WHERE id = OLD.owner_id; END",
            "CREATE TRIGGER posts_delete_saves AFTER DELETE ON posts BEGIN DELETE FROM collection_items WHERE post_id = OLD.id; END",
        ],
        postgres: [
            // Two version-4 UUIDs (gen_random_uuid is built in from PostgreSQL 13): 244 random bits, in hex.
            "UPDATE media SET access_key = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '')",
            """
            CREATE FUNCTION media_bytes() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    UPDATE users SET media_bytes = media_bytes + NEW.bytes WHERE id = NEW.owner_id;
                ELSE
                    UPDATE users SET media_bytes = media_bytes - OLD.bytes WHERE id = OLD.owner_id;
                END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER media_bytes AFTER INSERT OR DELETE ON media FOR EACH ROW EXECUTE FUNCTION media_bytes()",
            """
            CREATE FUNCTION posts_delete_saves() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM collection_items WHERE post_id = OLD.id;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER posts_delete_saves AFTER DELETE ON posts FOR EACH ROW EXECUTE FUNCTION posts_delete_saves()",
        ],
        code: { db in try await addKeysToCopies(on: db) }
    )

    /// How many rows one step of the rewrite reads.
    static let batch = 500

    /// Rewrites the media descriptors copied onto posts, avatars and space images, and the image
    /// URLs of link previews, so that they carry their media's new key.
    static func addKeysToCopies(on db: Connection) async throws {
        for (table, column) in [("posts", "media"), ("users", "avatar"), ("spaces", "image")] {
            var after: Int64 = Int64.min
            while true {
                let rows = try await db.rows(
                    """
                    SELECT id, \(unsafeRaw: column) AS text FROM \(unsafeRaw: table)
                    WHERE \(unsafeRaw: column) IS NOT NULL AND id > \(bind: after) ORDER BY id LIMIT \(bind: batch)
                    """)
                guard let last = rows.last else { break }
                after = try last.decode(column: "id", as: Int64.self)
                let copies = try rows.map {
                    (
                        try $0.decode(column: "id", as: Int64.self),
                        MediaRecord.list(try $0.decode(column: "text", as: String?.self))
                    )
                }
                let keys = try await accessKeys(of: copies.flatMap { $0.1.map(\.id) }, on: db)
                for (id, records) in copies {
                    let keyed = records.map { record in
                        var record = record
                        record.key = keys[record.id]
                        return record
                    }
                    try await db.exec(
                        "UPDATE \(unsafeRaw: table) SET \(unsafeRaw: column) = \(bind: MediaRecord.text(keyed)) WHERE id = \(bind: id)"
                    )
                }
                if rows.count < batch { break }
            }
        }
        // Link previews' images: each URL is shared by the preview and the posts and items that copied it.
        var urls = Set<String>()
        for (table, column) in [
            ("link_previews", "image_url"), ("posts", "link_image_url"), ("collection_items", "link_image_url"),
        ] {
            for row in try await db.rows(
                "SELECT DISTINCT \(unsafeRaw: column) AS url FROM \(unsafeRaw: table) WHERE \(unsafeRaw: column) LIKE '/media/%'"
            ) {
                urls.insert(try row.decode(column: "url", as: String.self))
            }
        }
        let parsed = urls.compactMap { url -> (String, Int64, String)? in
            let parts = url.split(separator: "/")
            guard parts.count == 3, let id = Int64(parts[1]), !parts[2].contains("?") else { return nil }
            return (url, id, String(parts[2]))
        }
        let keys = try await accessKeys(of: parsed.map(\.1), on: db)
        for (url, id, variant) in parsed {
            guard let key = keys[id] else { continue }
            let keyed = MediaRecord.url(id: id, variant: variant, key: key)
            for (table, column) in [
                ("link_previews", "image_url"), ("posts", "link_image_url"), ("collection_items", "link_image_url"),
            ] {
                try await db.exec(
                    "UPDATE \(unsafeRaw: table) SET \(unsafeRaw: column) = \(bind: keyed) WHERE \(unsafeRaw: column) = \(bind: url)"
                )
            }
        }
    }

    private static func accessKeys(of ids: [Int64], on db: Connection) async throws -> [Int64: String] {
        var keys: [Int64: String] = [:]
        let unique = Array(Set(ids))
        for start in stride(from: 0, to: unique.count, by: batch) {
            let chunk = Array(unique[start..<min(start + batch, unique.count)])
            for row in try await db.rows("SELECT id, access_key FROM media WHERE id IN (\(binds: chunk))") {
                keys[try row.decode(column: "id", as: Int64.self)] = try row.decode(
                    column: "access_key", as: String?.self)
            }
        }
        return keys
    }
}
