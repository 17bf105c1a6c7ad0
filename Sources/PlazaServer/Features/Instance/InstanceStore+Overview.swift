import Foundation
import PlazaAPI

/// When this server process started serving (set by `buildApplication`).
enum ProcessStart {
    nonisolated(unsafe) private static var time: Timestamp?
    private static let lock = NSLock()

    static func mark() { lock.withLock { if time == nil { time = .now } } }
    static var startedAt: Timestamp { lock.withLock { time ?? .now } }
}

/// The admins' overview of the instance and their list of people, with the changes only they
/// make: someone's role, and turning off someone's two-factor sign-in.
extension InstanceStore {
    static let topStorageCount = 10

    func overview(viewer: Int64) async throws -> AdminOverview {
        let cap = AdminOverview.countCap
        let kind = db.dialect.kind
        return try await db.read { db in
            try await Self.requireAdmin(viewer, on: db)
            func count(_ from: SQL) async throws -> Int {
                Int(
                    try await db.first("SELECT count(*) AS n FROM (SELECT 1 FROM \(from) LIMIT \(bind: cap)) AS q")?
                        .decode(column: "n", as: Int64.self) ?? 0)
            }
            let size: SQL =
                kind == .sqlite
                ? "SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()"
                : "SELECT pg_database_size(current_database()) AS n"
            let people = try await db.first(
                """
                SELECT count(*) AS total, CAST(COALESCE(SUM(CASE WHEN is_admin THEN 1 ELSE 0 END), 0) AS BIGINT) AS admins,
                    CAST(COALESCE(SUM(media_bytes), 0) AS BIGINT) AS bytes FROM users
                """)
            let top = try await db.rows(
                """
                SELECT id AS user_id, username AS user_username, display_name AS user_display_name, avatar AS user_avatar,
                    media_bytes FROM users WHERE media_bytes > 0 ORDER BY media_bytes DESC, id LIMIT \(bind: Self.topStorageCount)
                """)
            return AdminOverview(
                version: PlazaVersion.description, startedAt: ProcessStart.startedAt, database: kind.rawValue,
                databaseBytes: try await db.first(size)?.decode(column: "n", as: Int64.self) ?? 0,
                people: .init(
                    total: Int(try people?.decode(column: "total", as: Int64.self) ?? 0),
                    admins: Int(try people?.decode(column: "admins", as: Int64.self) ?? 0),
                    pending: try await count("users WHERE pending_since IS NOT NULL"),
                    suspended: try await count("users WHERE suspended_at IS NOT NULL AND pending_since IS NULL")),
                storageBytes: try people?.decode(column: "bytes", as: Int64.self) ?? 0,
                topStorage: try top.compactMap { row in
                    try ModerationStore.person(row, id: "user_id", prefix: "user").map {
                        .init(user: $0, bytes: try row.decode(column: "media_bytes", as: Int64.self))
                    }
                },
                mail: .init(
                    pending: try await count("mail_outbox WHERE state = 'pending'"),
                    failed: try await count("mail_outbox WHERE state = 'failed'")),
                push: .init(
                    pending: try await count("push_deliveries WHERE state = 'pending'"),
                    failed: try await count("push_deliveries WHERE state = 'failed'")),
                videos: .init(
                    pending: try await count("media WHERE state = 'processing'"),
                    failed: try await count("media WHERE state = 'failed'")),
                openReports: try await count("reports WHERE state = 'open'"))
        }
    }

    /// People, newest first (in pages), or the first page of those whose username starts with
    /// `query` (admins only, 403).
    func people(query: String?, page: PageRequest, viewer: Int64) async throws -> Page<AdminUser> {
        let prefix = query?.trimmingCharacters(in: .whitespaces).lowercased().trimmingPrefix("@") ?? ""
        return try await db.read { db in
            try await Self.requireAdmin(viewer, on: db)
            var sql: SQL = """
                SELECT u.id, u.id AS user_id, u.username AS user_username, u.display_name AS user_display_name,
                    u.avatar AS user_avatar, u.email, u.is_admin, u.is_moderator, u.suspended_at, u.pending_since, u.media_bytes,
                    u.created_at, EXISTS (SELECT 1 FROM two_factor t WHERE t.user_id = u.id AND t.confirmed_at IS NOT NULL) AS two_factor
                FROM users u
                """
            if prefix.isEmpty {
                if let cursor = page.cursor { sql += " WHERE u.id < \(bind: cursor.id)" }
                sql += " ORDER BY u.id DESC"
            } else {
                // A range over username_key's index: the names from the prefix to the last one with it.
                sql +=
                    " WHERE u.username_key >= \(bind: String(prefix)) AND u.username_key < \(bind: prefix + "\u{10FFFF}")"
                sql += " ORDER BY u.username_key"
            }
            sql += " LIMIT \(bind: page.fetchLimit)"
            let (rows, next) = try page.split(try await db.rows(sql)) { try Cursor(row: $0, time: "created_at") }
            return Page(items: try rows.map(Self.adminUser), nextCursor: prefix.isEmpty ? next : nil)
        }
    }

    private static func adminUser(_ row: Row) throws -> AdminUser {
        guard let user = try ModerationStore.person(row, id: "user_id", prefix: "user") else {
            throw PlazaError.notFound("User")
        }
        return AdminUser(
            user: user, email: try row.decode(column: "email", as: String.self),
            role: try Self.role(row).rawValue,
            suspended: try row.decode(column: "suspended_at", as: Int64?.self) != nil
                && (try row.decode(column: "pending_since", as: Int64?.self)) == nil,
            pending: try row.decode(column: "pending_since", as: Int64?.self) != nil,
            twoFactor: try row.decode(column: "two_factor", as: Bool.self),
            storageBytes: try row.decode(column: "media_bytes", as: Int64.self),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    /// Makes someone an admin or a member (admins only; not oneself, so an instance keeps an admin).
    func setRole(of username: String, to role: String, by admin: Int64) async throws {
        guard let role = InstanceRole(rawValue: role) else {
            throw PlazaError.invalid("role", "role must be admin, moderator or member.")
        }
        try await changeUser(username, by: admin, action: "user.role", note: role.rawValue) { user, db in
            guard user != admin else {
                throw PlazaError.invalid("role", "Admins do not change their own role; another admin does.")
            }
            try await db.exec("UPDATE users SET \(Self.assignment(role)) WHERE id = \(bind: user)")
        }
    }

    /// The columns that make someone `role`.
    static func assignment(_ role: InstanceRole) -> SQL {
        "is_admin = \(bind: role == .admin), is_moderator = \(bind: role == .moderator)"
    }

    /// The role of a `users` row read with `is_admin` and `is_moderator`.
    static func role(_ row: Row) throws -> InstanceRole {
        if try row.decode(column: "is_admin", as: Bool.self) { return .admin }
        return try row.decode(column: "is_moderator", as: Bool.self) ? .moderator : .member
    }

    /// Turns off someone's two-factor sign-in, for a person who lost their app and their recovery
    /// codes (admins only), as `plaza user two-factor-off` does.
    func turnOffTwoFactor(of username: String, by admin: Int64) async throws {
        try await changeUser(username, by: admin, action: "user.two_factor_off", note: nil) { user, db in
            try await db.exec("DELETE FROM two_factor WHERE user_id = \(bind: user)")
            try await db.exec("DELETE FROM recovery_codes WHERE user_id = \(bind: user)")
            try await db.exec("DELETE FROM login_challenges WHERE user_id = \(bind: user)")
        }
    }

    /// In one transaction: the admin check, the person by name, `change`, its audit entry.
    private func changeUser(
        _ username: String, by admin: Int64, action: String, note: String?,
        _ change: @escaping @Sendable (Int64, Connection) async throws -> Void
    ) async throws {
        let key = username.lowercased()
        guard key.utf8.count <= 30 else { throw PlazaError.notFound("User") }
        let ids = ids
        try await db.write { db in
            try await Self.requireAdmin(admin, on: db)
            guard
                let user = try await db.first("SELECT id FROM users WHERE username_key = \(bind: key)")?.decode(
                    column: "id", as: Int64.self)
            else { throw PlazaError.notFound("User") }
            try await change(user, db)
            try await AuditLog.record(
                .init(actor: admin, action: action, targetType: "user", targetID: user, note: note), ids: ids, on: db)
        }
    }
}
