import PlazaAPI

/// The lists a person keeps of people and posts — whom they follow and who follows them, who
/// asks to, whom they block and mute, what they liked and saved — as rows of their keyset
/// `(time, id)` with the person or post each names, for doors that page them by keys of their
/// own (Mastodon's numeric `max_id`). Each list walks one index, newest first; what the viewer
/// may not see is left out in the query, so a page is full.
package struct PersonalListStore: Sendable {
    let db: Database

    package enum List: Sendable {
        /// Who follows the person, and whom they follow, by the time of the follow.
        case followers(Int64)
        case following(Int64)
        /// Who asks to follow the (locked) person.
        case followRequests(Int64)
        /// Whom the person blocks, and mutes.
        case blocks(Int64)
        case mutes(Int64)
        /// The posts the person liked, newest like first.
        case likes(Int64)
        /// The posts saved in the person's collection, newest save first (links are left out).
        case saves(collection: Int64)
    }

    /// A list's row: its place `(time, id)` and the person or post it names (the id itself,
    /// but for a save, whose id is the item's).
    package struct Row: Sendable, Equatable {
        package var time: Int64
        package var id: Int64
        package var item: Int64
    }

    /// A page: `limit` rows before `before`, or the newest `limit` rows after `after`.
    package struct Window: Sendable {
        package var limit: Int
        package var before: Cursor?
        package var after: Cursor?

        package init(limit: Int, before: Cursor? = nil, after: Cursor? = nil) {
            self.limit = limit
            self.before = before
            self.after = after
        }
    }

    /// Where a list's rows are: the table (aliased), the column that names the list's owner,
    /// the time and id of the keyset, the item, and what the viewer must be allowed to see.
    struct Shape {
        var table: SQL
        var owner: Int64
        var ownerColumn: SQL
        var time: SQL
        var id: SQL
        var item: SQL
        var join: SQL
        var visible: SQL
    }

    static func shape(_ list: List, viewer: Int64?) -> Shape {
        func people(
            _ table: SQL, _ owner: Int64, _ ownerColumn: SQL, _ other: SQL,
            hiding: Visibility.ProfileHiding = .eitherWay
        ) -> Shape {
            Shape(
                table: table, owner: owner, ownerColumn: ownerColumn, time: "t.created_at", id: other, item: other,
                join: "JOIN users u ON u.id = \(other)",
                visible: Visibility.profile("u", seenBy: viewer, hiding: hiding))
        }
        switch list {
        case .followers(let user): return people("follows t", user, "t.followee_id", "t.follower_id")
        case .following(let user): return people("follows t", user, "t.follower_id", "t.followee_id")
        case .followRequests(let user): return people("follow_requests t", user, "t.target_id", "t.requester_id")
        // One's own blocks and mutes are listed to be undone: only the other person's block of
        // the owner hides them.
        case .blocks(let user): return people("blocks t", user, "t.blocker_id", "t.blocked_id", hiding: .theirBlock)
        case .mutes(let user): return people("mutes t", user, "t.muter_id", "t.muted_id", hiding: .theirBlock)
        case .likes(let user):
            return Shape(
                table: "likes t", owner: user, ownerColumn: "t.user_id", time: "t.created_at", id: "t.post_id",
                item: "t.post_id", join: "JOIN posts p ON p.id = t.post_id",
                visible: Visibility.post("p", readableBy: viewer))
        case .saves(let collection):
            return Shape(
                table: "collection_items t", owner: collection, ownerColumn: "t.collection_id", time: "t.saved_at",
                id: "t.id", item: "t.post_id", join: "JOIN posts p ON p.id = t.post_id",
                visible: Visibility.post("p", readableBy: viewer))
        }
    }

    /// A page of the list as `viewer` may see it, and whether more rows follow it.
    package func rows(_ list: List, window: Window, viewer: Int64?) async throws -> (rows: [Row], more: Bool) {
        let sql = Self.rowsSQL(list, window: window, viewer: viewer)
        let rows = try await db.read { db in try await db.rows(sql) }.map { row in
            Row(
                time: try row.decode(column: "t", as: Int64.self), id: try row.decode(column: "id", as: Int64.self),
                item: try row.decode(column: "item", as: Int64.self))
        }
        return (Array(rows.prefix(window.limit)), rows.count > window.limit)
    }

    static func rowsSQL(_ list: List, window: Window, viewer: Int64?) -> SQL {
        let s = shape(list, viewer: viewer)
        var sql: SQL = """
            SELECT \(s.time) AS t, \(s.id) AS id, \(s.item) AS item FROM \(s.table) \(s.join)
            WHERE \(s.ownerColumn) = \(bind: s.owner)
            """
        if let before = window.before {
            sql += " AND (\(s.time), \(s.id)) < (\(bind: before.time), \(bind: before.id))"
        }
        if let after = window.after { sql += " AND (\(s.time), \(s.id)) > (\(bind: after.time), \(bind: after.id))" }
        sql += " AND \(s.visible) ORDER BY \(s.time) DESC, \(s.id) DESC LIMIT \(bind: window.limit + 1)"
        return sql
    }

    /// The ids of the list's rows at exactly `time` (to find a row from a key that carries its
    /// time), whoever may see them: this places a page, it shows nothing.
    package func ids(at time: Int64, in list: List) async throws -> [Int64] {
        let s = Self.shape(list, viewer: nil)
        return try await db.read { db in
            try await db.rows(
                "SELECT \(s.id) AS id FROM \(s.table) WHERE \(s.ownerColumn) = \(bind: s.owner) AND \(s.time) = \(bind: time)"
            )
        }.map { try $0.decode(column: "id", as: Int64.self) }
    }
}

extension AppServices {
    package var personalLists: PersonalListStore { PersonalListStore(db: db) }
}

extension CollectionActions {
    /// The owner's bookmarks collection (Mastodon's), nil before their first bookmark.
    package func bookmarksCollection(of owner: Int64) async throws -> Int64? {
        try await collections.named(CollectionRules.bookmarks, owner: owner, creating: false)
    }
}
