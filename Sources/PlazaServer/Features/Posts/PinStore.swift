import PlazaAPI

/// Pins: an author's posts on top of their profile, a space's announcements on top of its feed
/// (`profile_pins`, `space_pins`). Each list holds at most `PostRules.maxPins`, counted after
/// locking the row it belongs to (the person's, the space's) so that two pins at once cannot
/// both take the last place. Lists are read through `Visibility`, like every post.
package struct PinStore: Sendable {
    let db: Database

    static let tooMany = PlazaError(
        .unprocessableContent, "too_many_pins",
        "At most \(PostRules.maxPins) posts can be pinned here: unpin one first.")
    static let notAuthor = PlazaError(.forbidden, "not_author", "Only the author can pin this post to their profile.")
    static let notInSpace = PlazaError(
        .unprocessableContent, "not_in_space", "This post is not in the space, so it cannot be pinned there.")

    /// Whether post `p` is pinned where it is read: in `space`'s list when given, else to its author's profile.
    static func pinnedColumn(space: Int64?) -> SQL {
        guard let space else {
            return
                "EXISTS (SELECT 1 FROM profile_pins pin WHERE pin.user_id = p.author_id AND pin.post_id = p.id) AS pinned"
        }
        return
            "EXISTS (SELECT 1 FROM space_pins pin WHERE pin.space_id = \(bind: space) AND pin.post_id = p.id) AS pinned"
    }

    /// Pins (or unpins) post `post` to `user`'s profile, idempotently: 404 for a post they may not
    /// read, 403 `not_author` for another's, 422 `too_many_pins` past the limit.
    func setProfilePin(post: Int64, user: Int64, pinned: Bool) async throws {
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT p.author_id FROM posts p WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: user))\(db.dialect.rowLock(.keyShare) ?? "")
                    """
                )
            else { throw PlazaError.notFound("Post") }
            guard try row.decode(column: "author_id", as: Int64.self) == user else { throw Self.notAuthor }
            guard pinned else {
                try await db.exec("DELETE FROM profile_pins WHERE user_id = \(bind: user) AND post_id = \(bind: post)")
                return
            }
            try await PeopleStore.lockInOrder([user], on: db)
            try await Self.add(
                count: "SELECT post_id FROM profile_pins WHERE user_id = \(bind: user)",
                exists: "user_id = \(bind: user) AND post_id = \(bind: post)", table: "profile_pins",
                insert:
                    "INSERT INTO profile_pins (user_id, post_id, created_at) VALUES (\(bind: user), \(bind: post), \(bind: now))",
                on: db)
        }
    }

    /// Pins (or unpins) post `post` to the top of `space` by `moderator`, idempotently: 403
    /// `not_moderator` unless they moderate it, 404 for a post they may not read, 422
    /// `not_in_space` for a post that is not in it, 422 `too_many_pins` past the limit.
    func setSpacePin(post: Int64, space: Int64, moderator: Int64, pinned: Bool) async throws {
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            if let lock = db.dialect.rowLock(.noKeyUpdate) {
                try await db.exec("SELECT id FROM spaces WHERE id = \(bind: space)\(lock)")
            }
            try await SpaceMembersStore.requireModerator(moderator, of: space, on: db)
            guard
                let row = try await db.first(
                    """
                    SELECT EXISTS (SELECT 1 FROM post_spaces ps WHERE ps.post_id = p.id AND ps.space_id = \(bind: space))
                    AS in_space FROM posts p WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: moderator))\(db.dialect.rowLock(.keyShare) ?? "")
                    """)
            else { throw PlazaError.notFound("Post") }
            guard pinned else {
                try await db.exec("DELETE FROM space_pins WHERE space_id = \(bind: space) AND post_id = \(bind: post)")
                return
            }
            guard try row.decode(column: "in_space", as: Bool.self) else { throw Self.notInSpace }
            try await Self.add(
                count: "SELECT post_id FROM space_pins WHERE space_id = \(bind: space)",
                exists: "space_id = \(bind: space) AND post_id = \(bind: post)", table: "space_pins",
                insert: """
                    INSERT INTO space_pins (space_id, post_id, pinned_by, created_at)
                    VALUES (\(bind: space), \(bind: post), \(bind: moderator), \(bind: now))
                    """,
                on: db)
        }
    }

    /// Inserts a pin unless it is there already, refusing one past the limit.
    private static func add(
        count: SQL, exists: SQL, table: String, insert: SQL, on db: Connection
    ) async throws {
        guard try await db.first("SELECT 1 AS ok FROM \(unsafeRaw: table) WHERE \(exists)") == nil else { return }
        let pins = try await db.rows("\(count) LIMIT \(bind: PostRules.maxPins)")
        guard pins.count < PostRules.maxPins else { throw tooMany }
        try await db.exec(insert)
    }

    /// The posts `author` pinned to their profile that `viewer` may read, newest pin first.
    func profilePins(author: Int64, viewer: Int64?) async throws -> [Post] {
        try await pins(
            """
            SELECT \(PostRecord.columns(viewer: viewer)) FROM profile_pins pn JOIN posts p ON p.id = pn.post_id
            JOIN users u ON u.id = p.author_id WHERE pn.user_id = \(bind: author) AND p.author_id = \(bind: author)
            AND \(Visibility.post("p", readableBy: viewer))
            ORDER BY pn.created_at DESC, pn.post_id DESC LIMIT \(bind: PostRules.maxPins)
            """)
    }

    /// The posts pinned to the top of `space` that `viewer` may read, newest pin first.
    func spacePins(space: Int64, viewer: Int64?) async throws -> [Post] {
        try await pins(
            """
            SELECT \(PostRecord.columns(viewer: viewer, pinnedIn: space)) FROM space_pins pn
            JOIN post_spaces ps ON ps.post_id = pn.post_id AND ps.space_id = pn.space_id
            JOIN posts p ON p.id = pn.post_id JOIN users u ON u.id = p.author_id
            WHERE pn.space_id = \(bind: space) AND \(Visibility.post("p", readableBy: viewer))
            ORDER BY pn.created_at DESC, pn.post_id DESC LIMIT \(bind: PostRules.maxPins)
            """)
    }

    private func pins(_ sql: SQL) async throws -> [Post] {
        try await db.read { db in try await db.rows(sql) }.map { row in
            var post = try PostRecord(row: row).post
            post.pinned = true
            return post
        }
    }
}
