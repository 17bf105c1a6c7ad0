import PlazaAPI

/// The `media` table: uploads, who owns them and what uses them. An upload is claimed once —
/// by a post, as an avatar or as a space's image — and unclaimed uploads are deleted after a day.
package struct MediaStore: Sendable {
    let db: Database

    /// Records processed media with a new access key; a link preview's image is in use from the
    /// start and is not listed among the owner's uploads. A video (`video`: its probe and the
    /// size of its upload, kept until transcoded) is recorded `processing`, with its poster as
    /// the variants. 413 `storage_quota_exceeded` when the owner's media would pass `quota`
    /// bytes (0: no quota). Uploads in flight at the same time may each pass the check, so the
    /// quota can be exceeded by those.
    func create(
        id: Int64, owner: Int64, _ result: ImagePipeline.Result, linkPreview: Bool, description: String? = nil,
        quota: Int64, video: (probe: VideoProbe, sourceBytes: Int)? = nil
    ) async throws -> MediaRecord {
        var record = MediaRecord(
            id: id, contentType: result.contentType, width: result.width, height: result.height,
            blurhash: result.blurhash, key: MediaRecord.newKey(), description: description)
        var bytes = result.variants.values.reduce(0) { $0 + $1.bytes.count }
        if let video {
            let size = video.probe.outputSize
            record.contentType = VideoPipeline.contentType
            (record.width, record.height) = (size.width, size.height)
            record.state = .processing
            record.durationMillis = video.probe.durationMillis
            record.progress = 0
            bytes += video.sourceBytes - (result.variants[.original]?.bytes.count ?? 0)
        }
        let now = Timestamp.now.milliseconds
        let withinQuota: SQL = quota > 0 ? "media_bytes + \(bind: bytes) <= \(bind: quota)" : "TRUE"
        let rows = try await db.write(
            """
            INSERT INTO media (id, owner_id, content_type, variant_type, width, height, blurhash, bytes, used_at, link_preview, access_key, created_at,
                state, duration_ms, progress, description)
            SELECT \(bind: id), id, \(bind: record.contentType), \(bind: result.variantType), \(bind: record.width),
                \(bind: record.height), \(bind: result.blurhash), \(bind: bytes), \(bind: linkPreview ? now : nil), \(bind: linkPreview), \(bind: record.key), \(bind: now),
                \(bind: record.state.rawValue), \(bind: record.durationMillis), \(bind: record.progress),
                \(bind: description)
            FROM users WHERE id = \(bind: owner) AND \(withinQuota)
            RETURNING id
            """)
        guard !rows.isEmpty else { throw Quotas.storageExceeded }
        return record
    }

    /// One of the owner's uploads, with its processing state, or 404.
    package func upload(id: Int64, owner: Int64) async throws -> Media {
        let row = try await db.read { db in
            try await db.first(
                "SELECT \(MediaRecord.columns) FROM media WHERE id = \(bind: id) AND owner_id = \(bind: owner) AND NOT link_preview"
            )
        }
        guard let row else { throw PlazaError.notFound("Media") }
        return try MediaRecord(row: row).media
    }

    /// Sets the alt text of one of the owner's uploads (not a link preview's image) and of the
    /// line of the post that shows it; 404 when it is not theirs. The house's lock order (the
    /// post, then the media row), so it waits behind a post's edit or deletion rather than
    /// crossing it; a post claiming the upload meanwhile is seen on the next try. An avatar's or a
    /// space image's copy keeps the text it had when it was set: pages show those as decoration.
    func describe(id: Int64, owner: Int64, as description: String?) async throws -> MediaRecord {
        for _ in 0..<3 {
            let done = try await db.write { db -> MediaRecord?? in
                guard
                    let current = try await db.first(
                        "SELECT post_id FROM media WHERE id = \(bind: id) AND owner_id = \(bind: owner) AND NOT link_preview"
                    )
                else { return .some(nil) }
                let postID = try current.decode(column: "post_id", as: Int64?.self)
                var lines: String?
                if let postID {
                    let lock = db.dialect.rowLock(.noKeyUpdate) ?? ""
                    lines = try await db.first("SELECT media FROM posts WHERE id = \(bind: postID)\(lock)")?.decode(
                        column: "media", as: String?.self)
                }
                let samePost: SQL = postID.map { "post_id = \(bind: $0)" } ?? "post_id IS NULL"
                guard
                    let row = try await db.first(
                        """
                        UPDATE media SET description = \(bind: description)
                        WHERE id = \(bind: id) AND owner_id = \(bind: owner) AND \(samePost)
                        RETURNING \(MediaRecord.columns)
                        """)
                else { return nil }
                let record = try MediaRecord(row: row)
                if let postID, let lines {
                    let media = MediaRecord.list(lines).map { line in
                        var line = line
                        if line.id == id { line.description = record.description }
                        return line
                    }
                    try await db.exec(
                        "UPDATE posts SET media = \(bind: MediaRecord.text(media)) WHERE id = \(bind: postID)")
                }
                return .some(record)
            }
            if let done {
                guard let done else { throw PlazaError.notFound("Media") }
                return done
            }
        }
        throw PlazaError(.conflict, "media_busy", "The upload's post kept changing while its alt text was being set.")
    }

    /// 413 `storage_quota_exceeded` when the owner's media already fill `quota` bytes (0: no
    /// quota), so a full account is refused before its upload is received and processed.
    func checkRoom(owner: Int64, quota: Int64) async throws {
        guard quota > 0 else { return }
        let used = try await db.read { db in
            try await db.first("SELECT media_bytes FROM users WHERE id = \(bind: owner)")
        }
        if let used, try used.decode(column: "media_bytes", as: Int64.self) >= quota { throw Quotas.storageExceeded }
    }

    /// Counts an upload against the owner's daily cap (429 `daily_upload_limit` past it).
    func chargeUpload(owner: Int64, cap: Int) async throws {
        guard cap > 0 else { return }
        try await db.write { db in try await DailyUsage.charge(.upload, user: owner, cap: cap, on: db) }
    }

    /// The caller's uploads, newest first.
    func list(owner: Int64, page: PageRequest) async throws -> Page<Media> {
        let after: SQL = page.cursor.map { "AND id < \(bind: $0.id)" } ?? ""
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT \(MediaRecord.columns) FROM media
                WHERE owner_id = \(bind: owner) AND NOT link_preview \(after) ORDER BY id DESC LIMIT \(bind: page.fetchLimit)
                """)
        }
        // Ids are time-ordered, so the page is sorted by id alone, and its cursor is the id.
        let (pageRows, next) = try page.split(rows) { Cursor(time: 0, id: try $0.decode(column: "id", as: Int64.self)) }
        return Page(items: try pageRows.map { try MediaRecord(row: $0).media }, nextCursor: next)
    }

    /// What serving one media file needs to know.
    struct Served: Sendable {
        var originalType: String
        var variantType: String
        /// False for an upload nothing uses yet (only its owner may see it) and for the media of
        /// a post for followers or members: no shared cache may keep them.
        var isPublic: Bool
    }

    /// Media `id` with access key `key` as `viewer` may see it, or nil (a 404): an upload that
    /// nothing uses yet is its owner's alone; a post's media are seen by whoever may see the
    /// post (`Visibility.post`, the rule every post read applies); avatars, space images and
    /// link-preview images by anyone who has the URL.
    func served(id: Int64, key: String, viewer: Int64?) async throws -> Served? {
        let row = try await db.read { db in try await db.first(Self.servedSQL(id: id, key: key, viewer: viewer)) }
        return try row.map {
            Served(
                originalType: try $0.decode(column: "content_type", as: String.self),
                variantType: try $0.decode(column: "variant_type", as: String.self),
                isPublic: try $0.decode(column: "used_at", as: Int64?.self) != nil
                    && (try $0.decode(column: "post_audience", as: String?.self) ?? "public") == "public")
        }
    }

    static func servedSQL(id: Int64, key: String, viewer: Int64?) -> SQL {
        let owner: SQL = viewer.map { "m.owner_id = \(bind: $0)" } ?? "FALSE"
        return """
            SELECT m.content_type, m.variant_type, m.used_at,
                (SELECT pa.audience FROM posts pa WHERE pa.id = m.post_id) AS post_audience FROM media m
            WHERE m.id = \(bind: id) AND m.access_key = \(bind: key)
            AND (m.used_at IS NOT NULL OR \(owner))
            AND (m.post_id IS NULL OR EXISTS (SELECT 1 FROM posts p WHERE p.id = m.post_id AND \(Visibility.post("p", readableBy: viewer))))
            """
    }

    /// Claims the owner's unused uploads `ids` for `post`, inside the post's transaction, in the
    /// order given; 422 unless every one is the owner's and unused.
    static func claim(_ ids: [Int64], owner: Int64, post: Int64, on db: Connection) async throws -> [MediaRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.rows(
            """
            UPDATE media SET post_id = \(bind: post), used_at = \(bind: Timestamp.now.milliseconds)
            WHERE id IN (\(binds: ids)) AND owner_id = \(bind: owner) AND used_at IS NULL AND state <> 'failed'
            RETURNING \(MediaRecord.columns)
            """)
        let records = Dictionary(
            try rows.map { (try $0.decode(column: "id", as: Int64.self), try MediaRecord(row: $0)) },
            uniquingKeysWith: { a, _ in a })
        guard records.count == ids.count else {
            throw PlazaError.invalid(
                "mediaIds",
                "Each media id must name one of your uploads that nothing uses yet (and, for a video, that could be processed)."
            )
        }
        return ids.compactMap { records[$0] }
    }

    /// Deletes the rows of a post's media inside the post's deletion; returns their ids so the
    /// files can go too.
    static func deleteRows(ofPost post: Int64, on db: Connection) async throws -> [Int64] {
        try await db.rows("DELETE FROM media WHERE post_id = \(bind: post) RETURNING id").map {
            try $0.decode(column: "id", as: Int64.self)
        }
    }

    /// Makes the upload `mediaID` (or nothing) the user's avatar; returns the ids of media no
    /// longer used (the previous avatar) so their files can go.
    func setAvatar(user: Int64, mediaID: Int64?) async throws -> [Int64] {
        try await db.write { db in
            let current = try await db.first("SELECT avatar FROM users WHERE id = \(bind: user)")?.decode(
                column: "avatar", as: String?.self)
            let change = try await Self.replaceImage(current, with: mediaID, owner: user, field: "mediaId", on: db)
            if change.changed {
                try await db.exec("UPDATE users SET avatar = \(bind: change.image?.line) WHERE id = \(bind: user)")
            }
            return change.unused
        }
    }

    /// The outcome of replacing a single image (an avatar, a space's image).
    struct ImageChange: Sendable {
        /// The image to show now.
        var image: MediaRecord?
        /// False when `mediaID` was already the image.
        var changed: Bool
        /// Media rows deleted (the previous image), whose files should go too.
        var unused: [Int64]
    }

    /// Claims the owner's unused upload `mediaID` (or nothing) in place of the image stored as
    /// `current` (a descriptor line), inside the caller's transaction; 422 on `field` when the
    /// upload is not the owner's or is already used.
    static func replaceImage(_ current: String?, with mediaID: Int64?, owner: Int64, field: String, on db: Connection)
        async throws -> ImageChange
    {
        let previous = MediaRecord.list(current).first
        if let mediaID, mediaID == previous?.id { return ImageChange(image: previous, changed: false, unused: []) }
        var image: MediaRecord?
        if let mediaID {
            guard
                let row = try await db.first(
                    """
                    UPDATE media SET used_at = \(bind: Timestamp.now.milliseconds)
                    WHERE id = \(bind: mediaID) AND owner_id = \(bind: owner) AND used_at IS NULL
                        AND content_type LIKE 'image/%'
                    RETURNING \(MediaRecord.columns)
                    """)
            else {
                throw PlazaError.invalid(field, "\(field) must name one of your photo uploads that nothing uses yet.")
            }
            image = try MediaRecord(row: row)
        }
        guard let previous else { return ImageChange(image: image, changed: true, unused: []) }
        try await db.exec("DELETE FROM media WHERE id = \(bind: previous.id)")
        return ImageChange(image: image, changed: true, unused: [previous.id])
    }

    /// A link-preview image younger than this is never released: between its processing and
    /// the preview's `finish`, nothing refers to it yet.
    static let previewImageGrace: Int64 = 3_600_000

    /// Deletes up to `cleanupBatch` link-preview images that nothing shows: no post or saved item
    /// copied their URL, and no preview fresh enough to be copied onto new ones (within its
    /// reuse time, plus a margin for clocks and transactions in flight) names them. Returns
    /// their ids so the files can go too; their bytes leave the owner's storage.
    func releaseUnusedPreviewImages(now: Int64) async throws -> [Int64] {
        try await db.write { db in
            try await db.rows(Self.releaseSQL(now: now)).map { try $0.decode(column: "id", as: Int64.self) }
        }
    }

    static func releaseSQL(now: Int64) -> SQL {
        let url: SQL = "'/media/' || m.id || '/medium?k=' || m.access_key"
        return """
            DELETE FROM media WHERE id IN (
                SELECT m.id FROM media m
                WHERE m.link_preview AND m.created_at < \(bind: now - previewImageGrace) AND m.access_key IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.link_image_url = \(url))
                AND NOT EXISTS (SELECT 1 FROM collection_items i WHERE i.link_image_url = \(url))
                AND NOT EXISTS (SELECT 1 FROM link_previews lp WHERE lp.image_url = \(url)
                    AND lp.fetched_at >= \(bind: now - LinkPreviewStore.readyReuseMillis - previewImageGrace))
                ORDER BY m.id LIMIT \(bind: cleanupBatch))
            RETURNING id
            """
    }

    /// How many unused uploads one clean-up statement deletes.
    static let cleanupBatch = 500

    /// Deletes up to `cleanupBatch` uploads made before `cutoff` (ms) that nothing uses; returns
    /// their ids.
    func deleteUnused(createdBefore cutoff: Int64) async throws -> [Int64] {
        try await db.write { db in
            try await db.rows(
                """
                DELETE FROM media WHERE id IN (
                    SELECT id FROM media WHERE used_at IS NULL AND created_at < \(bind: cutoff) ORDER BY created_at LIMIT \(bind: Self.cleanupBatch))
                RETURNING id
                """
            ).map { try $0.decode(column: "id", as: Int64.self) }
        }
    }
}
