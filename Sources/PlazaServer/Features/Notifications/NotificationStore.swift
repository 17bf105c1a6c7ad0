import PlazaAPI

/// Notifications: recorded by the stores whose writes cause them, in the same transaction,
/// and read here. A notification is never about one's own action and never between people
/// with a block either way (checked when it is recorded; a new block removes the old ones).
package struct NotificationStore: Sendable {
    let db: Database
    let people: PeopleStore
    let posts: PostStore

    /// A notification to record. `groupKey` names the group it joins while unread.
    struct New: Sendable {
        var kind: NotificationKind
        var recipient: Int64
        var actor: Int64
        var post: Int64?
        var comment: Int64?
        var groupKey: String

        static func like(post: Int64, author: Int64, by actor: Int64) -> New {
            New(kind: .like, recipient: author, actor: actor, post: post, groupKey: "like:\(post)")
        }
        static func edited(post: Int64, reader: Int64, by author: Int64) -> New {
            New(kind: .edited, recipient: reader, actor: author, post: post, groupKey: "edited:\(post)")
        }
        /// Poll `post` ended: to its author and to each who voted in it.
        static func pollEnded(post: Int64, to recipient: Int64, author: Int64) -> New {
            New(kind: .poll, recipient: recipient, actor: author, post: post, groupKey: "poll:\(post)")
        }
        static func boost(post: Int64, author: Int64, by actor: Int64) -> New {
            New(kind: .boost, recipient: author, actor: actor, post: post, groupKey: "boost:\(post)")
        }
        static func follow(of recipient: Int64, by actor: Int64) -> New {
            New(kind: .follow, recipient: recipient, actor: actor, groupKey: "follow")
        }
        static func followRequest(to recipient: Int64, by actor: Int64) -> New {
            New(kind: .followRequest, recipient: recipient, actor: actor, groupKey: followRequestGroup)
        }
        static let followRequestGroup = "follow_request"
        static func recommendation(of post: Int64, to recipient: Int64, by actor: Int64) -> New {
            New(
                kind: .recommendation, recipient: recipient, actor: actor, post: post,
                groupKey: "recommendation:\(post)")
        }
        static func mention(of recipient: Int64, by actor: Int64, post: Int64, comment: Int64?) -> New {
            New(
                kind: .mention, recipient: recipient, actor: actor, post: post, comment: comment,
                groupKey: comment.map { "mention:comment:\($0)" } ?? "mention:post:\(post)")
        }
        static func comment(_ kind: NotificationKind, to recipient: Int64, by actor: Int64, post: Int64, comment: Int64)
            -> New
        {
            New(
                kind: kind, recipient: recipient, actor: actor, post: post, comment: comment,
                groupKey: "\(kind.rawValue):\(comment)")
        }
    }

    /// Records each notification, and for the ones that are new or gained an actor appends a
    /// `notification` event and owes the recipient's devices a push. Call it at the end of the
    /// causing transaction.
    static func notify(_ notifications: [New], ids: IDGenerator, on db: Connection) async throws {
        // Each notification locks its recipient's row (the unread count): always in the order of
        // their ids, so two transactions notifying the same people cannot deadlock on PostgreSQL.
        for new in notifications.sorted(by: { $0.recipient < $1.recipient }) {
            guard let id = try await record(new, ids: ids, on: db) else { continue }
            try await PushOutbox.enqueue(
                notification: id, recipient: new.recipient, now: Timestamp.now.milliseconds, on: db)
            try await EventLog.append(
                .init(kind: .notification, actor: new.actor, notification: id), to: .users([new.recipient]), on: db)
        }
    }

    /// The ids of the users with these (lower-cased) usernames.
    static func users(named usernames: [String], on db: Connection) async throws -> [Int64] {
        guard !usernames.isEmpty else { return [] }
        return try await db.rows("SELECT id FROM users WHERE username_key IN (\(binds: usernames))").map {
            try $0.decode(column: "id", as: Int64.self)
        }
    }

    /// The notification's id when it is new or its group gained an actor; nil when it is about
    /// oneself, crosses a block, or the actor is already in the open group.
    static func record(_ new: New, ids: IDGenerator, on db: Connection) async throws -> Int64? {
        // The one notification about oneself: one's own poll ended.
        guard new.recipient != new.actor || new.kind == .poll else { return nil }
        // The actor, and the post it is about if that still exists, must be visible to the recipient.
        let postHidden: SQL =
            new.post.map { post in
                "EXISTS (SELECT 1 FROM posts p WHERE p.id = \(bind: post) AND NOT \(Visibility.post("p", readableBy: new.recipient)))"
            } ?? "FALSE"
        let allowed: SQL =
            "\(Visibility.person("\(bind: new.actor)", seenBy: new.recipient)) AND NOT \(postHidden)"
        let now = Timestamp.now.milliseconds
        let sortID = ids.next()
        // A new group, or the recipient's unread one of its kind joined (once per person) and
        // moved to the top: nothing when not allowed or the actor is in that group already.
        guard
            let id = try await db.first(
                """
                INSERT INTO notifications (id, recipient_id, kind, group_key, actor_id, post_id, comment_id, sort_id, updated_at)
                SELECT \(bind: sortID), \(bind: new.recipient), \(bind: new.kind.rawValue), \(bind: new.groupKey), \(bind: new.actor),
                    CAST(\(bind: new.post) AS BIGINT), CAST(\(bind: new.comment) AS BIGINT), \(bind: sortID), \(bind: now)
                WHERE \(allowed)
                ON CONFLICT (recipient_id, group_key) WHERE read_at IS NULL DO UPDATE SET actor_id = excluded.actor_id,
                    actor_count = notifications.actor_count + 1, sort_id = excluded.sort_id, updated_at = excluded.updated_at
                WHERE NOT EXISTS (SELECT 1 FROM notification_actors a
                    WHERE a.notification_id = notifications.id AND a.actor_id = excluded.actor_id)
                RETURNING id
                """)?.decode(column: "id", as: Int64.self)
        else { return nil }
        // On PostgreSQL the `NOT EXISTS` reads the statement's snapshot: the same person joining
        // the group in two transactions at once (two comments) passes it twice, and only the
        // actors' key sees the other's row. Then the second count is taken back, and as for an
        // actor already in the group, nothing new is told.
        let added = try await db.first(
            """
            INSERT INTO notification_actors (notification_id, actor_id, acted_at) VALUES (\(bind: id), \(bind: new.actor), \(bind: now))
            ON CONFLICT DO NOTHING RETURNING actor_id
            """)
        if added == nil {
            try await db.exec("UPDATE notifications SET actor_count = actor_count - 1 WHERE id = \(bind: id)")
            return nil
        }
        return id
    }

    /// After a block between `a` and `b`: removes what each was notified of by the other, or
    /// about the other's posts; groups keep their other actors.
    static func forget(between a: Int64, and b: Int64, on db: Connection) async throws {
        for (recipient, other) in [(a, b), (b, a)] {
            try await db.exec(
                """
                DELETE FROM notifications WHERE recipient_id = \(bind: recipient)
                AND EXISTS (SELECT 1 FROM posts p WHERE p.id = notifications.post_id AND p.author_id = \(bind: other))
                """)
            let groups = try await db.rows(
                """
                DELETE FROM notification_actors WHERE actor_id = \(bind: other)
                AND notification_id IN (SELECT id FROM notifications WHERE recipient_id = \(bind: recipient))
                RETURNING notification_id
                """
            ).map { try $0.decode(column: "notification_id", as: Int64.self) }
            try await regroup(groups, on: db)
        }
    }

    /// When follow requests end (approved, denied, withdrawn): takes their requesters out of the
    /// recipient's follow-request notifications, read or not, as Mastodon drops the request's.
    static func withdrawFollowRequests(to recipient: Int64, by actors: [Int64], on db: Connection) async throws {
        guard !actors.isEmpty else { return }
        let groups = try await db.rows(
            """
            DELETE FROM notification_actors WHERE actor_id IN (\(binds: actors))
            AND notification_id IN (SELECT id FROM notifications WHERE recipient_id = \(bind: recipient)
                AND group_key = \(bind: New.followRequestGroup))
            RETURNING notification_id
            """
        ).map { try $0.decode(column: "notification_id", as: Int64.self) }
        try await regroup(Array(Set(groups)), on: db)
    }

    /// After actors left the notifications `groups`: deletes the ones left with none and
    /// recounts the others, whose latest actor may have changed.
    static func regroup(_ groups: [Int64], on db: Connection) async throws {
        guard !groups.isEmpty else { return }
        try await db.exec(
            """
            DELETE FROM notifications WHERE id IN (\(binds: groups))
            AND NOT EXISTS (SELECT 1 FROM notification_actors a WHERE a.notification_id = notifications.id)
            """)
        try await db.exec(
            """
            UPDATE notifications SET
                actor_count = (SELECT count(*) FROM notification_actors a WHERE a.notification_id = notifications.id),
                actor_id = (SELECT a.actor_id FROM notification_actors a WHERE a.notification_id = notifications.id
                    ORDER BY a.acted_at DESC LIMIT 1)
            WHERE id IN (\(binds: groups))
            """)
    }

    // MARK: reading

    /// Which of the recipient's notifications a list reads, beyond its page.
    package struct Filter: Sendable {
        /// Only those sorted after this sort id (Mastodon's `since_id` and `min_id`).
        package var newerThan: Int64?
        /// With `newerThan`: the page just above it (the oldest of the newer ones, Mastodon's
        /// `min_id`) rather than the newest; still returned newest first.
        package var closestFirst = false
        /// Only those `actor` took part in (Mastodon's `account_id`).
        package var actor: Int64?

        package init(newerThan: Int64? = nil, closestFirst: Bool = false, actor: Int64? = nil) {
            self.newerThan = newerThan
            self.closestFirst = closestFirst
            self.actor = actor
        }
    }

    /// The recipient's notifications, most recent activity first.
    /// `newerThan`: only those sorted after this sort id (Mastodon's `since_id`).
    package func list(recipient: Int64, unreadOnly: Bool, page: PageRequest, newerThan: Int64? = nil) async throws
        -> Page<PlazaAPI.Notification>
    {
        try await list(recipient: recipient, unreadOnly: unreadOnly, page: page, filter: Filter(newerThan: newerThan))
    }

    /// The recipient's notifications that pass `filter`, most recent activity first. With
    /// `filter.closestFirst` the page is read upwards from `newerThan`, and its `nextCursor` says
    /// whether more newer ones follow.
    package func list(recipient: Int64, unreadOnly: Bool, page: PageRequest, filter: Filter) async throws
        -> Page<PlazaAPI.Notification>
    {
        let rows = try await db.read { db in
            try await db.rows(Self.listSQL(recipient: recipient, unreadOnly: unreadOnly, page: page, filter: filter))
        }
        let (pageRows, next) = try page.split(rows) { try $0.cursor }
        let ordered = filter.closestFirst && filter.newerThan != nil ? Array(pageRows.reversed()) : Array(pageRows)
        return Page(items: try await render(ordered, recipient: recipient), nextCursor: next)
    }

    static func listSQL(recipient: Int64, unreadOnly: Bool, page: PageRequest, newerThan: Int64? = nil)
        -> SQL
    {
        listSQL(recipient: recipient, unreadOnly: unreadOnly, page: page, filter: Filter(newerThan: newerThan))
    }

    static func listSQL(recipient: Int64, unreadOnly: Bool, page: PageRequest, filter: Filter) -> SQL {
        var sql: SQL =
            "SELECT \(columns) FROM notifications n JOIN users u ON u.id = n.actor_id WHERE n.recipient_id = \(bind: recipient) AND \(shown(to: recipient))"
        if unreadOnly { sql += " AND n.read_at IS NULL" }
        if let cursor = page.cursor { sql += " AND n.sort_id < \(bind: cursor.id)" }
        if let newerThan = filter.newerThan { sql += " AND n.sort_id > \(bind: newerThan)" }
        if let actor = filter.actor {
            sql +=
                " AND EXISTS (SELECT 1 FROM notification_actors a WHERE a.notification_id = n.id AND a.actor_id = \(bind: actor))"
        }
        let upwards = filter.closestFirst && filter.newerThan != nil
        sql += upwards ? " ORDER BY n.sort_id ASC" : " ORDER BY n.sort_id DESC"
        sql += " LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    /// How many of the recipient's notifications are unread, as the count kept on their row says.
    package func unreadCount(recipient: Int64) async throws -> Int {
        try await db.read { db in
            try await db.first("SELECT unread_notifications FROM users WHERE id = \(bind: recipient)")
        }.map { try $0.decode(column: "unread_notifications", as: Int.self) } ?? 0
    }

    /// The sort key of `recipient`'s notification `id` (a cursor), nil when it is gone.
    package func sortID(of id: Int64, recipient: Int64) async throws -> Int64? {
        try await db.read { db in
            try await db.first(
                "SELECT sort_id FROM notifications WHERE id = \(bind: id) AND recipient_id = \(bind: recipient)")
        }.map { try $0.decode(column: "sort_id", as: Int64.self) }
    }

    /// The recipient's notifications among `ids` (for the stream), in the order of `ids`.
    package func notifications(ids: [Int64], recipient: Int64) async throws -> [Int64: PlazaAPI.Notification] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT \(Self.columns) FROM notifications n JOIN users u ON u.id = n.actor_id
                WHERE n.recipient_id = \(bind: recipient) AND n.id IN (\(binds: ids)) AND \(Self.shown(to: recipient))
                """)
        }
        let items = try await render(rows, recipient: recipient)
        return Dictionary(
            items.compactMap { item in parseID(item.id).map { ($0, item) } }, uniquingKeysWith: { a, _ in a })
    }

    /// A notification `n` is shown while its actor, and the post it is about (if that still
    /// exists), are visible to the recipient: a narrowed audience or a suspension hides it.
    private static func shown(to recipient: Int64) -> SQL {
        """
        \(Visibility.person("n.actor_id", seenBy: recipient)) AND (n.post_id IS NULL \
        OR EXISTS (SELECT 1 FROM posts p WHERE p.id = n.post_id AND \(Visibility.post("p", readableBy: recipient))))
        """
    }

    private static let columns: SQL = """
        n.id AS n_id, n.kind AS n_kind, n.actor_count AS n_actor_count, n.post_id AS n_post_id, n.comment_id AS n_comment_id, \
        n.sort_id AS n_sort_id, n.updated_at AS n_updated_at, n.read_at AS n_read_at, \(UserRecord.columns)
        """

    /// Builds the page's notifications with three batched reads: posts, comments, recent actors;
    /// those about a post or comment the recipient's keyword filters for notifications hide
    /// are left out (a page may come back shorter; its cursor is the unfiltered page's).
    private func render(_ rows: [Row], recipient: Int64) async throws -> [PlazaAPI.Notification] {
        let (items, filters) = try await unfiltered(rows, recipient: recipient)
        guard !filters.isEmpty else { return items }
        return items.filter { item in
            item.post.flatMap { filters.verdict(for: $0) } != .hide
                && item.comment.flatMap { filters.verdict(for: $0) } != .hide
        }
    }

    private func unfiltered(_ rows: [Row], recipient: Int64) async throws -> (
        [PlazaAPI.Notification], KeywordFilters
    ) {
        guard !rows.isEmpty else { return ([], KeywordFilters([], context: .notifications)) }
        let ids = try rows.map { try $0.decode(column: "n_id", as: Int64.self) }
        let postIDs = try rows.compactMap { try $0.decode(column: "n_post_id", as: Int64?.self) }
        let commentIDs = try rows.compactMap { try $0.decode(column: "n_comment_id", as: Int64?.self) }
        let actors = try await people.users(rows.map(UserRecord.init(row:)), viewer: recipient)
        let posts = try await posts.posts(ids: postIDs, viewer: recipient)
        let (commentsByID, recent, filters) = try await db.read { db in
            let comments = try await CommentStore.comments(ids: commentIDs, on: db)
            let recent = try await db.rows(
                """
                SELECT r.notification_id, u.id AS author_id, \(UserSummary.columns) FROM (
                    SELECT a.notification_id, a.actor_id, a.acted_at,
                        row_number() OVER (PARTITION BY a.notification_id ORDER BY a.acted_at DESC, a.actor_id DESC) AS rank
                    FROM notification_actors a WHERE a.notification_id IN (\(binds: ids))
                ) r JOIN users u ON u.id = r.actor_id WHERE r.rank <= 3 ORDER BY r.notification_id, r.rank
                """)
            return (comments, recent, try await KeywordFilterStore.matcher(for: recipient, in: .notifications, on: db))
        }
        var actorsByID: [Int64: [UserSummary]] = [:]
        for row in recent {
            actorsByID[try row.decode(column: "notification_id", as: Int64.self), default: []].append(
                try UserSummary(authorIn: row, id: try row.decode(column: "author_id", as: Int64.self)))
        }
        let items = try zip(rows, actors).map { row, actor in
            let id = try row.decode(column: "n_id", as: Int64.self)
            return PlazaAPI.Notification(
                id: String(id),
                kind: NotificationKind(rawValue: try row.decode(column: "n_kind", as: String.self)) ?? .like,
                actor: actor,
                actors: actorsByID[id] ?? [], actorCount: try row.decode(column: "n_actor_count", as: Int.self),
                post: try row.decode(column: "n_post_id", as: Int64?.self).flatMap { posts[$0] },
                comment: try row.decode(column: "n_comment_id", as: Int64?.self).flatMap { commentsByID[$0] },
                createdAt: Timestamp(milliseconds: try row.decode(column: "n_updated_at", as: Int64.self)),
                read: try row.decode(column: "n_read_at", as: Int64?.self) != nil)
        }
        return (items, filters)
    }

    /// Marks the recipient's notifications read: those in `ids`, or all.
    func markRead(recipient: Int64, ids: [Int64]?) async throws {
        var sql: SQL = """
            UPDATE notifications SET read_at = \(bind: Timestamp.now.milliseconds) WHERE recipient_id = \(bind: recipient) AND read_at IS NULL
            """
        if let ids {
            guard !ids.isEmpty else { return }
            sql += " AND id IN (\(binds: ids))"
        }
        try await db.write(sql)
    }

    /// Deletes the recipient's notifications: those in `ids`, or all (Mastodon's dismiss and
    /// clear). Unread counts follow (triggers).
    @discardableResult
    package func dismiss(recipient: Int64, ids: [Int64]?) async throws -> Int {
        var sql: SQL = "DELETE FROM notifications WHERE recipient_id = \(bind: recipient)"
        if let ids {
            guard !ids.isEmpty else { return 0 }
            sql += " AND id IN (\(binds: ids))"
        }
        let statement: SQL = sql + " RETURNING id"
        return try await db.write { db in try await db.rows(statement).count }
    }
}

extension Row {
    fileprivate var cursor: Cursor {
        get throws {
            Cursor(
                time: try decode(column: "n_updated_at", as: Int64.self),
                id: try decode(column: "n_sort_id", as: Int64.self))
        }
    }
}
