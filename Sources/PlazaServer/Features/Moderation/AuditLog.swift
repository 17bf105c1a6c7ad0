import PlazaAPI
import SQLKit

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
