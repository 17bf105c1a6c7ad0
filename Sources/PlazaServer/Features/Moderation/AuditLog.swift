import PlazaAPI

/// Who did what: every moderation action writes one line, in the transaction that acts.
enum AuditLog {
    struct Entry: Sendable {
        var actor: Int64
        /// `<target>.<verb>`, e.g. `report.dismiss`, `post.remove`, `user.suspend`, `space.ban`.
        var action: String
        var targetType: String
        var targetID: Int64
        var space: Int64? = nil
        var report: Int64? = nil
        var note: String? = nil
    }

    static func record(_ entry: Entry, ids: IDGenerator, on db: Connection) async throws {
        try await db.exec(
            """
            INSERT INTO audit_log (id, actor_id, action, target_type, target_id, space_id, report_id, note, created_at)
            VALUES (\(bind: ids.next()), \(bind: entry.actor), \(bind: entry.action), \(bind: entry.targetType),
                \(bind: entry.targetID), \(bind: entry.space), \(bind: entry.report), \(bind: entry.note),
                \(bind: Timestamp.now.milliseconds))
            """)
    }
}

extension AuditLog {
    /// The log, newest first (ids are time-ordered), walking its primary key.
    static func listSQL(page: PageRequest) -> SQL {
        var sql: SQL = """
            SELECT a.id, a.actor_id, a.action, a.target_type, a.target_id, a.report_id, a.note, a.created_at,
                u.username AS actor_username, u.display_name AS actor_display_name, u.avatar AS actor_avatar,
                t.id AS target_user_id, t.username AS target_username, t.display_name AS target_display_name,
                t.avatar AS target_avatar, s.slug AS space_slug
            FROM audit_log a LEFT JOIN users u ON u.id = a.actor_id
            LEFT JOIN users t ON a.target_type = 'user' AND t.id = a.target_id
            LEFT JOIN spaces s ON s.id = a.space_id
            """
        if let cursor = page.cursor { sql += " WHERE a.id < \(bind: cursor.id)" }
        sql += " ORDER BY a.id DESC LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    static func entry(_ row: Row) throws -> AuditEntry {
        AuditEntry(
            id: String(try row.decode(column: "id", as: Int64.self)),
            actor: try ModerationStore.person(row, id: "actor_id", prefix: "actor"),
            action: try row.decode(column: "action", as: String.self),
            targetType: try row.decode(column: "target_type", as: String.self),
            targetId: String(try row.decode(column: "target_id", as: Int64.self)),
            targetUser: try ModerationStore.person(row, id: "target_user_id", prefix: "target"),
            space: try row.decode(column: "space_slug", as: String?.self),
            reportId: try row.decode(column: "report_id", as: Int64?.self).map { String($0) },
            note: try row.decode(column: "note", as: String?.self),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }
}
