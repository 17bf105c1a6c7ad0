import Foundation
import PlazaAPI

/// Private collections of saved posts and links. Every query is keyed by the owner, so no
/// route can show one person's collections to another.
struct CollectionStore: Sendable {
    let db: Database
    let ids: IDGenerator
    /// New link previews one person may ask for a day (0: no cap).
    var linkPreviewsPerDay = Quotas().linkPreviewsPerDay

    static let columns: SQL = "c.id, c.name, c.items_count, c.created_at"

    static func collection(row: Row) throws -> SavedCollection {
        SavedCollection(
            id: String(try row.decode(column: "id", as: Int64.self)),
            name: try row.decode(column: "name", as: String.self),
            counts: .init(items: try row.decode(column: "items_count", as: Int.self)),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    static let notFound = PlazaError.notFound("Collection")

    func create(owner: Int64, name: String) async throws -> SavedCollection {
        let id = ids.next()
        let now = Timestamp.now.milliseconds
        try await db.write(
            "INSERT INTO collections (id, owner_id, name, created_at) VALUES (\(bind: id), \(bind: owner), \(bind: name), \(bind: now))"
        )
        return SavedCollection(
            id: String(id), name: name, counts: .init(items: 0), createdAt: Timestamp(milliseconds: now))
    }

    /// The owner's (first) collection called `name`, made when missing if `creating`. The owner's
    /// row is locked first (PostgreSQL), so two first bookmarks at once make one collection.
    func named(_ name: String, owner: Int64, creating: Bool) async throws -> Int64? {
        let find: SQL =
            "SELECT id FROM collections WHERE owner_id = \(bind: owner) AND name = \(bind: name) ORDER BY id LIMIT 1"
        if let row = try await db.read({ db in try await db.first(find) }) {
            return try row.decode(column: "id", as: Int64.self)
        }
        guard creating else { return nil }
        let id = ids.next()
        return try await db.write { db in
            let lock = db.dialect.rowLock(.noKeyUpdate) ?? ""
            _ = try await db.first("SELECT id FROM users WHERE id = \(bind: owner)\(lock)")
            if let row = try await db.first(find) { return try row.decode(column: "id", as: Int64.self) }
            try await db.exec(
                """
                INSERT INTO collections (id, owner_id, name, created_at)
                VALUES (\(bind: id), \(bind: owner), \(bind: name), \(bind: Timestamp.now.milliseconds))
                """)
            return id
        }
    }

    /// Takes the post out of the owner's collection (nothing when it is not there).
    func unsave(post: Int64, collection: Int64, owner: Int64) async throws {
        try await db.write(
            """
            DELETE FROM collection_items
            WHERE collection_id = \(bind: collection) AND owner_id = \(bind: owner) AND post_id = \(bind: post)
            RETURNING id
            """)
    }

    /// The owner's collection `id`; 404 for anyone else's or none.
    func collection(id: Int64, owner: Int64) async throws -> SavedCollection {
        let row = try await db.read { db in
            try await db.first(
                "SELECT \(Self.columns) FROM collections c WHERE c.id = \(bind: id) AND c.owner_id = \(bind: owner)")
        }
        guard let row else { throw Self.notFound }
        return try Self.collection(row: row)
    }

    /// The owner's collections, newest first.
    func list(owner: Int64, page: PageRequest) async throws -> Page<SavedCollection> {
        let sql = Self.listSQL(owner: owner, page: page)
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try page.split(rows) { try Cursor(row: $0, time: "created_at") }
        return Page(items: try pageRows.map(Self.collection(row:)), nextCursor: next)
    }

    static func listSQL(owner: Int64, page: PageRequest) -> SQL {
        var sql: SQL = "SELECT \(columns) FROM collections c WHERE c.owner_id = \(bind: owner)"
        if let cursor = page.cursor { sql += " AND (c.created_at, c.id) < (\(bind: cursor.time), \(bind: cursor.id))" }
        return sql + " ORDER BY c.created_at DESC, c.id DESC LIMIT \(bind: page.fetchLimit)"
    }

    func rename(id: Int64, owner: Int64, name: String) async throws -> SavedCollection {
        let rows = try await db.write(
            "UPDATE collections SET name = \(bind: name) WHERE id = \(bind: id) AND owner_id = \(bind: owner) RETURNING id, name, items_count, created_at"
        )
        guard let row = rows.first else { throw Self.notFound }
        return try Self.collection(row: row)
    }

    /// Deletes the owner's collection with its items.
    func delete(id: Int64, owner: Int64) async throws {
        try await deleteOwned(
            "DELETE FROM collections WHERE id = \(bind: id) AND owner_id = \(bind: owner) RETURNING id",
            orThrow: Self.notFound)
    }

    // MARK: items

    static let itemColumns: SQL = """
        i.id, i.collection_id, i.post_id, i.url, i.note, i.link_state, i.link_title, i.link_description, i.link_image_url, \
        i.link_site_name, i.link_fetched_at, i.saved_at
        """

    /// An item row before its post (if any) is attached.
    struct ItemRecord: Sendable {
        var item: CollectionItem
        var id: Int64
        var postID: Int64?

        init(row: Row) throws {
            id = try row.decode(column: "id", as: Int64.self)
            postID = try row.decode(column: "post_id", as: Int64?.self)
            var link: LinkPreview?
            var state = CollectionItem.State.ready
            if let url = try row.decode(column: "url", as: String?.self) {
                state =
                    CollectionItem.State(rawValue: try row.decode(column: "link_state", as: String?.self) ?? "")
                    ?? .pending
                link = LinkPreview(
                    url: url, title: try row.decode(column: "link_title", as: String?.self),
                    description: try row.decode(column: "link_description", as: String?.self),
                    imageURL: try row.decode(column: "link_image_url", as: String?.self),
                    siteName: try row.decode(column: "link_site_name", as: String?.self)
                        ?? URLComponents(string: url)?.host,
                    fetchedAt: try row.decode(column: "link_fetched_at", as: Int64?.self).map(
                        Timestamp.init(milliseconds:)))
            }
            item = CollectionItem(
                id: String(try row.decode(column: "id", as: Int64.self)),
                collectionId: String(try row.decode(column: "collection_id", as: Int64.self)),
                post: nil, link: link, note: try row.decode(column: "note", as: String.self), state: state,
                savedAt: Timestamp(milliseconds: try row.decode(column: "saved_at", as: Int64.self)))
        }

        var cursor: Cursor { Cursor(time: item.savedAt.milliseconds, id: id) }

        /// Attaches the saved post, or marks the item unavailable when it is gone or hidden.
        func with(posts: [Int64: Post]) -> CollectionItem {
            guard let postID else { return item }
            var item = item
            item.post = posts[postID]
            if item.post == nil { item.state = .unavailable }
            return item
        }
    }

    /// The items of the owner's collection, newest first, with their posts as `viewer` sees
    /// them (two queries per page, whatever its size).
    func items(collection: Int64, owner: Int64, page: PageRequest, posts: PostStore) async throws -> Page<
        CollectionItem
    > {
        let sql = Self.itemsSQL(collection: collection, page: page)
        let rows = try await db.read { db in
            guard
                try await db.first(
                    "SELECT 1 AS x FROM collections WHERE id = \(bind: collection) AND owner_id = \(bind: owner)")
                    != nil
            else {
                throw Self.notFound
            }
            return try await db.rows(sql)
        }
        return try await self.page(of: rows, page: page, viewer: owner, posts: posts)
    }

    /// Renders item rows fetched `page.fetchLimit` at a time, with their posts in one batch.
    func page(of rows: [Row], page: PageRequest, viewer: Int64, posts: PostStore) async throws -> Page<CollectionItem> {
        let records = try rows.map(ItemRecord.init(row:))
        let (pageRecords, next) = page.split(records) { $0.cursor }
        let saved = try await posts.posts(ids: pageRecords.compactMap(\.postID), viewer: viewer)
        return Page(items: pageRecords.map { $0.with(posts: saved) }, nextCursor: next)
    }

    static func itemsSQL(collection: Int64, page: PageRequest) -> SQL {
        var sql: SQL =
            "SELECT \(itemColumns) FROM collection_items i WHERE i.collection_id = \(bind: collection)"
        if let cursor = page.cursor { sql += " AND (i.saved_at, i.id) < (\(bind: cursor.time), \(bind: cursor.id))" }
        return sql + " ORDER BY i.saved_at DESC, i.id DESC LIMIT \(bind: page.fetchLimit)"
    }

    func item(id: Int64, owner: Int64, posts: PostStore) async throws -> CollectionItem {
        guard
            let row = try await db.read({ db in
                try await db.first(
                    "SELECT \(Self.itemColumns) FROM collection_items i WHERE i.id = \(bind: id) AND i.owner_id = \(bind: owner)"
                )
            })
        else { throw PlazaError.notFound("Item") }
        let record = try ItemRecord(row: row)
        return record.with(posts: try await posts.posts(ids: record.postID.map { [$0] } ?? [], viewer: owner))
    }

    static let alreadySaved = PlazaError(
        .conflict, "already_saved", "That post is already in this collection.", field: "postId")

    /// What to save: a post the owner may see, or a link.
    enum Saved: Sendable {
        case post(Int64)
        case link(String)
    }

    /// Saves into the owner's collection; 404 for someone else's collection or a post the owner
    /// may not see, 409 for a post already in it. A link's preview is queued (or copied, when a
    /// fresh one is known) in the same transaction. Returns the new item's id.
    func save(_ saved: Saved, note: String, collection: Int64, owner: Int64) async throws -> Int64 {
        let id = ids.next()
        let now = Timestamp.now.milliseconds
        do {
            try await db.write { db in
                guard
                    try await db.first(
                        """
                        SELECT 1 AS x FROM collections WHERE id = \(bind: collection) AND owner_id = \(bind: owner)\(db.dialect.rowLock(.keyShare) ?? "")
                        """) != nil
                else {
                    throw Self.notFound
                }
                switch saved {
                case .post(let post):
                    let visible = try await db.first(
                        "SELECT \(Visibility.post(id: post, readableBy: owner, on: db.dialect)) AS visible")
                    guard try visible?.decode(column: "visible", as: Bool.self) == true else {
                        throw PlazaError.notFound("Post")
                    }
                    try await db.exec(
                        """
                        INSERT INTO collection_items (id, collection_id, owner_id, post_id, note, saved_at)
                        VALUES (\(bind: id), \(bind: collection), \(bind: owner), \(bind: post), \(bind: note), \(bind: now))
                        """)
                case .link(let url):
                    let preview = try await LinkPreviewStore.request(
                        url, by: owner, now: now, cap: linkPreviewsPerDay, on: db)
                    try await db.exec(
                        """
                        INSERT INTO collection_items (id, collection_id, owner_id, url, note, saved_at, link_state, link_title, link_description,
                            link_image_url, link_site_name, link_fetched_at)
                        VALUES (\(bind: id), \(bind: collection), \(bind: owner), \(bind: url), \(bind: note), \(bind: now), \(bind: preview.state),
                            \(bind: preview.title), \(bind: preview.description), \(bind: preview.imageURL), \(bind: preview.siteName), \(bind: preview.fetchedAt))
                        """)
                }
            }
        } catch  where Dialect.isUniqueViolation(error) {
            // The only unique index a save can meet: (collection, post).
            throw Self.alreadySaved
        }
        return id
    }

    /// Moves the owner's item to another of their collections and/or edits its note.
    func updateItem(id: Int64, owner: Int64, moveTo target: Int64?, note: String?) async throws {
        do {
            try await db.write { db in
                guard
                    let row = try await db.first(
                        "SELECT collection_id FROM collection_items WHERE id = \(bind: id) AND owner_id = \(bind: owner)"
                    )
                else {
                    throw PlazaError.notFound("Item")
                }
                let current = try row.decode(column: "collection_id", as: Int64.self)
                if let note {
                    try await db.exec("UPDATE collection_items SET note = \(bind: note) WHERE id = \(bind: id)")
                }
                guard let target, target != current else { return }
                guard
                    try await db.first(
                        "SELECT 1 AS x FROM collections WHERE id = \(bind: target) AND owner_id = \(bind: owner)")
                        != nil
                else {
                    throw PlazaError(
                        .unprocessableContent, "unknown_collection", "There is no such collection of yours.",
                        field: "collectionId")
                }
                try await db.exec("UPDATE collection_items SET collection_id = \(bind: target) WHERE id = \(bind: id)")
                // The counter triggers see inserts and deletes; a move is neither.
                try await db.exec("UPDATE collections SET items_count = items_count - 1 WHERE id = \(bind: current)")
                try await db.exec("UPDATE collections SET items_count = items_count + 1 WHERE id = \(bind: target)")
            }
        } catch  where Dialect.isUniqueViolation(error) {
            throw PlazaError(
                .conflict, "already_saved", "That post is already in the other collection.", field: "collectionId")
        }
    }

    func deleteItem(id: Int64, owner: Int64) async throws {
        try await deleteOwned(
            "DELETE FROM collection_items WHERE id = \(bind: id) AND owner_id = \(bind: owner) RETURNING id",
            orThrow: PlazaError.notFound("Item"))
    }

    /// Runs a `DELETE … WHERE owner_id = … RETURNING id`: another person's row or none is `error`.
    private func deleteOwned(_ statement: SQL, orThrow error: PlazaError) async throws {
        guard try await db.write(statement).first != nil else { throw error }
    }
}
