import PlazaAPI

/// Comments; a post's comment count is kept on write.
package struct CommentStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog

    /// How many of a thread's latest commenters hear of a new reply.
    static let threadNotifyLimit = 50

    static let columns: SQL = "c.id, c.post_id, c.author_id, c.body, c.created_at, \(UserSummary.columns)"

    static func comment(_ row: Row) throws -> Comment {
        Comment(
            id: String(try row.decode(column: "id", as: Int64.self)),
            postId: String(try row.decode(column: "post_id", as: Int64.self)),
            author: try UserSummary(authorIn: row, id: try row.decode(column: "author_id", as: Int64.self)),
            body: try row.decode(column: "body", as: String.self),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    /// The comments with these ids, by id, in one query, less those by suspended people (no
    /// other visibility filter: callers show them to someone already allowed to see them).
    static func comments(ids: [Int64], on db: Connection) async throws -> [Int64: Comment] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await db.rows(
            """
            SELECT \(columns) FROM comments c JOIN users u ON u.id = c.author_id
            WHERE c.id IN (\(binds: ids)) AND \(Visibility.active("c.author_id"))
            """)
        var comments: [Int64: Comment] = [:]
        for row in rows { comments[try row.decode(column: "id", as: Int64.self)] = try comment(row) }
        return comments
    }

    /// The comment `id` if `viewer` may read it: on a post they may read, by someone not
    /// suspended whom they see, or (a block notwithstanding) by them or on their post.
    package func comment(id: Int64, viewer: Int64?) async throws -> Comment? {
        var shown = Visibility.comment("c", seenBy: viewer)
        if let viewer { shown = "(\(shown) OR c.author_id = \(bind: viewer) OR p.author_id = \(bind: viewer))" }
        let condition = shown
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT \(Self.columns) FROM comments c JOIN users u ON u.id = c.author_id JOIN posts p ON p.id = c.post_id
                WHERE c.id = \(bind: id) AND \(Visibility.active("c.author_id"))
                AND \(Visibility.post("p", readableBy: viewer)) AND \(condition)
                """)
        }
        return try row.map(Self.comment)
    }

    /// Comments of a post, oldest first, without those by users the viewer has a block with,
    /// nor those the viewer's keyword filters for threads hide (the cursor is the unfiltered page's).
    package func comments(post: Int64, page: PageRequest, viewer: Int64?) async throws -> Page<Comment> {
        let query = Self.listSQL(post: post, page: page, viewer: viewer)
        let (rows, filters) = try await db.read { db in
            (try await db.rows(query), try await KeywordFilterStore.matcher(for: viewer, in: .thread, on: db))
        }
        let (pageRows, next) = try page.split(rows) { try Cursor(row: $0, time: "created_at") }
        return Page(items: filters.apply(to: try pageRows.map(Self.comment)), nextCursor: next)
    }

    static func listSQL(post: Int64, page: PageRequest, viewer: Int64?) -> SQL {
        var sql: SQL =
            "SELECT \(columns) FROM comments c JOIN users u ON u.id = c.author_id WHERE c.post_id = \(bind: post)"
        if let cursor = page.cursor { sql += " AND (c.created_at, c.id) > (\(bind: cursor.time), \(bind: cursor.id))" }
        sql += " AND \(Visibility.comment("c", seenBy: viewer))"
        sql += " ORDER BY c.created_at ASC, c.id ASC LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    /// Comments on a post the author may see (else 404). Notifies the post's author, the
    /// people the comment mentions and the thread's latest commenters, each once.
    func create(post: Int64, author: Int64, body: String) async throws -> Comment {
        let id = ids.next()
        let now = Timestamp.now.milliseconds
        let mentioned = Mentions.usernames(in: body)
        let ids = ids
        let row = try await events.write { db -> Row? in
            guard
                let row = try await db.first(
                    """
                    INSERT INTO comments (id, post_id, author_id, body, created_at)
                    SELECT \(bind: id), \(bind: post), \(bind: author), \(bind: body), \(bind: now)
                    WHERE \(Visibility.post(id: post, readableBy: author, on: db.dialect))
                    RETURNING id, post_id, author_id, body, created_at, \(PostStore.authorColumns),
                        (SELECT p.author_id FROM posts p WHERE p.id = post_id) AS post_author_id
                    """)
            else { return nil }
            let postAuthor = try row.decode(column: "post_author_id", as: Int64.self)
            var notified: Set<Int64> = [author, postAuthor]
            var notes: [NotificationStore.New] = [
                .comment(.comment, to: postAuthor, by: author, post: post, comment: id)
            ]
            for user in try await NotificationStore.users(named: mentioned, on: db) where notified.insert(user).inserted
            {
                notes.append(.mention(of: user, by: author, post: post, comment: id))
            }
            for user in try await Self.threadCommenters(post: post, excluding: id, on: db)
            where notified.insert(user).inserted {
                notes.append(.comment(.reply, to: user, by: author, post: post, comment: id))
            }
            try await NotificationStore.notify(notes, ids: ids, on: db)
            try await EventLog.append(
                .init(kind: .commentCreated, actor: author, post: post, comment: id), to: .users([postAuthor]), on: db)
            return row
        }
        guard let row else { throw PlazaError.notFound("Post") }
        return try Self.comment(row)
    }

    /// The authors of the thread's latest comments (from its last 500), newest first.
    static func threadCommenters(post: Int64, excluding comment: Int64, on db: Connection) async throws -> [Int64] {
        try await db.rows(
            """
            SELECT author_id FROM (
                SELECT author_id, created_at FROM comments WHERE post_id = \(bind: post) AND id <> \(bind: comment)
                ORDER BY created_at DESC, id DESC LIMIT 500
            ) t GROUP BY author_id ORDER BY max(created_at) DESC LIMIT \(bind: threadNotifyLimit)
            """
        ).map { try $0.decode(column: "author_id", as: Int64.self) }
    }

    /// The comment's author and its post's author, if the viewer may see the comment or is one
    /// of them: a block hides the comment from others, but the post's author can still remove
    /// comments by people they blocked, and a comment's author their own.
    func owners(comment: Int64, viewer: Int64) async throws -> (commentAuthor: Int64, postAuthor: Int64)? {
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT c.author_id, p.author_id AS post_author_id FROM comments c JOIN posts p ON p.id = c.post_id
                    WHERE c.id = \(bind: comment)
                    AND (c.author_id = \(bind: viewer) OR p.author_id = \(bind: viewer)
                        OR (\(Visibility.comment("c", seenBy: viewer)) AND \(Visibility.post("p", readableBy: viewer))))
                    """)
            })
        else { return nil }
        return (
            try row.decode(column: "author_id", as: Int64.self),
            try row.decode(column: "post_author_id", as: Int64.self)
        )
    }

    /// Deletes the comment if `person` wrote it or the post it is on; false when it is not
    /// theirs to delete (or is gone). On PostgreSQL its post (the comment count) is locked first,
    /// then the people whose unread counts lose its notifications, in id order (`PeopleStore.lockInOrder`).
    func delete(comment: Int64, by person: Int64) async throws -> Bool {
        try await db.write { db in
            guard
                try await db.first(
                    """
                    SELECT c.id FROM comments c JOIN posts p ON p.id = c.post_id
                    WHERE c.id = \(bind: comment) AND (c.author_id = \(bind: person) OR p.author_id = \(bind: person))
                    """) != nil
            else { return false }
            try await Self.delete(comment: comment, on: db)
            return true
        }
    }

    /// Deletes the comment in the caller's transaction, locking as `delete(comment:)` does, with
    /// `alsoLocking` (people the caller notifies next) among the people.
    static func delete(comment: Int64, alsoLocking others: [Int64] = [], on db: Connection) async throws {
        if let lock = db.dialect.rowLock(.noKeyUpdate, of: "p") {
            try await db.exec(
                "SELECT p.id FROM posts p JOIN comments c ON c.post_id = p.id WHERE c.id = \(bind: comment)\(lock)")
            let notified = try await db.rows(
                "SELECT DISTINCT recipient_id FROM notifications WHERE comment_id = \(bind: comment)")
            try await PeopleStore.lockInOrder(
                others + notified.map { try $0.decode(column: "recipient_id", as: Int64.self) }, on: db)
        }
        try await db.exec("DELETE FROM comments WHERE id = \(bind: comment)")
    }
}
