import Foundation
import PlazaAPI
import SQLKit

/// Sign-ups that wait for an admin, and invite links.
extension InstanceStore {
    static let noSuchSignUp = PlazaError(.notFound, "not_found", "No sign-up is waiting under that name.")

    /// The sign-ups waiting for approval, oldest first (admins only, 403).
    func pendingRegistrations(page: PageRequest, viewer: Int64) async throws -> Page<RegistrationRequest> {
        try await db.read { db in
            try await Self.requireAdmin(viewer, on: db)
            var sql: SQLQueryString =
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
            let decided: SQLQueryString =
                approve
                ? "UPDATE users SET suspended_at = NULL, pending_since = NULL, sign_up_reason = NULL"
                : "DELETE FROM users"
            guard
                let row = try await db.first(
                    "\(decided) WHERE username_key = \(bind: key) AND pending_since IS NOT NULL RETURNING id, username, email, display_name"
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
                        to: email, name: try row.decode(column: "display_name", as: String.self), approved: approve),
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
                "SELECT email, display_name FROM users WHERE is_admin AND suspended_at IS NULL AND email <> ''")
            for admin in admins {
                try await outbox.enqueue(
                    templates.signUpWaiting(
                        to: try admin.decode(column: "email", as: String.self),
                        name: try admin.decode(column: "display_name", as: String.self), username: username,
                        reason: reason), on: db)
            }
        }
        emails.signal.wake()
    }

    // MARK: invites

    /// A new invite link (admins only): `maxUses` sign-ups at most (none: no limit), until
    /// `expiresAt` (none: no end).
    func createInvite(_ request: CreateInviteRequest, by admin: Int64) async throws -> InstanceInvite {
        if let uses = request.maxUses, !(1...Self.maxInviteUses).contains(uses) {
            throw PlazaError.invalid("maxUses", "maxUses must be from 1 to \(Self.maxInviteUses).")
        }
        let now = Timestamp.now.milliseconds
        if let end = request.expiresAt, end.milliseconds <= now {
            throw PlazaError.invalid("expiresAt", "expiresAt must be in the future.")
        }
        let id = ids.next()
        let code = ByteText.base64url(ByteText.randomBytes(9))
        let ids = ids
        try await db.write { db in
            try await Self.requireAdmin(admin, on: db)
            try await db.exec(
                """
                INSERT INTO invites (id, code, created_by, max_uses, uses, expires_at, created_at)
                VALUES (\(bind: id), \(bind: code), \(bind: admin), \(bind: request.maxUses.map(Int64.init)), 0,
                    \(bind: request.expiresAt?.milliseconds), \(bind: now))
                """)
            try await AuditLog.record(
                .init(actor: admin, action: "invite.create", targetType: "invite", targetID: id), ids: ids, on: db)
        }
        guard
            let invite = try await invites(page: PageRequest(limit: 1, cursor: nil), viewer: admin, only: id).items
                .first
        else { throw PlazaError.notFound("Invite") }
        return invite
    }

    /// InstanceInvite links, newest first, with how often each was used (admins only, 403).
    func invites(page: PageRequest, viewer: Int64, only: Int64? = nil) async throws -> Page<InstanceInvite> {
        try await db.read { db in
            try await Self.requireAdmin(viewer, on: db)
            var sql: SQLQueryString = """
                SELECT i.id, i.code, i.max_uses, i.uses, i.expires_at, i.created_at, i.created_by,
                    u.username AS creator_username, u.display_name AS creator_display_name, u.avatar AS creator_avatar
                FROM invites i LEFT JOIN users u ON u.id = i.created_by
                """
            if let only {
                sql += " WHERE i.id = \(bind: only)"
            } else if let cursor = page.cursor {
                sql += " WHERE i.id < \(bind: cursor.id)"
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

    /// Revokes an invite (admins only): its link signs nobody up any more.
    func revokeInvite(_ code: String, by admin: Int64) async throws {
        guard code.utf8.count <= 64 else { throw PlazaError.notFound("Invite") }
        let ids = ids
        try await db.write { db in
            try await Self.requireAdmin(admin, on: db)
            guard
                let id = try await db.first("DELETE FROM invites WHERE code = \(bind: code) RETURNING id")?.decode(
                    column: "id", as: Int64.self)
            else { throw PlazaError.notFound("Invite") }
            try await AuditLog.record(
                .init(actor: admin, action: "invite.revoke", targetType: "invite", targetID: id), ids: ids, on: db)
        }
    }
}
