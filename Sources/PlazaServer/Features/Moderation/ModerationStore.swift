import Foundation
import PlazaAPI

/// Reports and what moderators do about them. Who may see a report is decided here, in SQL:
/// admins see every report; the owners and moderators of a space see the reports whose content
/// was in their space when reported (`report_spaces`).
struct ModerationStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog
    let accounts: AccountStore
    let searchWindows: SearchWindowCache

    /// Reports one person may send per UTC day: far above honest use, a cap on a script.
    static let reportsPerDay = 50
    static let maxNoteLength = 1000
    static let maxSnapshotLength = 2000

    /// Roles that moderate a space.
    static let moderatorRoles: SQL = "('owner', 'moderator')"

    /// True when `viewer` is an admin.
    static func isAdmin(_ viewer: Int64) -> SQL {
        "EXISTS (SELECT 1 FROM users ma WHERE ma.id = \(bind: viewer) AND ma.is_admin)"
    }

    /// True when `viewer` moderates the whole instance: an admin or one of its moderators.
    static func isStaff(_ viewer: Int64) -> SQL {
        "EXISTS (SELECT 1 FROM users ma WHERE ma.id = \(bind: viewer) AND (ma.is_admin OR ma.is_moderator))"
    }

    /// True when `viewer` may see report row `r`: an admin or the instance's moderator, or a
    /// moderator of one of its spaces.
    static func canSee(report alias: String = "r", viewer: Int64) -> SQL {
        """
        (\(isStaff(viewer)) OR EXISTS (SELECT 1 FROM report_spaces rs JOIN space_members sm ON sm.space_id = rs.space_id \
        WHERE rs.report_id = \(unsafeRaw: alias).id AND sm.user_id = \(bind: viewer) AND sm.role IN \(moderatorRoles)))
        """
    }

    /// What `viewer` moderates: everything (an admin or the instance's moderator), some
    /// spaces, or nothing.
    enum Scope: Sendable, Equatable {
        case instance
        case spaces
        case none
    }

    func scope(of viewer: Int64) async throws -> Scope {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT CASE WHEN \(Self.isStaff(viewer)) THEN 2
                    WHEN EXISTS (SELECT 1 FROM space_members sm WHERE sm.user_id = \(bind: viewer) AND sm.role IN \(Self.moderatorRoles)) THEN 1
                    ELSE 0 END AS scope
                """)
        }
        switch try row?.decode(column: "scope", as: Int64.self) ?? 0 {
        case 2: return .instance
        case 1: return .spaces
        default: return .none
        }
    }

    static let notModerator = PlazaError(
        .forbidden, "not_moderator", "Only admins and moderators, and the moderators of a space, can see reports.")
    static let adminsOnly = PlazaError(.forbidden, "admins_only", "Only admins can do this.")
    static let staffOnly = PlazaError(.forbidden, "admins_only", "Only admins and moderators can do this.")

    // MARK: reporting

    /// What was reported, as the reporter could see it.
    struct Target: Sendable {
        var author: Int64
        var snapshot: String
        var spaces: [Int64]
    }

    /// The target if `reporter` may see it (else 404), with its author, text and spaces.
    static func target(_ type: ReportTargetType, id: Int64, reporter: Int64, on db: Connection) async throws -> Target {
        func spaces(ofPost post: Int64) async throws -> [Int64] {
            try await db.rows("SELECT space_id FROM post_spaces WHERE post_id = \(bind: post)").map {
                try $0.decode(column: "space_id", as: Int64.self)
            }
        }
        switch type {
        case .post:
            guard
                let row = try await db.first(
                    """
                    SELECT p.author_id, p.title, p.body FROM posts p
                    WHERE p.id = \(bind: id) AND \(Visibility.post("p", readableBy: reporter))
                    """)
            else { throw PlazaError.notFound("Post") }
            let text = [
                try row.decode(column: "title", as: String?.self), try row.decode(column: "body", as: String?.self),
            ]
            return Target(
                author: try row.decode(column: "author_id", as: Int64.self),
                snapshot: text.compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n\n"),
                spaces: try await spaces(ofPost: id))
        case .comment:
            guard
                let row = try await db.first(
                    """
                    SELECT c.author_id, c.body, c.post_id FROM comments c JOIN posts p ON p.id = c.post_id
                    WHERE c.id = \(bind: id) AND \(Visibility.comment("c", seenBy: reporter))
                    AND \(Visibility.post("p", readableBy: reporter))
                    """)
            else { throw PlazaError.notFound("Comment") }
            return Target(
                author: try row.decode(column: "author_id", as: Int64.self),
                snapshot: try row.decode(column: "body", as: String.self),
                spaces: try await spaces(ofPost: try row.decode(column: "post_id", as: Int64.self)))
        case .user:
            guard
                let row = try await db.first(
                    "SELECT u.display_name, u.bio FROM users u WHERE u.id = \(bind: id) AND \(Visibility.profile("u", seenBy: reporter))"
                )
            else { throw PlazaError.notFound("User") }
            let text = [
                try row.decode(column: "display_name", as: String.self), try row.decode(column: "bio", as: String.self),
            ]
            return Target(author: id, snapshot: text.filter { !$0.isEmpty }.joined(separator: "\n\n"), spaces: [])
        }
    }

    /// Files a report, or returns the reporter's open report on the same target (`created`
    /// false). Charged to the reporter's daily report budget when new.
    func report(
        by reporter: Int64, type: ReportTargetType, targetID: Int64, reason: ReportReason, note: String?,
        rules: [InstanceRule] = []
    ) async throws -> (report: Report, created: Bool) {
        let rulesJSON = rules.isEmpty ? nil : String(decoding: try JSONEncoder().encode(rules), as: UTF8.self)
        let id = ids.next()
        let (reportID, created) = try await db.write { db -> (Int64, Bool) in
            // One report per reporter and target at a time: their row serializes their reports.
            try await PeopleStore.lockInOrder([reporter], on: db)
            let target = try await Self.target(type, id: targetID, reporter: reporter, on: db)
            guard target.author != reporter else {
                throw PlazaError(
                    .unprocessableContent, "cannot_report_self", "You cannot report yourself or what you made.")
            }
            if let open = try await db.first(
                """
                SELECT id FROM reports WHERE reporter_id = \(bind: reporter) AND target_type = \(bind: type.rawValue)
                AND target_id = \(bind: targetID) AND state = 'open'
                """)
            {
                return (try open.decode(column: "id", as: Int64.self), false)
            }
            try await DailyUsage.charge(.report, user: reporter, cap: Self.reportsPerDay, on: db)
            try await db.exec(
                """
                INSERT INTO reports (id, reporter_id, target_type, target_id, target_user_id, reason, rules, note, snapshot, state, created_at)
                VALUES (\(bind: id), \(bind: reporter), \(bind: type.rawValue), \(bind: targetID), \(bind: target.author),
                    \(bind: reason.rawValue), \(bind: rulesJSON), \(bind: note),
                    \(bind: String(target.snapshot.prefix(Self.maxSnapshotLength))), 'open', \(bind: Timestamp.now.milliseconds))
                """)
            for space in target.spaces {
                try await db.exec(
                    "INSERT INTO report_spaces (report_id, space_id) VALUES (\(bind: id), \(bind: space))")
            }
            return (id, true)
        }
        guard let report = try await db.read({ db in try await Self.reports(ids: [reportID], on: db) }).first else {
            throw PlazaError.notFound("Report")
        }
        return (report, created)
    }

    // MARK: the queue

    /// Reports in `state`, newest first, that `viewer` moderates: all for an admin, those about
    /// their spaces for a space's moderator; 403 for anyone else.
    func reports(state: ReportState, page: PageRequest, viewer: Int64) async throws -> Page<Report> {
        let scope = try await scope(of: viewer)
        guard scope != .none else { throw Self.notModerator }
        let sql = Self.queueSQL(state: state, page: page, viewer: viewer, scope: scope)
        return try await db.read { db in
            let (rows, next) = try page.split(try await db.rows(sql)) { try Cursor(row: $0, time: "created_at") }
            let ids = try rows.map { try $0.decode(column: "id", as: Int64.self) }
            return Page(items: try await Self.reports(ids: ids, on: db), nextCursor: next)
        }
    }

    /// The queue's keyset query: an admin or moderator walks `reports_queue` (state, id); a space's
    /// moderator their spaces' reports through `report_spaces_space` (space_id, report_id).
    static func queueSQL(state: ReportState, page: PageRequest, viewer: Int64, scope: Scope) -> SQL {
        var sql: SQL = "SELECT r.id, r.created_at FROM reports r WHERE r.state = \(bind: state.rawValue)"
        if let cursor = page.cursor { sql += " AND r.id < \(bind: cursor.id)" }
        if scope != .instance {
            sql += """
                 AND r.id IN (SELECT rs.report_id FROM report_spaces rs JOIN space_members sm ON sm.space_id = rs.space_id \
                WHERE sm.user_id = \(bind: viewer) AND sm.role IN \(moderatorRoles))
                """
        }
        sql += " ORDER BY r.id DESC LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    /// One report if `viewer` moderates it, else nil.
    func report(id: Int64, viewer: Int64) async throws -> Report? {
        try await db.read { db in
            guard
                try await db.first(
                    "SELECT r.id FROM reports r WHERE r.id = \(bind: id) AND \(Self.canSee(viewer: viewer))") != nil
            else { return nil }
            return try await Self.reports(ids: [id], on: db).first
        }
    }

    private static let reportColumns: SQL = """
        r.id, r.target_type, r.target_id, r.reason, r.rules, r.note, r.snapshot, r.state, r.action, r.resolution_note,
        r.resolved_at, r.created_at, r.target_user_id, r.reporter_id, r.resolved_by,
        tu.username AS tu_username, tu.display_name AS tu_display_name, tu.avatar AS tu_avatar,
        ru.username AS ru_username, ru.display_name AS ru_display_name, ru.avatar AS ru_avatar,
        mu.username AS mu_username, mu.display_name AS mu_display_name, mu.avatar AS mu_avatar
        """

    /// The reports with these ids, in this order (no authorisation: callers checked it).
    static func reports(ids: [Int64], on db: Connection) async throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.rows(
            """
            SELECT \(reportColumns) FROM reports r
            LEFT JOIN users tu ON tu.id = r.target_user_id LEFT JOIN users ru ON ru.id = r.reporter_id
            LEFT JOIN users mu ON mu.id = r.resolved_by
            WHERE r.id IN (\(binds: ids))
            """)
        var slugs: [Int64: [String]] = [:]
        for row in try await db.rows(
            """
            SELECT rs.report_id, s.slug FROM report_spaces rs JOIN spaces s ON s.id = rs.space_id
            WHERE rs.report_id IN (\(binds: ids)) ORDER BY s.slug
            """)
        {
            slugs[try row.decode(column: "report_id", as: Int64.self), default: []].append(
                try row.decode(column: "slug", as: String.self))
        }
        var byID: [Int64: Report] = [:]
        for row in rows {
            let id = try row.decode(column: "id", as: Int64.self)
            byID[id] = try report(row, spaces: slugs[id] ?? [])
        }
        return ids.compactMap { byID[$0] }
    }

    /// The person whose id is in `column` and whose summary columns are `<prefix>_username`,
    /// `<prefix>_display_name` and `<prefix>_avatar` (a LEFT JOIN): nil when there is none.
    static func person(_ row: Row, id column: String, prefix: String) throws -> UserSummary? {
        guard let id = try row.decode(column: column, as: Int64?.self),
            let username = try row.decode(column: "\(prefix)_username", as: String?.self)
        else { return nil }
        return UserSummary(
            id: String(id), username: username,
            displayName: try row.decode(column: "\(prefix)_display_name", as: String?.self) ?? username,
            avatar: MediaRecord.list(try row.decode(column: "\(prefix)_avatar", as: String?.self)).first?.media)
    }

    private static func report(_ row: Row, spaces: [String]) throws -> Report {
        Report(
            id: String(try row.decode(column: "id", as: Int64.self)),
            targetType: ReportTargetType(rawValue: try row.decode(column: "target_type", as: String.self)) ?? .post,
            targetId: String(try row.decode(column: "target_id", as: Int64.self)),
            targetUser: try person(row, id: "target_user_id", prefix: "tu"),
            snapshot: try row.decode(column: "snapshot", as: String?.self),
            reason: ReportReason(rawValue: try row.decode(column: "reason", as: String.self)) ?? .other,
            note: try row.decode(column: "note", as: String?.self),
            reporter: try person(row, id: "reporter_id", prefix: "ru"),
            spaces: spaces,
            state: ReportState(rawValue: try row.decode(column: "state", as: String.self)) ?? .open,
            action: try row.decode(column: "action", as: String?.self).flatMap(ReportAction.init(rawValue:)),
            resolvedBy: try person(row, id: "resolved_by", prefix: "mu"),
            resolutionNote: try row.decode(column: "resolution_note", as: String?.self),
            resolvedAt: try row.decode(column: "resolved_at", as: Int64?.self).map(Timestamp.init(milliseconds:)),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            rules: try row.decode(column: "rules", as: String?.self).flatMap {
                try? JSONDecoder().decode([InstanceRule].self, from: Data($0.utf8))
            } ?? [])
    }
}

extension ModerationStore {
    /// The audit log, newest first; admins only (403).
    func audit(page: PageRequest, viewer: Int64) async throws -> Page<AuditEntry> {
        guard try await scope(of: viewer) == .instance else { throw Self.staffOnly }
        let sql = AuditLog.listSQL(page: page)
        return try await db.read { db in
            let (rows, next) = try page.split(try await db.rows(sql)) { try Cursor(row: $0, time: "created_at") }
            return Page(items: try rows.map(AuditLog.entry), nextCursor: next)
        }
    }

    /// Something a person made, as the moderation page lists it.
    struct RecentItem: Sendable {
        var kind: ReportTargetType
        var id: Int64
        /// The post it is or is on.
        var post: Int64
        var text: String
        var createdAt: Timestamp
    }

    /// A person's latest posts and comments for an admin, **bypassing visibility** (suspended
    /// people, audiences, blocks): only for the moderation page, and empty unless `viewer` is an
    /// admin (checked in the query).
    func unfilteredRecentContent(of user: Int64, viewer: Int64, limit: Int = 5) async throws -> [RecentItem] {
        try await db.read { db in
            let posts = try await db.rows(
                """
                SELECT p.id, p.title, p.body, p.created_at FROM posts p
                WHERE p.author_id = \(bind: user) AND \(Self.isStaff(viewer))
                ORDER BY p.created_at DESC, p.id DESC LIMIT \(bind: limit)
                """
            ).map { row in
                let id = try row.decode(column: "id", as: Int64.self)
                let text = [
                    try row.decode(column: "title", as: String?.self), try row.decode(column: "body", as: String?.self),
                ]
                return RecentItem(
                    kind: .post, id: id, post: id, text: text.compactMap { $0 }.joined(separator: " — "),
                    createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
            }
            let comments = try await db.rows(
                """
                SELECT c.id, c.post_id, c.body, c.created_at FROM comments c
                WHERE c.author_id = \(bind: user) AND \(Self.isStaff(viewer))
                ORDER BY c.created_at DESC, c.id DESC LIMIT \(bind: limit)
                """
            ).map { row in
                RecentItem(
                    kind: .comment, id: try row.decode(column: "id", as: Int64.self),
                    post: try row.decode(column: "post_id", as: Int64.self),
                    text: try row.decode(column: "body", as: String.self),
                    createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
            }
            return (posts + comments).sorted { $0.createdAt.milliseconds > $1.createdAt.milliseconds }
        }
    }
}

extension ModerationStore {
    /// The posts these comments are on (ids only, for links on the moderation page).
    func posts(ofComments comments: [Int64]) async throws -> [Int64: Int64] {
        guard !comments.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows("SELECT id, post_id FROM comments WHERE id IN (\(binds: comments))")
        }
        var result: [Int64: Int64] = [:]
        for row in rows {
            result[try row.decode(column: "id", as: Int64.self)] = try row.decode(column: "post_id", as: Int64.self)
        }
        return result
    }
}
