import PlazaAPI

/// Spaces, their members, and which spaces a post is in. Member and post counts are kept on
/// write by triggers.
package struct SpaceStore: Sendable {
    let db: Database
    let ids: IDGenerator
    /// Cleared when a space is renamed: posts are found by their spaces' names.
    let searchWindows: SearchWindowCache

    /// The columns every space query selects (`s` = spaces, `u` = the owner), with the
    /// viewer's role and pending request.
    static func columns(viewer: Int64?) -> SQL {
        let relation: SQL =
            viewer.map {
                """
                (SELECT vm.role FROM space_members vm WHERE vm.space_id = s.id AND vm.user_id = \(bind: $0)) AS viewer_role, \
                EXISTS (SELECT 1 FROM space_requests vr WHERE vr.space_id = s.id AND vr.user_id = \(bind: $0)) AS viewer_requested
                """
            } ?? "NULL AS viewer_role, FALSE AS viewer_requested"
        return """
            s.id, s.slug, s.name, s.description, s.visibility, s.image, s.owner_id, s.members_count, s.posts_count, \
            s.created_at, \(UserSummary.columns), \(relation)
            """
    }

    static func space(row: Row, viewer: Int64?) throws -> Space {
        let owner = try row.decode(column: "owner_id", as: Int64.self)
        let role = try row.decode(column: "viewer_role", as: String?.self).map { SpaceRole(rawValue: $0) ?? .member }
        return Space(
            id: String(try row.decode(column: "id", as: Int64.self)),
            slug: try row.decode(column: "slug", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            description: try row.decode(column: "description", as: String.self),
            image: MediaRecord.list(try row.decode(column: "image", as: String?.self)).first?.media,
            owner: try UserSummary(authorIn: row, id: owner),
            counts: Space.Counts(
                members: try row.decode(column: "members_count", as: Int.self),
                posts: try row.decode(column: "posts_count", as: Int.self)),
            viewer: Space.Viewer(
                member: role != nil, owner: owner == viewer, role: role,
                requested: try row.decode(column: "viewer_requested", as: Bool.self)),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            visibility: SpaceVisibility(rawValue: try row.decode(column: "visibility", as: String.self)) ?? .private)
    }

    /// Lower-cased slug and name, matched by `?q=`.
    static func searchKey(slug: String, name: String) -> String { "\(slug) \(name)".lowercased() }

    struct Draft: Sendable {
        var slug: String
        var name: String
        var description: String
        var imageID: Int64?
        var visibility: SpaceVisibility = .open
    }

    /// Creates a space owned, and joined, by `owner`; 409 when the slug is taken.
    func create(owner: Int64, _ draft: Draft) async throws -> Space {
        let id = ids.next()
        let now = Timestamp.now.milliseconds
        do {
            try await db.write { db in
                let image = try await MediaStore.replaceImage(
                    nil, with: draft.imageID, owner: owner, field: "imageId", on: db
                ).image
                try await db.exec(
                    """
                    INSERT INTO spaces (id, slug, slug_key, name, description, search_key, image, owner_id, created_at, visibility)
                    VALUES (\(bind: id), \(bind: draft.slug), \(bind: draft.slug.lowercased()), \(bind: draft.name), \(bind: draft.description),
                        \(bind: Self.searchKey(slug: draft.slug, name: draft.name)), \(bind: image?.line), \(bind: owner), \(bind: now),
                        \(bind: draft.visibility.rawValue))
                    """)
                try await db.exec(
                    "INSERT INTO space_members (space_id, user_id, created_at, role) VALUES (\(bind: id), \(bind: owner), \(bind: now), 'owner')"
                )
            }
        } catch  where Dialect.isUniqueViolation(error) {
            throw PlazaError(.conflict, "slug_taken", "There is already a space \(draft.slug).", field: "slug")
        }
        return try await space(id: id, viewer: owner)
    }

    func space(id: Int64, viewer: Int64?) async throws -> Space {
        try await one("s.id = \(bind: id)", viewer: viewer)
    }

    func space(slug: String, viewer: Int64?) async throws -> Space {
        guard slug.utf8.count <= SpaceRules.maxSlugLength else { throw PlazaError.notFound("Space") }
        return try await one("s.slug_key = \(bind: slug.lowercased())", viewer: viewer)
    }

    private func one(_ condition: SQL, viewer: Int64?) async throws -> Space {
        let sql: SQL =
            "SELECT \(Self.columns(viewer: viewer)) FROM spaces s JOIN users u ON u.id = s.owner_id WHERE \(condition) AND \(Self.listed(to: viewer))"
        guard let row = try await db.read({ db in try await db.first(sql) }) else { throw PlazaError.notFound("Space") }
        return try Self.space(row: row, viewer: viewer)
    }

    /// A space as the routes that act on it need it: id, owner, visibility and the viewer's role.
    package struct Key: Sendable {
        package var id: Int64
        var owner: Int64
        package var visibility: SpaceVisibility
        /// The viewer's role, nil when not a member.
        package var role: SpaceRole?
        var isModerator: Bool { role == .owner || role == .moderator }
    }

    /// The space with `slug` as `viewer` may know it, or 404 (a private space is there only
    /// for its members).
    func key(slug: String, viewer: Int64?) async throws -> Key {
        let key = slug.lowercased()
        guard key.utf8.count <= SpaceRules.maxSlugLength,
            let found = try await self.key("s.slug_key = \(bind: key)", viewer: viewer)
        else { throw PlazaError.notFound("Space") }
        return found
    }

    /// The space `id` as `viewer` may know it, or nil.
    package func key(id: Int64, viewer: Int64?) async throws -> Key? {
        try await key("s.id = \(bind: id)", viewer: viewer)
    }

    private func key(_ condition: SQL, viewer: Int64?) async throws -> Key? {
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT s.id, s.owner_id, s.visibility, \(Self.role(of: viewer)) AS role FROM spaces s
                    WHERE \(condition) AND \(Self.listed(to: viewer))
                    """)
            })
        else { return nil }
        return Key(
            id: try row.decode(column: "id", as: Int64.self), owner: try row.decode(column: "owner_id", as: Int64.self),
            visibility: SpaceVisibility(rawValue: try row.decode(column: "visibility", as: String.self)) ?? .private,
            role: try row.decode(column: "role", as: String?.self).map { SpaceRole(rawValue: $0) ?? .member })
    }

    /// `viewer`'s role in space `s`, as a column.
    static func role(of viewer: Int64?) -> SQL {
        guard let viewer else { return "CAST(NULL AS TEXT)" }
        return "(SELECT rm.role FROM space_members rm WHERE rm.space_id = s.id AND rm.user_id = \(bind: viewer))"
    }

    /// True when space `s` is shown to `viewer`: open and closed spaces to anyone, a private
    /// one to its members.
    static func listed(to viewer: Int64?) -> SQL {
        guard let viewer else { return "s.visibility <> 'private'" }
        return
            "(s.visibility <> 'private' OR EXISTS (SELECT 1 FROM space_members lm WHERE lm.space_id = s.id AND lm.user_id = \(bind: viewer)))"
    }

    struct Changes: Sendable {
        var name: String?
        var description: String?
        var imageID: FieldUpdate<Int64> = .keep
        var visibility: SpaceVisibility?
    }

    /// The owner's edits; returns the ids of media no longer used (a replaced image).
    func update(id: Int64, owner: Int64, _ changes: Changes) async throws -> [Int64] {
        let unused = try await db.write { db in
            guard
                let row = try await db.first(
                    "SELECT slug, name, image FROM spaces WHERE id = \(bind: id) AND owner_id = \(bind: owner)")
            else {
                throw PlazaError.notFound("Space")
            }
            var sets: [SQL] = []
            if let name = changes.name {
                let slug = try row.decode(column: "slug", as: String.self)
                sets.append("name = \(bind: name), search_key = \(bind: Self.searchKey(slug: slug, name: name))")
            }
            if let description = changes.description { sets.append("description = \(bind: description)") }
            var unused: [Int64] = []
            let imageID: Int64?? =
                switch changes.imageID {
                case .keep: .none
                case .clear: .some(nil)
                case .set(let id): .some(id)
                }
            if let imageID {
                let current = try row.decode(column: "image", as: String?.self)
                let change = try await MediaStore.replaceImage(
                    current, with: imageID, owner: owner, field: "imageId", on: db)
                if change.changed { sets.append("image = \(bind: change.image?.line)") }
                unused = change.unused
            }
            if let visibility = changes.visibility {
                sets.append("visibility = \(bind: visibility.rawValue)")
                if visibility != .open {
                    // A closed or private space's posts are for its members (widening back keeps that).
                    try await db.exec(
                        """
                        UPDATE posts SET audience = 'members'
                        WHERE audience <> 'members' AND id IN (SELECT post_id FROM post_spaces WHERE space_id = \(bind: id))
                        """)
                }
            }
            if !sets.isEmpty {
                try await db.exec("UPDATE spaces SET \(sets.joined(separator: ", ")) WHERE id = \(bind: id)")
            }
            return unused
        }
        if changes.name != nil || changes.visibility != nil { searchWindows.clear() }
        return unused
    }

    /// Joins an open space; 403 when banned from it or when it needs approval or an invite.
    func join(_ space: Key, user: Int64) async throws {
        guard space.role == nil else { return }
        guard space.visibility == .open else {
            throw PlazaError(
                .forbidden, "approval_needed",
                space.visibility == .closed
                    ? "This space is closed: ask to join, and a moderator will answer."
                    : "This space is joined by invitation only.")
        }
        try await db.write { db in try await Self.addMember(user, to: space.id, on: db) }
    }

    /// Makes `user` a member of `space` unless banned from it (403); clears their join request.
    static func addMember(_ user: Int64, to space: Int64, on db: Connection) async throws {
        try await requireExists(space, on: db)
        try await requireNotBanned(user, from: space, on: db)
        try await db.exec("DELETE FROM space_requests WHERE space_id = \(bind: space) AND user_id = \(bind: user)")
        try await db.exec(
            """
            INSERT INTO space_members (space_id, user_id, created_at) VALUES (\(bind: space), \(bind: user), \(bind: Timestamp.now.milliseconds))
            ON CONFLICT DO NOTHING
            """)
    }

    /// Leaves a space; its owner cannot (422), it would be left without one.
    func leave(_ space: Key, user: Int64) async throws {
        guard space.role != .owner else {
            throw PlazaError(.unprocessableContent, "owner_cannot_leave", "The owner of a space cannot leave it.")
        }
        try await db.write("DELETE FROM space_members WHERE space_id = \(bind: space.id) AND user_id = \(bind: user)")
    }

    // MARK: lists

    struct ListQuery: Sendable {
        /// Lower-cased text that the slug or name must contain.
        var text: String?
        /// Only the spaces this user joined, most recently joined first.
        var memberOf: Int64?
        var page: PageRequest
    }

    /// Spaces newest first, or the ones a person joined, most recent first.
    func list(_ query: ListQuery, viewer: Int64?) async throws -> Page<Space> {
        let sql = Self.listSQL(query, viewer: viewer)
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try query.page.split(rows) { try Cursor(row: $0, time: "sort_time") }
        return Page(items: try pageRows.map { try Self.space(row: $0, viewer: viewer) }, nextCursor: next)
    }

    static func listSQL(_ query: ListQuery, viewer: Int64?) -> SQL {
        var sql: SQL
        let time: SQL
        let id: SQL
        if let member = query.memberOf {
            (time, id) = ("m.created_at", "m.space_id")
            sql = """
                SELECT \(columns(viewer: viewer)), m.created_at AS sort_time FROM space_members m
                JOIN spaces s ON s.id = m.space_id JOIN users u ON u.id = s.owner_id WHERE m.user_id = \(bind: member)
                """
        } else {
            (time, id) = ("s.created_at", "s.id")
            // Private spaces are unlisted: found by their members only.
            sql =
                "SELECT \(columns(viewer: viewer)), s.created_at AS sort_time FROM spaces s JOIN users u ON u.id = s.owner_id WHERE \(listed(to: viewer))"
        }
        if let text = query.text { sql += " AND s.search_key LIKE \(bind: "%" + likeEscaped(text) + "%") ESCAPE '\\'" }
        if let cursor = query.page.cursor {
            sql += " AND (\(time), \(id)) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " ORDER BY \(time) DESC, \(id) DESC LIMIT \(bind: query.page.fetchLimit)"
        return sql
    }

    /// `text` with LIKE's wildcards escaped by a backslash.
    static func likeEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }

    // MARK: posts in spaces

    /// The spaces named by `slugs` (already lower-cased), in the order given; 422 naming the
    /// first slug that is no space.
    static func resolve(_ slugs: [String], on db: Connection) async throws -> [SpaceSummary] {
        guard !slugs.isEmpty else { return [] }
        let rows = try await db.rows("SELECT id, slug, slug_key, name FROM spaces WHERE slug_key IN (\(binds: slugs))")
        var found: [String: SpaceSummary] = [:]
        for row in rows {
            found[try row.decode(column: "slug_key", as: String.self)] = SpaceSummary(
                id: String(try row.decode(column: "id", as: Int64.self)),
                slug: try row.decode(column: "slug", as: String.self),
                name: try row.decode(column: "name", as: String.self))
        }
        return try slugs.map { slug in
            guard let space = found[slug] else { throw unknownSpace(slug) }
            return space
        }
    }

    private static func unknownSpace(_ slug: String) -> PlazaError {
        PlazaError(.unprocessableContent, "unknown_space", "There is no space \(slug).", field: "spaces")
    }

    /// The spaces a post goes in, and what they allow of its audience.
    struct Placement: Sendable {
        var spaces: [SpaceSummary]
        /// One of them is closed or private: its posts are for members only.
        var restricted: Bool

        /// The audience the post gets: `members` in a closed or private space whatever was
        /// asked; `members` needs a space.
        func audience(_ wanted: PostAudience) throws -> PostAudience {
            if restricted { return .members }
            if wanted == .members, spaces.isEmpty {
                throw PlazaError.invalid("audience", "A post for members only needs at least one space.")
            }
            return wanted
        }
    }

    /// `resolve`, and whether `author` may post in each space: not when banned from it, and in
    /// a closed or private space only as a member. Spaces in `keeping` (ids the post is in
    /// already) stay allowed.
    static func resolveForPosting(
        _ slugs: [String], by author: Int64, keeping: Set<String> = [], on db: Connection
    ) async throws -> Placement {
        guard !slugs.isEmpty else { return Placement(spaces: [], restricted: false) }
        let spaces = try await resolve(slugs, on: db)
        let rows = try await db.rows(
            """
            SELECT s.id, s.slug, s.visibility,
                EXISTS (SELECT 1 FROM space_members m WHERE m.space_id = s.id AND m.user_id = \(bind: author)) AS member,
                EXISTS (SELECT 1 FROM space_bans b WHERE b.space_id = s.id AND b.user_id = \(bind: author)) AS banned
            FROM spaces s WHERE s.slug_key IN (\(binds: slugs))
            """)
        var restricted = false
        for row in rows {
            let id = String(try row.decode(column: "id", as: Int64.self))
            let slug = try row.decode(column: "slug", as: String.self)
            let visibility =
                SpaceVisibility(rawValue: try row.decode(column: "visibility", as: String.self)) ?? .private
            if visibility != .open { restricted = true }
            guard !keeping.contains(id) else { continue }
            if try row.decode(column: "banned", as: Bool.self) {
                throw PlazaError(.forbidden, "banned", "You were banned from \(slug).", field: "spaces")
            }
            let member = try row.decode(column: "member", as: Bool.self)
            guard visibility == .open || member else {
                // A private space is not there for those outside it.
                if visibility == .private { throw unknownSpace(slug) }
                throw PlazaError(.forbidden, "not_member", "Only members post in \(slug).", field: "spaces")
            }
        }
        return Placement(spaces: spaces, restricted: restricted)
    }

    /// Puts `post` (made at `createdAt`) in exactly `spaces`, inside the post's transaction.
    static func place(post: Int64, createdAt: Int64, in spaces: [SpaceSummary], replacing: Bool, on db: Connection)
        async throws
    {
        if replacing { try await db.exec("DELETE FROM post_spaces WHERE post_id = \(bind: post)") }
        for space in spaces {
            // `resolve` rendered the id from its row; a space that does not parse is not there.
            guard let spaceID = parseID(space.id) else { throw PlazaError.notFound("Space") }
            try await db.exec(
                "INSERT INTO post_spaces (post_id, space_id, created_at) VALUES (\(bind: post), \(bind: spaceID), \(bind: createdAt))"
            )
        }
    }

    /// 404 when `space` is gone (deleted since it was looked up); on PostgreSQL it is then kept
    /// until the transaction ends, so rows added for it cannot fail their foreign key.
    static func requireExists(_ space: Int64, on db: Connection) async throws {
        let lock = db.dialect.rowLock(.keyShare) ?? ""
        guard try await db.first("SELECT 1 AS x FROM spaces WHERE id = \(bind: space)\(lock)") != nil else {
            throw PlazaError.notFound("Space")
        }
    }

    /// 403 when `user` is banned from `space`.
    static func requireNotBanned(_ user: Int64, from space: Int64, on db: Connection) async throws {
        if try await db.first(
            "SELECT 1 AS x FROM space_bans WHERE space_id = \(bind: space) AND user_id = \(bind: user)")
            != nil
        {
            throw PlazaError(.forbidden, "banned", "You were banned from this space.")
        }
    }

    /// Takes `post` out of `space` (a moderator's removal; the post stays its author's), with
    /// a `post.deleted` event for those who can no longer read it. Returns false when the post
    /// was not in the space.
    static func removePost(_ post: Int64, from space: Int64, on db: Connection) async throws -> Bool {
        guard
            let row = try await db.first(
                "SELECT author_id FROM posts WHERE id = \(bind: post) AND EXISTS (SELECT 1 FROM post_spaces ps WHERE ps.post_id = posts.id AND ps.space_id = \(bind: space))"
            )
        else { return false }
        let author = try row.decode(column: "author_id", as: Int64.self)
        // The readers include the space's members, read before the post leaves it.
        try await EventLog.append(
            .init(kind: .postDeleted, actor: author, post: post), to: .postReaders(post: post, author: author), on: db)
        try await db.exec("DELETE FROM post_spaces WHERE post_id = \(bind: post) AND space_id = \(bind: space)")
        return true
    }

    /// How many joined spaces (the most recently joined) feed a person's home feed.
    static let maxHomeSpaces = 50

    /// The spaces whose posts go into a person's home feed.
    static func memberships(of user: Int64, on db: Connection) async throws -> [Int64] {
        try await db.rows(
            "SELECT space_id FROM space_members WHERE user_id = \(bind: user) ORDER BY created_at DESC LIMIT \(bind: maxHomeSpaces)"
        ).map { try $0.decode(column: "space_id", as: Int64.self) }
    }
}
