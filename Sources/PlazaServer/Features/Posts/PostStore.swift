import PlazaAPI
import SQLKit

/// Posts and the feeds made of them. Every read applies the viewer's blocks, so no route can
/// show a post to someone who may not see it.
struct PostStore: Sendable {
    let db: Database
    let ids: IDGenerator

    /// A validated new post.
    struct Draft: Sendable {
        var kind: PostKind
        var title: String?
        var body: String?
        var linkURL: String?
        var location: Location?
        var activity: Activity?
        var price: String?
        /// Uploads to show, in order; claimed by the post.
        var mediaIDs: [Int64] = []
    }

    /// Stores a new post and returns it as its author sees it, without reading it back.
    func create(author: Int64, _ draft: Draft) async throws -> Post {
        let id = ids.next()
        let now = Timestamp.now.milliseconds
        @Sendable func insert(media: [MediaRecord]) -> SQLQueryString {
            """
            INSERT INTO posts (id, author_id, kind, title, body, link_url, latitude, longitude, location_name,
                activity_type, activity_emoji, activity_color, activity_progress, activity_completed_at, price, media, created_at)
            VALUES (\(bind: id), \(bind: author), \(bind: draft.kind.rawValue), \(bind: draft.title), \(bind: draft.body),
                \(bind: draft.linkURL), \(bind: draft.location?.latitude), \(bind: draft.location?.longitude),
                \(bind: draft.location?.name), \(bind: draft.activity?.type), \(bind: draft.activity?.emoji),
                \(bind: draft.activity?.color), \(bind: draft.activity?.progress),
                \(bind: draft.activity?.completedAt?.milliseconds), \(bind: draft.price), \(bind: MediaRecord.text(media)), \(bind: now))
            RETURNING \(Self.authorColumns)
            """
        }
        let (authorRow, media): (Row?, [MediaRecord])
        if draft.mediaIDs.isEmpty {
            // One statement, no transaction: the common case stays cheap.
            (authorRow, media) = (try await db.write(insert(media: [])).first, [])
        } else {
            (authorRow, media) = try await db.write { db in
                let media = try await MediaStore.claim(draft.mediaIDs, owner: author, post: id, on: db)
                return (try await db.first(insert(media: media)), media)
            }
        }
        guard let authorRow else { throw PlazaError.unauthorized }
        return Post(
            id: String(id), kind: draft.kind, author: try UserSummary(authorIn: authorRow, id: author), title: draft.title, body: draft.body,
            spaces: [], media: media.map(\.media), link: draft.linkURL.map { LinkPreview(url: $0) }, location: draft.location,
            activity: draft.activity, price: draft.price, createdAt: Timestamp(milliseconds: now), editedAt: nil,
            counts: Post.Counts(likes: 0, comments: 0), viewer: Post.Viewer(liked: false, saved: false))
    }

    /// One post as `viewer` may see it, or 404.
    func post(id: Int64, viewer: Int64?) async throws -> Post {
        guard let record = try await record(id: id, viewer: viewer) else { throw PlazaError.notFound("Post") }
        return record.post
    }

    func record(id: Int64, viewer: Int64?) async throws -> PostRecord? {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT \(PostRecord.columns(viewer: viewer)) FROM posts p JOIN users u ON u.id = p.author_id
                WHERE p.id = \(bind: id) AND NOT \(PeopleStore.blockedEitherWay(viewer: viewer, column: "p.author_id"))
                """)
        }
        return try row.map(PostRecord.init(row:))
    }

    /// The author's changes; `activity` is the whole new activity value (already merged).
    struct Changes: Sendable {
        var title: FieldUpdate<String> = .keep
        var body: FieldUpdate<String> = .keep
        var location: FieldUpdate<Location> = .keep
        var price: FieldUpdate<String> = .keep
        var activity: Activity?
    }

    func update(id: Int64, _ changes: Changes) async throws {
        var sets: [SQLQueryString] = ["edited_at = \(bind: Timestamp.now.milliseconds)"]
        func set<V: Encodable & Sendable>(_ column: String, _ update: FieldUpdate<V>) {
            switch update {
            case .keep: break
            case .clear: sets.append("\(unsafeRaw: column) = NULL")
            case .set(let value): sets.append("\(unsafeRaw: column) = \(bind: value)")
            }
        }
        set("title", changes.title)
        set("body", changes.body)
        set("price", changes.price)
        switch changes.location {
        case .keep: break
        case .clear: sets.append("latitude = NULL, longitude = NULL, location_name = NULL")
        case .set(let l): sets.append("latitude = \(bind: l.latitude), longitude = \(bind: l.longitude), location_name = \(bind: l.name)")
        }
        if let a = changes.activity {
            sets.append(
                """
                activity_type = \(bind: a.type), activity_emoji = \(bind: a.emoji), activity_color = \(bind: a.color), \
                activity_progress = \(bind: a.progress), activity_completed_at = \(bind: a.completedAt?.milliseconds)
                """)
        }
        let assignments = sets.joined(separator: ", ")
        try await db.write { db in try await db.exec("UPDATE posts SET \(assignments) WHERE id = \(bind: id)") }
    }

    /// Deletes a post with its comments and likes (by foreign-key cascade).
    /// Deletes the author's post with its comments, likes and media rows; returns the ids of the
    /// media whose files should go too.
    func delete(id: Int64, author: Int64) async throws -> [Int64] {
        try await db.write { db in
            guard try await db.first("DELETE FROM posts WHERE id = \(bind: id) AND author_id = \(bind: author) RETURNING id") != nil else { return [] }
            return try await MediaStore.deleteRows(ofPost: id, on: db)
        }
    }

    /// SQL that is true when `post` exists and `viewer` may see it (no block either way).
    static func visible(post: Int64, to viewer: Int64) -> SQLQueryString {
        """
        EXISTS (SELECT 1 FROM posts vp WHERE vp.id = \(bind: post) \
        AND NOT \(PeopleStore.blockedEitherWay(viewer: viewer, column: "vp.author_id")))
        """
    }

    /// The author's summary columns of a row that has `author_id`, for a RETURNING clause.
    static let authorColumns: SQLQueryString = """
        (SELECT username FROM users WHERE users.id = author_id) AS author_username, \
        (SELECT display_name FROM users WHERE users.id = author_id) AS author_display_name, \
        (SELECT avatar FROM users WHERE users.id = author_id) AS author_avatar
        """

    // MARK: feeds

    struct FeedQuery: Sendable {
        enum Source: Sendable {
            case global
            /// Posts by the user and the people they follow.
            case home(Int64)
            case author(Int64)
        }
        var source: Source
        var kind: PostKind?
        var since: Timestamp?
        var until: Timestamp?
        var page: PageRequest
    }

    /// One page of a feed, newest first: a single keyset query.
    func feed(_ query: FeedQuery, viewer: Int64?) async throws -> Page<Post> {
        let sql = Self.feedSQL(query, viewer: viewer)
        let rows = try await db.read { db in try await db.rows(sql) }
        let records = try rows.prefix(query.page.limit).map(PostRecord.init(row:))
        let next = rows.count > query.page.limit ? records.last?.cursor.encoded : nil
        return Page(items: records.map(\.post), nextCursor: next)
    }

    static func feedSQL(_ query: FeedQuery, viewer: Int64?) -> SQLQueryString {
        var sql: SQLQueryString = "SELECT \(PostRecord.columns(viewer: viewer)) FROM posts p JOIN users u ON u.id = p.author_id WHERE "
        switch query.source {
        case .global: sql += "TRUE"
        case .author(let id): sql += "p.author_id = \(bind: id)"
        case .home(let id):
            sql += "p.author_id IN (SELECT followee_id FROM follows WHERE follower_id = \(bind: id) UNION ALL SELECT \(bind: id))"
        }
        if let kind = query.kind { sql += " AND p.kind = \(bind: kind.rawValue)" }
        if let since = query.since { sql += " AND p.created_at >= \(bind: since.milliseconds)" }
        if let until = query.until { sql += " AND p.created_at < \(bind: until.milliseconds)" }
        if let cursor = query.page.cursor { sql += " AND (p.created_at, p.id) < (\(bind: cursor.time), \(bind: cursor.id))" }
        if viewer != nil { sql += " AND NOT \(PeopleStore.blockedEitherWay(viewer: viewer, column: "p.author_id"))" }
        sql += " ORDER BY p.created_at DESC, p.id DESC LIMIT \(bind: query.page.limit + 1)"
        return sql
    }
}
