import PlazaAPI

/// What moderators do: resolve reports (dismiss, remove, suspend) and suspend or reinstate
/// people. Each action writes the audit log in the transaction that acts.
///
/// Lock order (PostgreSQL): the open reports on the target, then the post (as `PostStore.delete`
/// and `CommentStore.delete` take it), then every person whose row changes (counters, unread
/// counts, a suspension) in one `PeopleStore.lockInOrder`.
extension ModerationStore {
    static let alreadyResolved = PlazaError(.conflict, "report_resolved", "This report has been resolved already.")

    /// Resolves the report (and every other open report on the same target) with `action`,
    /// notifies the reporters, and returns it with the media of a deleted post (whose files the
    /// caller deletes). 404 when `moderator` may not see it.
    func resolve(report id: Int64, by moderator: Int64, action: ReportAction, note: String?) async throws
        -> (report: Report, media: [Int64])
    {
        let ids = ids
        let (media, suspended) = try await events.write { db -> ([Int64], Int64?) in
            let claim = try await Self.claim(report: id, by: moderator, on: db)
            let outcome = try await Self.act(action, on: claim, by: moderator, note: note, on: db)
            try await db.exec(
                """
                UPDATE reports SET state = 'resolved', action = \(bind: action.rawValue), resolved_by = \(bind: moderator),
                    resolution_note = \(bind: note), resolved_at = \(bind: Timestamp.now.milliseconds)
                WHERE id IN (\(binds: claim.reports))
                """)
            for entry in outcome.entries { try await AuditLog.record(entry, ids: ids, on: db) }
            try await NotificationStore.notify(
                claim.reporters.map {
                    NotificationStore.New(
                        kind: .reportResolved, recipient: $0.user, actor: moderator, groupKey: "report:\($0.report)")
                }, ids: ids, on: db)
            return (outcome.media, outcome.suspended)
        }
        if let suspended { accounts.forgetSessions(of: suspended) }
        if action != .dismiss { searchWindows.clear() }
        guard let report = try await db.read({ db in try await Self.reports(ids: [id], on: db).first }) else {
            throw PlazaError.notFound("Report")
        }
        return (report, media)
    }

    /// An open report a moderator may act on, with every open report on the same target
    /// (locked, PostgreSQL) and their reporters.
    private struct Claim {
        var id: Int64
        var typeText: String
        var type: ReportTargetType
        var target: Int64
        var targetUser: Int64?
        var admin: Bool
        /// The spaces a space's moderator acts in: those they moderate among the report's.
        var spaces: [Int64]
        var reports: [Int64]
        var reporters: [(report: Int64, user: Int64)]
        var people: [Int64] { reporters.map(\.user) }
    }

    /// What a resolution does: its audit entries, the media of a deleted post, a suspended person.
    private struct Outcome {
        var entries: [AuditLog.Entry] = []
        var media: [Int64] = []
        var suspended: Int64?
    }

    /// Report `id` as `moderator` may see it; 404 when they may not, 409 when it is resolved.
    private static func claim(report id: Int64, by moderator: Int64, on db: Connection) async throws -> Claim {
        guard
            let row = try await db.first(
                """
                SELECT r.target_type, r.target_id, r.target_user_id, r.state,
                    CASE WHEN \(Self.isStaff(moderator)) THEN 1 ELSE 0 END AS admin
                FROM reports r WHERE r.id = \(bind: id) AND \(Self.canSee(viewer: moderator))
                """)
        else { throw PlazaError.notFound("Report") }
        guard try row.decode(column: "state", as: String.self) == ReportState.open.rawValue else {
            throw Self.alreadyResolved
        }
        let typeText = try row.decode(column: "target_type", as: String.self)
        let target = try row.decode(column: "target_id", as: Int64.self)
        let admin = try row.decode(column: "admin", as: Int64.self) == 1
        let spaces =
            admin
            ? []
            : try await db.rows(
                """
                SELECT rs.space_id FROM report_spaces rs JOIN space_members sm ON sm.space_id = rs.space_id
                WHERE rs.report_id = \(bind: id) AND sm.user_id = \(bind: moderator) AND sm.role IN \(Self.moderatorRoles)
                ORDER BY rs.space_id
                """
            ).map { try $0.decode(column: "space_id", as: Int64.self) }
        let open = try await db.rows(
            """
            SELECT id, reporter_id FROM reports WHERE target_type = \(bind: typeText) AND target_id = \(bind: target)
            AND state = 'open' ORDER BY id\(db.dialect.rowLock(.update) ?? "")
            """)
        let reports = try open.map { try $0.decode(column: "id", as: Int64.self) }
        guard reports.contains(id) else { throw Self.alreadyResolved }
        let reporters = try open.compactMap { row in
            try row.decode(column: "reporter_id", as: Int64?.self).map {
                (report: try row.decode(column: "id", as: Int64.self), user: $0)
            }
        }
        return Claim(
            id: id, typeText: typeText, type: ReportTargetType(rawValue: typeText) ?? .post, target: target,
            targetUser: try row.decode(column: "target_user_id", as: Int64?.self), admin: admin, spaces: spaces,
            reports: reports, reporters: reporters)
    }

    private static func act(
        _ action: ReportAction, on claim: Claim, by moderator: Int64, note: String?, on db: Connection
    ) async throws -> Outcome {
        let entry = AuditLog.Entry(
            actor: moderator, action: "report.\(action.rawValue)", targetType: claim.typeText, targetID: claim.target,
            report: claim.id, note: note)
        switch action {
        case .dismiss:
            try await PeopleStore.lockInOrder(claim.people, on: db)
            return Outcome(entries: [entry])
        case .suspend:
            guard claim.admin else {
                throw PlazaError(
                    .forbidden, "admins_only", "Only admins and moderators suspend people; remove the content instead.")
            }
            guard let targetUser = claim.targetUser else { throw PlazaError.notFound("User") }
            try await Self.suspend(targetUser, by: moderator, alsoLocking: claim.people, on: db)
            let suspension = AuditLog.Entry(
                actor: moderator, action: "user.suspend", targetType: "user", targetID: targetUser, report: claim.id,
                note: note)
            return Outcome(entries: [suspension], suspended: targetUser)
        case .remove:
            var removal = entry
            removal.action = "\(claim.typeText).remove"
            switch claim.type {
            case .user:
                throw PlazaError(
                    .unprocessableContent, "cannot_remove_user", "A person cannot be removed: suspend them instead.",
                    field: "action")
            case .post: return try await removePost(claim, entry: removal, on: db)
            case .comment: return try await removeComment(claim, entry: removal, on: db)
            }
        }
    }

    /// An admin deletes the post (its media go after the commit); a space's moderator takes it
    /// out of the spaces they moderate.
    private static func removePost(_ claim: Claim, entry: AuditLog.Entry, on db: Connection) async throws -> Outcome {
        guard claim.admin else {
            try await PeopleStore.lockInOrder(claim.people, on: db)
            var outcome = Outcome()
            for space in claim.spaces {
                _ = try await SpaceStore.removePost(claim.target, from: space, on: db)
                var inSpace = entry
                inSpace.space = space
                outcome.entries.append(inSpace)
            }
            return outcome
        }
        var outcome = Outcome(entries: [entry])
        if let author = try await db.first("SELECT author_id FROM posts WHERE id = \(bind: claim.target)")?
            .decode(column: "author_id", as: Int64.self)
        {
            outcome.media = try await PostStore.delete(
                id: claim.target, author: author, alsoLocking: claim.people, on: db)
        } else {
            try await PeopleStore.lockInOrder(claim.people, on: db)
        }
        return outcome
    }

    /// Deletes the comment: an admin anywhere, a space's moderator on a post in their space.
    private static func removeComment(_ claim: Claim, entry: AuditLog.Entry, on db: Connection) async throws
        -> Outcome
    {
        var entry = entry
        let post = try await db.first("SELECT post_id FROM comments WHERE id = \(bind: claim.target)")?.decode(
            column: "post_id", as: Int64.self)
        if let post, !claim.admin {
            guard !claim.spaces.isEmpty else { throw Self.notModerator }
            guard
                let inSpace = try await db.first(
                    "SELECT space_id FROM post_spaces WHERE post_id = \(bind: post) AND space_id IN (\(binds: claim.spaces)) ORDER BY space_id"
                )
            else {
                throw PlazaError(
                    .forbidden, "not_in_your_space", "The comment's post is no longer in a space you moderate.")
            }
            entry.space = try inSpace.decode(column: "space_id", as: Int64.self)
        }
        if post != nil {
            try await CommentStore.delete(comment: claim.target, alsoLocking: claim.people, on: db)
        } else {
            try await PeopleStore.lockInOrder(claim.people, on: db)
        }
        return Outcome(entries: [entry])
    }

    static let moderatorsByAdmins = PlazaError(
        .forbidden, "cannot_suspend_moderator", "Only admins suspend a moderator or lift their suspension.")

    /// Suspends `user` in the caller's transaction: no admin, not oneself; their sessions end
    /// (`AccountStore.deleteSessions`). A deletion they asked for and that is not due yet is called
    /// off: the account and its content stay, suspended, for the moderators. Returns false when
    /// they were suspended already (or their deletion is due).
    @discardableResult
    static func suspend(_ user: Int64, by admin: Int64, alsoLocking others: [Int64] = [], on db: Connection)
        async throws -> Bool
    {
        guard user != admin else {
            throw PlazaError(.unprocessableContent, "cannot_suspend_self", "You cannot suspend yourself.")
        }
        try await PeopleStore.lockInOrder([user] + others, on: db)
        guard
            let row = try await db.first(
                """
                SELECT u.is_admin, u.is_moderator, \(Self.isAdmin(admin)) AS by_admin FROM users u
                WHERE u.id = \(bind: user)
                """)
        else { throw PlazaError.notFound("User") }
        guard try !row.decode(column: "is_admin", as: Bool.self) else {
            throw PlazaError(.forbidden, "cannot_suspend_admin", "Admins cannot be suspended.")
        }
        // Moderators are suspended by admins only, not by each other.
        guard try !row.decode(column: "is_moderator", as: Bool.self) || row.decode(column: "by_admin", as: Bool.self)
        else {
            throw moderatorsByAdmins
        }
        let now = Timestamp.now.milliseconds
        // A deletion already due is under way and goes on.
        let changed =
            try await db.first(
                """
                UPDATE users SET suspended_at = \(bind: now), deletion_due_at = NULL
                WHERE id = \(bind: user) AND (suspended_at IS NULL OR deletion_due_at > \(bind: now)) RETURNING id
                """) != nil
        try await AccountStore.deleteSessions(of: user, on: db)
        return changed
    }

    /// Suspends (`suspended`) or reinstates the person named `username`; admins only. Writes
    /// the audit log when something changed.
    func setSuspension(username: String, suspended: Bool, by admin: Int64, note: String?) async throws {
        let key = username.lowercased()
        guard key.utf8.count <= 30 else { throw PlazaError.notFound("User") }
        let ids = ids
        let user = try await db.write { db -> Int64 in
            guard try await db.first("SELECT 1 AS ok WHERE \(Self.isStaff(admin))") != nil else {
                throw Self.staffOnly
            }
            // Suspended people are found too: an admin reinstates them by name. A sign-up waiting
            // for approval is hidden the same way, and only approving it shows it.
            guard
                let user = try await db.first("SELECT id FROM users WHERE username_key = \(bind: key)")?.decode(
                    column: "id", as: Int64.self)
            else { throw PlazaError.notFound("User") }
            let changed: Bool
            if suspended {
                changed = try await Self.suspend(user, by: admin, on: db)
            } else {
                try await PeopleStore.lockInOrder([user], on: db)
                changed =
                    try await db.first(
                        """
                        UPDATE users SET suspended_at = NULL
                        WHERE id = \(bind: user) AND suspended_at IS NOT NULL AND deletion_due_at IS NULL
                            AND pending_since IS NULL AND (NOT is_moderator OR \(Self.isAdmin(admin)))
                        RETURNING id
                        """
                    ) != nil
                // A moderator's suspension is the admins' to lift, as it was theirs to make.
                if !changed,
                    try await db.first(
                        "SELECT 1 AS ok FROM users WHERE id = \(bind: user) AND is_moderator AND NOT \(Self.isAdmin(admin))"
                    ) != nil
                {
                    throw Self.moderatorsByAdmins
                }
            }
            if changed {
                try await AuditLog.record(
                    .init(
                        actor: admin, action: suspended ? "user.suspend" : "user.unsuspend", targetType: "user",
                        targetID: user, note: note), ids: ids, on: db)
            }
            return user
        }
        if suspended { accounts.forgetSessions(of: user) }
        searchWindows.clear()
    }
}
