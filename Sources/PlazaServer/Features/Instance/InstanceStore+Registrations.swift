import Foundation
import PlazaAPI

/// Sign-ups that wait for an admin, and invite links.
extension InstanceStore {
    static let noSuchSignUp = PlazaError(.notFound, "not_found", "No sign-up is waiting under that name.")

    /// The sign-ups waiting for approval, oldest first (admins only, 403).
    func pendingRegistrations(page: PageRequest, viewer: Int64) async throws -> Page<RegistrationRequest> {
        try await db.read { db in
            try await Self.requireAdmin(viewer, on: db)
            var sql: SQL =
                "SELECT id, username, email, sign_up_reason, pending_since FROM users WHERE pending_since IS NOT NULL"
            if let cursor = page.cursor {
                sql +=
                    " AND (pending_since > \(bind: cursor.time) OR (pending_since = \(bind: cursor.time) AND id > \(bind: cursor.id)))"
            }
            sql += " ORDER BY pending_since, id LIMIT \(bind: page.fetchLimit)"
            let (rows, next) = try page.split(try await db.rows(sql)) { try Cursor(row: $0, time: "pending_since") }
            return Page(
                items: try rows.map { row in
                    RegistrationRequest(
                        username: try row.decode(column: "username", as: String.self),
                        email: try row.decode(column: "email", as: String.self),
                        reason: try row.decode(column: "sign_up_reason", as: String?.self) ?? "",
                        createdAt: Timestamp(milliseconds: try row.decode(column: "pending_since", as: Int64.self)))
                }, nextCursor: next)
        }
    }

    /// Approves (`true`: the person can sign in and is seen from now on) or rejects (`false`: the
    /// account is deleted, its name free again) a waiting sign-up; mails the person the decision.
    func decide(_ username: String, approve: Bool, by admin: Int64) async throws {
        let key = username.lowercased()
        guard key.utf8.count <= 30 else { throw Self.noSuchSignUp }
        let ids = ids
        let templates = emails.templates
        let outbox = emails.outbox
        try await db.write { db in
            try await Self.requireAdmin(admin, on: db)
            let decided: SQL =
                approve
                ? "UPDATE users SET suspended_at = NULL, pending_since = NULL, sign_up_reason = NULL"
                : "DELETE FROM users"
            guard
                let row = try await db.first(
                    "\(decided) WHERE username_key = \(bind: key) AND pending_since IS NOT NULL RETURNING id, username, email, display_name, preferences"
                )
            else { throw Self.noSuchSignUp }
            let name = try row.decode(column: "username", as: String.self)
            try await AuditLog.record(
                .init(
                    actor: admin, action: approve ? "user.approve" : "user.reject", targetType: "user",
                    targetID: try row.decode(column: "id", as: Int64.self), note: approve ? nil : name),
                ids: ids, on: db)
            let email = try row.decode(column: "email", as: String.self)
            if !email.isEmpty {
                try await outbox.enqueue(
                    templates.registrationDecided(
                        to: email, name: try row.decode(column: "display_name", as: String.self), approved: approve,
                        language: Language(preferences: try row.decode(column: "preferences", as: String.self))),
                    on: db)
            }
        }
        emails.signal.wake()
    }

    /// Tells every admin with an address that `username` waits for approval.
    func notifyAdmins(ofSignUp username: String, reason: String) async throws {
        let templates = emails.templates
        let outbox = emails.outbox
        try await db.write { db in
            let admins = try await db.rows(
                "SELECT email, display_name, preferences FROM users WHERE is_admin AND suspended_at IS NULL AND email <> ''"
            )
            for admin in admins {
                try await outbox.enqueue(
                    templates.signUpWaiting(
                        to: try admin.decode(column: "email", as: String.self),
                        name: try admin.decode(column: "display_name", as: String.self), username: username,
                        reason: reason,
                        language: Language(preferences: try admin.decode(column: "preferences", as: String.self))),
                    on: db)
            }
        }
        emails.signal.wake()
    }

    // MARK: invites

    /// Whose invites a request is about: every one (the admins' pages, admins only), or the
    /// person's own (`/invites`: admins always, members when the admins allow it).
    enum InviteScope: Sendable {
        case everyone, own
    }

    /// A new invite link: `maxUses` sign-ups at most (none: no limit), until `expiresAt` (none:
    /// no end). A member's invite has limits of its own (`maxMemberInvite…`).
    func createInvite(_ request: CreateInviteRequest, by person: Int64, scope: InviteScope = .everyone)
        async throws -> InstanceInvite
    {
        if let uses = request.maxUses, !(1...Self.maxInviteUses).contains(uses) {
            throw PlazaError.invalid("maxUses", "maxUses must be from 1 to \(Self.maxInviteUses).")
        }
        let now = Timestamp.now.milliseconds
        if let end = request.expiresAt, end.milliseconds <= now {
            throw PlazaError.invalid("expiresAt", "expiresAt must be in the future.")
        }
        let membersMayInvite = scope == .own ? try await info().membersMayInvite : false
        let id = ids.next()
        let code = ByteText.base64url(ByteText.randomBytes(9))
        let ids = ids
        try await db.write { db in
            var request = request
            if scope == .everyone {
                try await Self.requireAdmin(person, on: db)
            } else if try await !Self.isAdmin(person, on: db) {
                request = try await Self.memberInvite(request, by: person, allowed: membersMayInvite, now: now, on: db)
            }
            try await db.exec(
                """
                INSERT INTO invites (id, code, created_by, max_uses, uses, expires_at, created_at)
                VALUES (\(bind: id), \(bind: code), \(bind: person), \(bind: request.maxUses.map(Int64.init)), 0,
                    \(bind: request.expiresAt?.milliseconds), \(bind: now))
                """)
            try await AuditLog.record(
                .init(actor: person, action: "invite.create", targetType: "invite", targetID: id), ids: ids, on: db)
        }
        guard
            let invite = try await invites(
                page: PageRequest(limit: 1, cursor: nil), viewer: person, scope: .own, only: id
            ).items.first
        else { throw PlazaError.notFound("Invite") }
        return invite
    }

    func isAdmin(_ person: Int64) async throws -> Bool {
        try await db.read { try await Self.isAdmin(person, on: $0) }
    }

    /// Whether `person` may make invites of their own (`POST /invites`): admins always, members
    /// who are not suspended when the admins allow it.
    func mayInvite(_ person: Int64) async throws -> Bool {
        let allowed = try await info().membersMayInvite
        return try await db.read { db in
            if try await Self.isAdmin(person, on: db) { return true }
            guard allowed else { return false }
            return try await db.first(
                "SELECT 1 AS ok FROM users WHERE id = \(bind: person) AND suspended_at IS NULL") != nil
        }
    }

    /// A member's invite as it may be: refused when the admins do not let members invite, when
    /// the person is suspended or already has `maxMemberInvites` live invites; its uses and days
    /// within the members' limits (10 uses and a week when not asked for).
    private static func memberInvite(
        _ request: CreateInviteRequest, by person: Int64, allowed: Bool, now: Int64, on db: Connection
    ) async throws -> CreateInviteRequest {
        // The person's row first: their invites are counted and made one request at a time.
        try await PeopleStore.lockInOrder([person], on: db)
        guard allowed,
            try await db.first("SELECT 1 AS ok FROM users WHERE id = \(bind: person) AND suspended_at IS NULL") != nil
        else { throw invitesOff }
        // A day's slack: "30 days" from a browser whose clock runs a little ahead is still 30.
        let maxEnd = now + Int64(maxMemberInviteDays + 1) * 86_400_000
        var invite = request
        invite.maxUses = request.maxUses ?? 10
        invite.expiresAt = request.expiresAt ?? Timestamp(milliseconds: now + 7 * 86_400_000)
        if let uses = invite.maxUses, uses > maxMemberInviteUses {
            throw PlazaError.invalid("maxUses", "A member's invite works for at most \(maxMemberInviteUses) people.")
        }
        if let end = invite.expiresAt, end.milliseconds > maxEnd {
            throw PlazaError.invalid("expiresAt", "A member's invite works for at most \(maxMemberInviteDays) days.")
        }
        let live =
            try await db.first(
                """
                SELECT COUNT(*) AS n FROM invites WHERE created_by = \(bind: person)
                    AND (max_uses IS NULL OR uses < max_uses) AND (expires_at IS NULL OR expires_at > \(bind: now))
                """)?.decode(column: "n", as: Int64.self) ?? 0
        guard live < maxMemberInvites else {
            throw PlazaError(
                .forbidden, "too_many_invites",
                "You have \(maxMemberInvites) invites that still work; revoke one to make another.")
        }
        return invite
    }

    /// Invite links, newest first, with how often each was used: every one (admins only, 403)
    /// or the viewer's own.
    func invites(page: PageRequest, viewer: Int64, scope: InviteScope = .everyone, only: Int64? = nil)
        async throws -> Page<InstanceInvite>
    {
        try await db.read { db in
            if scope == .everyone { try await Self.requireAdmin(viewer, on: db) }
            var sql: SQL = """
                SELECT i.id, i.code, i.max_uses, i.uses, i.expires_at, i.created_at, i.created_by,
                    u.username AS creator_username, u.display_name AS creator_display_name, u.avatar AS creator_avatar
                FROM invites i LEFT JOIN users u ON u.id = i.created_by WHERE 1 = 1
                """
            if scope == .own { sql += " AND i.created_by = \(bind: viewer)" }
            if let only {
                sql += " AND i.id = \(bind: only)"
            } else if let cursor = page.cursor {
                sql += " AND i.id < \(bind: cursor.id)"
            }
            sql += " ORDER BY i.id DESC LIMIT \(bind: page.fetchLimit)"
            let (rows, next) = try page.split(try await db.rows(sql)) { try Cursor(row: $0, time: "created_at") }
            return Page(items: try rows.map(invite), nextCursor: next)
        }
    }

    private func invite(_ row: Row) throws -> InstanceInvite {
        let code = try row.decode(column: "code", as: String.self)
        return InstanceInvite(
            code: code, url: "\(baseURL)/signup?invite=\(code)",
            maxUses: try row.decode(column: "max_uses", as: Int64?.self).map(Int.init),
            uses: Int(try row.decode(column: "uses", as: Int64.self)),
            expiresAt: try row.decode(column: "expires_at", as: Int64?.self).map(Timestamp.init(milliseconds:)),
            createdBy: try ModerationStore.person(row, id: "created_by", prefix: "creator"),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    /// Revokes an invite: any (admins only) or one's own; its link signs nobody up any more.
    func revokeInvite(_ code: String, by person: Int64, scope: InviteScope = .everyone) async throws {
        guard code.utf8.count <= Self.maxInviteCode else { throw PlazaError.notFound("Invite") }
        let ids = ids
        try await db.write { db in
            var sql: SQL = "DELETE FROM invites WHERE code = \(bind: code)"
            if scope == .everyone {
                try await Self.requireAdmin(person, on: db)
            } else {
                sql += " AND created_by = \(bind: person)"
            }
            guard
                let id = try await db.first("\(sql) RETURNING id")?.decode(column: "id", as: Int64.self)
            else { throw PlazaError.notFound("Invite") }
            try await AuditLog.record(
                .init(actor: person, action: "invite.revoke", targetType: "invite", targetID: id), ids: ids, on: db)
        }
    }
}
