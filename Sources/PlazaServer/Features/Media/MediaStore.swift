import PlazaAPI
import SQLKit

/// The `media` table: uploads, who owns them and what uses them. An upload is claimed once —
/// by a post, as an avatar or as a space's image — and unclaimed uploads are deleted after a day.
struct MediaStore: Sendable {
    let db: Database

    /// Records processed media; a link preview's image is in use from the start and is not
    /// listed among the owner's uploads.
    func create(id: Int64, owner: Int64, _ result: ImagePipeline.Result, linkPreview: Bool) async throws -> MediaRecord {
        let bytes = result.variants.values.reduce(0) { $0 + $1.bytes.count }
        let now = Timestamp.now.milliseconds
        try await db.write(
            """
            INSERT INTO media (id, owner_id, content_type, variant_type, width, height, blurhash, bytes, used_at, link_preview, created_at)
            VALUES (\(bind: id), \(bind: owner), \(bind: result.contentType), \(bind: result.variantType), \(bind: result.width),
                \(bind: result.height), \(bind: result.blurhash), \(bind: bytes), \(bind: linkPreview ? now : nil), \(bind: linkPreview), \(bind: now))
            """)
        return MediaRecord(id: id, contentType: result.contentType, width: result.width, height: result.height, blurhash: result.blurhash)
    }

    /// The caller's uploads, newest first.
    func list(owner: Int64, page: PageRequest) async throws -> Page<Media> {
        let after: SQLQueryString = page.cursor.map { "AND id < \(bind: $0.id)" } ?? ""
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT id, content_type, width, height, blurhash, created_at FROM media
                WHERE owner_id = \(bind: owner) AND NOT link_preview \(after) ORDER BY id DESC LIMIT \(bind: page.limit + 1)
                """)
        }
        let records = try rows.prefix(page.limit).map(MediaRecord.init(row:))
        let next = rows.count > page.limit ? try rows[page.limit - 1].decode(column: "created_at", as: Int64.self) : nil
        return Page(items: records.map(\.media), nextCursor: next.map { Cursor(time: $0, id: records[page.limit - 1].id).encoded })
    }

    /// The content types of an upload's original and of its other variants, to serve them;
    /// nil when there is no such upload.
    func contentTypes(id: Int64) async throws -> (original: String, variants: String)? {
        let row = try await db.read { db in try await db.first("SELECT content_type, variant_type FROM media WHERE id = \(bind: id)") }
        return try row.map { (try $0.decode(column: "content_type", as: String.self), try $0.decode(column: "variant_type", as: String.self)) }
    }

    /// Claims the owner's unused uploads `ids` for `post`, inside the post's transaction, in the
    /// order given; 422 unless every one is the owner's and unused.
    static func claim(_ ids: [Int64], owner: Int64, post: Int64, on db: Connection) async throws -> [MediaRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.rows(
            """
            UPDATE media SET post_id = \(bind: post), used_at = \(bind: Timestamp.now.milliseconds)
            WHERE id IN (\(binds: ids)) AND owner_id = \(bind: owner) AND used_at IS NULL
            RETURNING id, content_type, width, height, blurhash
            """)
        let records = Dictionary(try rows.map { (try $0.decode(column: "id", as: Int64.self), try MediaRecord(row: $0)) }, uniquingKeysWith: { a, _ in a })
        guard records.count == ids.count else {
            throw PlazaError.invalid("mediaIds", "Each media id must name one of your uploads that nothing uses yet.")
        }
        return ids.compactMap { records[$0] }
    }

    /// Deletes the rows of a post's media inside the post's deletion; returns their ids so the
    /// files can go too.
    static func deleteRows(ofPost post: Int64, on db: Connection) async throws -> [Int64] {
        try await db.rows("DELETE FROM media WHERE post_id = \(bind: post) RETURNING id").map { try $0.decode(column: "id", as: Int64.self) }
    }

    /// Makes the upload `mediaID` (or nothing) the user's avatar; returns the ids of media no
    /// longer used (the previous avatar) so their files can go.
    func setAvatar(user: Int64, mediaID: Int64?) async throws -> [Int64] {
        try await db.write { db in
            let current = try await db.first("SELECT avatar FROM users WHERE id = \(bind: user)")?.decode(column: "avatar", as: String?.self)
            let change = try await Self.replaceImage(current, with: mediaID, owner: user, field: "mediaId", on: db)
            if change.changed { try await db.exec("UPDATE users SET avatar = \(bind: change.image?.line) WHERE id = \(bind: user)") }
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
    static func replaceImage(_ current: String?, with mediaID: Int64?, owner: Int64, field: String, on db: Connection) async throws -> ImageChange {
        let previous = MediaRecord.list(current).first
        if let mediaID, mediaID == previous?.id { return ImageChange(image: previous, changed: false, unused: []) }
        var image: MediaRecord?
        if let mediaID {
            guard let row = try await db.first(
                """
                UPDATE media SET used_at = \(bind: Timestamp.now.milliseconds)
                WHERE id = \(bind: mediaID) AND owner_id = \(bind: owner) AND used_at IS NULL
                RETURNING id, content_type, width, height, blurhash
                """)
            else { throw PlazaError.invalid(field, "\(field) must name one of your uploads that nothing uses yet.") }
            image = try MediaRecord(row: row)
        }
        guard let previous else { return ImageChange(image: image, changed: true, unused: []) }
        try await db.exec("DELETE FROM media WHERE id = \(bind: previous.id)")
        return ImageChange(image: image, changed: true, unused: [previous.id])
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
