import PlazaAPI

/// Who is in a space and who decides: members and their roles, join requests, invites and
/// bans. Every change checks the actor's role in the same transaction that makes it, and
/// moderation actions go in the audit log.
struct SpaceMembersStore: Sendable {
    let db: Database
    let ids: IDGenerator

    // MARK: roles

    /// The role of `user` in `space`, read in the transaction `db`.
    static func role(of user: Int64, in space: Int64, on db: Connection) async throws -> SpaceRole? {
        let row = try await db.first(
            "SELECT role FROM space_members WHERE space_id = \(bind: space) AND user_id = \(bind: user)")
        guard let role = try row?.decode(column: "role", as: String.self) else { return nil }
        return SpaceRole(rawValue: role) ?? .member
    }

    /// 403 unless `user` moderates `space` (its owner or a moderator); returns their role.
    @discardableResult
    static func requireModerator(_ user: Int64, of space: Int64, on db: Connection) async throws -> SpaceRole {
        guard let role = try await role(of: user, in: space, on: db), role != .member else {
            throw PlazaError(.forbidden, "not_moderator", "Only the space's moderators can do this.")
        }
        return role
    }

    // MARK: members

    /// The members of a space, earliest first. A private or closed space shows its members to
    /// members only (a closed space is listed, its people are not).
    /// `only`: just this member (a page of one or none).
    func members(of space: SpaceStore.Key, viewer: Int64?, page: PageRequest, only: Int64? = nil) async throws
        -> Page<SpaceMember>
    {
        guard space.visibility == .open || space.role != nil else {
            throw PlazaError(.forbidden, "not_member", "Only members see who is in this space.")
        }
        return try await peoplePage(
            Self.membersSQL(space: space.id, viewer: viewer, only: only, page: page), page: page
        ) {
            try Self.member(row: $0)
        }
    }

    static func membersSQL(space: Int64, viewer: Int64?, only: Int64? = nil, page: PageRequest) -> SQL {
        var sql: SQL = """
            SELECT m.user_id AS author_id, m.role, m.created_at, \(UserSummary.columns)
            FROM space_members m JOIN users u ON u.id = m.user_id
            WHERE m.space_id = \(bind: space) AND \(Visibility.person("m.user_id", seenBy: viewer))
            """
        if let only { sql += " AND m.user_id = \(bind: only)" }
        return paged(sql, alias: "m", page: page)
    }

    static func requestsSQL(space: Int64, viewer: Int64, page: PageRequest) -> SQL {
        paged(
            """
            SELECT r.user_id AS author_id, r.created_at, \(UserSummary.columns)
            FROM space_requests r JOIN users u ON u.id = r.user_id
            WHERE r.space_id = \(bind: space) AND \(Visibility.person("r.user_id", seenBy: viewer))
            """, alias: "r", page: page)
    }

    /// `query` over `alias` (people in a space, by `created_at` and `user_id`), earliest first.
    private static func paged(_ query: SQL, alias: String, page: PageRequest) -> SQL {
        var sql = query
        let (time, id): (SQL, SQL) = (
            "\(unsafeRaw: alias).created_at", "\(unsafeRaw: alias).user_id"
        )
        if let cursor = page.cursor { sql += " AND (\(time), \(id)) > (\(bind: cursor.time), \(bind: cursor.id))" }
        sql += " ORDER BY \(time), \(id) LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    /// One page of people (`author_id`, `created_at` and the user's summary) from `sql`.
    private func peoplePage<Item>(_ sql: SQL, page: PageRequest, item: (Row) throws -> Item) async throws
        -> Page<Item>
    {
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try page.split(rows) {
            Cursor(
                time: try $0.decode(column: "created_at", as: Int64.self),
                id: try $0.decode(column: "author_id", as: Int64.self))
        }
        return Page(items: try pageRows.map(item), nextCursor: next)
    }

    private static func member(row: Row) throws -> SpaceMember {
        SpaceMember(
            user: try UserSummary(authorIn: row, id: try row.decode(column: "author_id", as: Int64.self)),
            role: SpaceRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .member,
            joinedAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    /// The owner makes a member a moderator or a moderator a member; the owner's own role
    /// does not change (422). 404 when `member` is not in the space.
    func setRole(_ role: SpaceRole, of member: Int64, in space: Int64, by actor: Int64) async throws {
        guard role != .owner else {
            throw PlazaError.invalid("role", "role must be moderator or member; a space has one owner.")
        }
        let ids = ids
        try await db.write { db in
            guard try await Self.role(of: actor, in: space, on: db) == .owner else {
                throw PlazaError(.forbidden, "not_owner", "Only the space's owner can change roles.")
            }
            guard let current = try await Self.role(of: member, in: space, on: db) else {
                throw PlazaError.notFound("Member")
            }
            guard current != .owner else {
                throw PlazaError(.unprocessableContent, "owner_role", "The owner's role does not change.")
            }
            guard current != role else { return }
            try await db.exec(
                "UPDATE space_members SET role = \(bind: role.rawValue) WHERE space_id = \(bind: space) AND user_id = \(bind: member)"
            )
            try await AuditLog.record(
                .init(
                    actor: actor, action: "member.\(role.rawValue)", targetType: "user", targetID: member, space: space),
                ids: ids, on: db)
        }
    }

    /// A moderator removes a member (and, with `ban`, keeps them out). The owner cannot be
    /// removed; only the owner removes a moderator.
    func remove(_ member: Int64, from space: Int64, by actor: Int64, ban: Bool) async throws {
        let ids = ids
        try await db.write { db in
            let actorRole = try await Self.requireModerator(actor, of: space, on: db)
            let role = try await Self.role(of: member, in: space, on: db)
            if role == nil && !ban { throw PlazaError.notFound("Member") }
            guard role != .owner, member != actor else {
                throw PlazaError(
                    .unprocessableContent, "cannot_remove", "The owner, and you yourself, cannot be removed.")
            }
            if role == .moderator && actorRole != .owner {
                throw PlazaError(.forbidden, "not_owner", "Only the owner removes a moderator.")
            }
            try await db.exec("DELETE FROM space_members WHERE space_id = \(bind: space) AND user_id = \(bind: member)")
            if ban {
                try await db.exec(
                    "DELETE FROM space_requests WHERE space_id = \(bind: space) AND user_id = \(bind: member)")
                try await db.exec(
                    """
                    INSERT INTO space_bans (space_id, user_id, created_by, created_at)
                    VALUES (\(bind: space), \(bind: member), \(bind: actor), \(bind: Timestamp.now.milliseconds))
                    ON CONFLICT DO NOTHING
                    """)
            }
            try await AuditLog.record(
                .init(
                    actor: actor, action: ban ? "space.ban" : "member.remove", targetType: "user", targetID: member,
                    space: space),
                ids: ids, on: db)
        }
    }

    /// A moderator lifts a ban; 404 when there is none.
    func unban(_ user: Int64, from space: Int64, by actor: Int64) async throws {
        let ids = ids
        try await db.write { db in
            try await Self.requireModerator(actor, of: space, on: db)
            guard
                try await db.first(
                    "DELETE FROM space_bans WHERE space_id = \(bind: space) AND user_id = \(bind: user) RETURNING user_id"
                )
                    != nil
            else { throw PlazaError.notFound("Ban") }
            try await AuditLog.record(
                .init(actor: actor, action: "space.unban", targetType: "user", targetID: user, space: space),
                ids: ids, on: db)
        }
    }

    /// A moderator takes a post out of the space; 404 when it is not in it.
    func removePost(_ post: Int64, from space: Int64, by actor: Int64) async throws {
        let ids = ids
        try await db.write { db in
            try await Self.requireModerator(actor, of: space, on: db)
            guard try await SpaceStore.removePost(post, from: space, on: db) else { throw PlazaError.notFound("Post") }
            try await AuditLog.record(
                .init(actor: actor, action: "post.remove", targetType: "post", targetID: post, space: space),
                ids: ids, on: db)
        }
    }

    // MARK: join requests

    /// Asks to join a closed space (idempotent). 422 for an open space (join it), 409 for a member.
    func request(_ space: SpaceStore.Key, by user: Int64) async throws {
        guard space.role == nil else {
            throw PlazaError(.conflict, "already_member", "You are a member of this space already.")
        }
        guard space.visibility == .closed else {
            throw PlazaError(
                .unprocessableContent, "no_request_needed",
                space.visibility == .open ? "This space is open: join it." : "This space is joined by invitation only.")
        }
        try await db.write { db in
            try await SpaceStore.requireExists(space.id, on: db)
            try await SpaceStore.requireNotBanned(user, from: space.id, on: db)
            try await db.exec(
                """
                INSERT INTO space_requests (space_id, user_id, created_at)
                VALUES (\(bind: space.id), \(bind: user), \(bind: Timestamp.now.milliseconds)) ON CONFLICT DO NOTHING
                """)
        }
    }

    /// The pending requests of a space, oldest first: moderators only.
    func requests(of space: SpaceStore.Key, viewer: Int64, page: PageRequest) async throws -> Page<JoinRequest> {
        guard space.isModerator else {
            throw PlazaError(.forbidden, "not_moderator", "Only the space's moderators see its join requests.")
        }
        let sql = Self.requestsSQL(space: space.id, viewer: viewer, page: page)
        return try await peoplePage(sql, page: page) {
            JoinRequest(
                user: try UserSummary(authorIn: $0, id: try $0.decode(column: "author_id", as: Int64.self)),
                requestedAt: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    /// A moderator approves (the person joins) or denies a request; 404 when there is none.
    func answer(requestOf user: Int64, to space: Int64, approve: Bool, by actor: Int64) async throws {
        let ids = ids
        try await db.write { db in
            try await Self.requireModerator(actor, of: space, on: db)
            guard
                try await db.first(
                    "DELETE FROM space_requests WHERE space_id = \(bind: space) AND user_id = \(bind: user) RETURNING user_id"
                ) != nil
            else { throw PlazaError.notFound("Request") }
            if approve { try await SpaceStore.addMember(user, to: space, on: db) }
            try await AuditLog.record(
                .init(
                    actor: actor, action: approve ? "request.approve" : "request.deny", targetType: "user",
                    targetID: user, space: space),
                ids: ids, on: db)
        }
    }

    // MARK: invites

    /// A moderator makes an invite code (shown once; stored hashed).
    func invite(to space: Int64, by actor: Int64, maxUses: Int?, expiresAt: Timestamp?) async throws -> String {
        let code = SessionToken.make()
        let id = ids.next()
        try await db.write { db in
            try await Self.requireModerator(actor, of: space, on: db)
            try await db.exec(
                """
                INSERT INTO space_invites (id, space_id, code_hash, created_by, max_uses, expires_at, created_at)
                VALUES (\(bind: id), \(bind: space), \(bind: SessionToken.hash(code)), \(bind: actor), \(bind: maxUses),
                    \(bind: expiresAt?.milliseconds), \(bind: Timestamp.now.milliseconds))
                """)
        }
        return code
    }

    /// Joins the space of a valid invite code and counts the use (a member joining again uses
    /// nothing); 404 for an unknown, used-up or expired code, 403 when banned. Returns the space.
    func join(code: String, user: Int64) async throws -> Int64 {
        let hash = SessionToken.hash(code)
        let now = Timestamp.now.milliseconds
        return try await db.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT id, space_id, max_uses, uses, expires_at FROM space_invites WHERE code_hash = \(bind: hash)
                    \(db.dialect.rowLock(.update) ?? "")
                    """)
            else { throw Self.invalidInvite }
            let invite = try row.decode(column: "id", as: Int64.self)
            let space = try row.decode(column: "space_id", as: Int64.self)
            if try await Self.role(of: user, in: space, on: db) != nil { return space }
            if let expires = try row.decode(column: "expires_at", as: Int64?.self), expires <= now {
                throw Self.invalidInvite
            }
            if let max = try row.decode(column: "max_uses", as: Int64?.self),
                try row.decode(column: "uses", as: Int64.self) >= max
            {
                throw Self.invalidInvite
            }
            try await SpaceStore.addMember(user, to: space, on: db)
            try await db.exec("UPDATE space_invites SET uses = uses + 1 WHERE id = \(bind: invite)")
            return space
        }
    }

    /// True when `code` could be an invite code: 43 characters of base64url (some slack).
    static func isInviteCodeShaped(_ code: String) -> Bool {
        (20...64).contains(code.utf8.count) && ByteText.bytes(base64url: code) != nil
    }

    private static let invalidInvite = PlazaError(
        .notFound, "invite_invalid", "This invite is not valid: it may have expired or been used up.")
}
