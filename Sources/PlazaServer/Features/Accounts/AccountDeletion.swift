import Logging
import PlazaAPI

/// Deleting one's own account (`DELETE /me`), with a grace period.
///
/// Asking hides the account at once, as a suspension does (`suspended_at`; every read path
/// already hides suspended people and what they made), ends every session, and mails the person.
/// Signing in again before `deletion_due_at` keeps the account (`cancel`, run by every new
/// session). Once due, `purgeDue` (the maintenance service) deletes it with everything that is
/// only theirs: posts with their comments, likes and media; their comments and likes elsewhere;
/// follows, blocks, mutes, collections, history, notifications, devices; their media files,
/// in S3 too. A space they own passes to its oldest moderator, else its oldest member; one with
/// no other member goes. Their name is retired (`retired_usernames`). A moderator's suspension
/// turns a pending deletion into a plain suspension.
struct AccountDeletion: Sendable {
    let db: Database
    let events: EventLog
    let emails: EmailStore
    let storage: any MediaStorage
    let accounts: AccountStore
    let searchWindows: SearchWindowCache
    let graceMillis: Int64

    /// Rows deleted per transaction, so a large account never holds the writer for long.
    static let batch = 100

    /// Hides the account and schedules its deletion; returns when it will go. Admins cannot
    /// delete themselves this way (another admin, or the operator, must act).
    func request(userID: Int64, now: Int64 = Timestamp.now.milliseconds) async throws -> Int64 {
        let due = now + graceMillis
        let templates = emails.templates
        let outbox = emails.outbox
        try await db.write { db in
            try await PeopleStore.lockInOrder([userID], on: db)
            guard
                let row = try await db.first(
                    "SELECT email, display_name, is_admin, suspended_at, preferences FROM users WHERE id = \(bind: userID)"
                )
            else { throw PlazaError.notFound("User") }
            guard try !row.decode(column: "is_admin", as: Bool.self) else {
                throw PlazaError(
                    .forbidden, "admin_cannot_delete",
                    "Admins cannot delete their own account; another admin must remove the admin role first.")
            }
            guard
                try await db.first(
                    """
                    UPDATE users SET suspended_at = \(bind: now), deletion_due_at = \(bind: due)
                    WHERE id = \(bind: userID) AND suspended_at IS NULL RETURNING id
                    """) != nil
            else { throw AccountsController.suspended }
            try await AccountStore.deleteSessions(of: userID, on: db)
            // A code an app has not redeemed yet would open a session without the person.
            try await db.exec("DELETE FROM oauth_codes WHERE user_id = \(bind: userID)")
            let email = try row.decode(column: "email", as: String.self)
            if !email.isEmpty {
                try await outbox.enqueue(
                    templates.deletionScheduled(
                        to: email, name: try row.decode(column: "display_name", as: String.self), dueAt: due,
                        language: Language(preferences: try row.decode(column: "preferences", as: String.self))),
                    on: db)
            }
        }
        accounts.forgetSessions(of: userID)
        emails.signal.wake()
        searchWindows.clear()
        return due
    }

    /// In the caller's transaction (a new session): keeps an account whose deletion is pending.
    static func cancel(userID: Int64, now: Int64, on db: Connection) async throws {
        try await db.exec(
            """
            UPDATE users SET suspended_at = NULL, deletion_due_at = NULL
            WHERE id = \(bind: userID) AND deletion_due_at IS NOT NULL AND deletion_due_at > \(bind: now)
            """)
    }

    /// Deletes every account whose grace period has ended; returns how many went.
    @discardableResult
    func purgeDue(now: Int64 = Timestamp.now.milliseconds, logger: Logger) async throws -> Int {
        let due = try await db.read { db in
            try await db.rows(
                """
                SELECT id FROM users WHERE deletion_due_at IS NOT NULL AND deletion_due_at <= \(bind: now)
                ORDER BY deletion_due_at LIMIT 10
                """)
        }.map { try $0.decode(column: "id", as: Int64.self) }
        var purged = 0
        for user in due where try await purge(userID: user, now: now, logger: logger) { purged += 1 }
        return purged
    }

    /// Deletes the account and what is only theirs, a batch at a time; false when it is no
    /// longer due (they signed in, or a moderator suspended it). Safe to run again after a crash.
    func purge(userID user: Int64, now: Int64, logger: Logger) async throws -> Bool {
        let stillDue: SQL =
            "id = \(bind: user) AND deletion_due_at IS NOT NULL AND deletion_due_at <= \(bind: now)"
        guard try await deletePosts(of: user, stillDue: stillDue, logger: logger) else { return false }
        try await deleteComments(of: user)
        try await deleteLikes(of: user)
        while try await db.write({ db in try await PollStore.withdrawVotes(of: user, limit: Self.batch, on: db) }) > 0 {
        }
        try await handOverSpaces(of: user)
        try await handOverPreviewImages(of: user)
        guard let media = try await deleteAccount(user, stillDue: stillDue, now: now) else { return false }
        await storage.deleteFiles(ofMedia: media, logger: logger)
        accounts.forgetSessions(of: user)
        searchWindows.clear()
        logger.info("Deleted account \(user) at its owner's request")
        return true
    }

    /// Their posts, each as its author deletes it: readers hear of it, home timelines lose it.
    /// False when the account is no longer due.
    private func deletePosts(of user: Int64, stillDue: SQL, logger: Logger) async throws -> Bool {
        while true {
            let batch = try await events.write { db -> (media: [Int64], posts: Int)? in
                guard try await db.first("SELECT id FROM users WHERE \(stillDue)") != nil else { return nil }
                // The batch's posts (in id order), then everyone whose counts change, in one step:
                // the order every write keeps (a post, then people).
                let posts = try await db.rows(
                    """
                    SELECT id FROM posts WHERE author_id = \(bind: user) ORDER BY id LIMIT \(bind: Self.batch)\(db.dialect.rowLock(.update) ?? "")
                    """
                ).map { try $0.decode(column: "id", as: Int64.self) }
                guard !posts.isEmpty else { return ([], 0) }
                try await Self.lockPeople(
                    notifiedOf: "post_id IN (\(binds: posts))", with: [user], on: db)
                var media: [Int64] = []
                for post in posts { media += try await PostStore.delete(id: post, author: user, on: db) }
                return (media, posts.count)
            }
            guard let batch else { return false }
            await storage.deleteFiles(ofMedia: batch.media, logger: logger)
            if batch.posts < Self.batch { break }
        }
        return true
    }

    /// Their comments on other people's posts.
    private func deleteComments(of user: Int64) async throws {
        while try await hasRows("comments WHERE author_id = \(bind: user)") {
            try await db.write { db in
                let comments = try await db.rows(
                    "SELECT id FROM comments WHERE author_id = \(bind: user) ORDER BY id LIMIT \(bind: Self.batch)"
                ).map { try $0.decode(column: "id", as: Int64.self) }
                // Their posts (the comment counts) in id order, then the people notified of them.
                if let lock = db.dialect.rowLock(.noKeyUpdate) {
                    try await db.exec(
                        """
                        SELECT id FROM posts WHERE id IN (SELECT post_id FROM comments WHERE id IN (\(binds: comments)))
                        ORDER BY id\(lock)
                        """)
                }
                try await Self.lockPeople(notifiedOf: "comment_id IN (\(binds: comments))", with: [], on: db)
                for comment in comments { try await CommentStore.delete(comment: comment, on: db) }
            }
        }
    }

    /// Their likes, the liked posts locked first (in id order), as a like does.
    private func deleteLikes(of user: Int64) async throws {
        while try await hasRows("likes WHERE user_id = \(bind: user)") {
            try await db.write { db in
                let posts = try await db.rows(
                    "SELECT post_id FROM likes WHERE user_id = \(bind: user) ORDER BY post_id LIMIT \(bind: Self.batch)"
                ).map { try $0.decode(column: "post_id", as: Int64.self) }
                if let lock = db.dialect.rowLock(.noKeyUpdate) {
                    try await db.exec("SELECT id FROM posts WHERE id IN (\(binds: posts)) ORDER BY id\(lock)")
                }
                try await db.exec("DELETE FROM likes WHERE user_id = \(bind: user) AND post_id IN (\(binds: posts))")
            }
        }
    }

    /// The account itself; the rest goes with it (foreign keys), counters kept by triggers.
    /// The ids of the media whose files go after; nil when it is no longer due.
    private func deleteAccount(_ user: Int64, stillDue: SQL, now: Int64) async throws -> [Int64]? {
        try await db.write { db -> [Int64]? in
            if let lock = db.dialect.rowLock(.noKeyUpdate) {
                // Everyone whose counters the cascade changes, in id order.
                try await db.exec(
                    """
                    SELECT id FROM users WHERE id = \(bind: user)
                    OR id IN (SELECT followee_id FROM follows WHERE follower_id = \(bind: user))
                    OR id IN (SELECT follower_id FROM follows WHERE followee_id = \(bind: user))
                    OR id IN (SELECT recipient_id FROM notifications WHERE actor_id = \(bind: user))
                    OR id IN (SELECT n.recipient_id FROM notification_actors a JOIN notifications n ON n.id = a.notification_id
                              WHERE a.actor_id = \(bind: user))
                    ORDER BY id\(lock)
                    """)
            }
            guard
                let row = try await db.first(
                    "SELECT username_key FROM users WHERE \(stillDue)")
            else { return nil }
            // Their part in other people's grouped notifications ("Ana and 3 others liked…") goes;
            // the groups stay with their other actors.
            let groups = try await db.rows(
                "DELETE FROM notification_actors WHERE actor_id = \(bind: user) RETURNING notification_id"
            ).map { try $0.decode(column: "notification_id", as: Int64.self) }
            try await NotificationStore.regroup(Array(Set(groups)), on: db)
            let media = try await db.rows("SELECT id FROM media WHERE owner_id = \(bind: user)").map {
                try $0.decode(column: "id", as: Int64.self)
            }
            try await db.exec(
                """
                INSERT INTO retired_usernames (username_key, retired_at)
                VALUES (\(bind: try row.decode(column: "username_key", as: String.self)), \(bind: now))
                ON CONFLICT DO NOTHING
                """)
            try await db.exec("DELETE FROM users WHERE id = \(bind: user)")
            return media
        }
    }

    /// Each space the person owns passes to its oldest moderator, else its oldest member, with
    /// its image; a space nobody else is in is deleted.
    private func handOverSpaces(of user: Int64) async throws {
        try await db.write { db in
            // Each space with its heir (a member who is not suspended), the heirs locked in id order.
            let spaces = try await db.rows(
                """
                SELECT s.id, s.image, (
                    SELECT m.user_id FROM space_members m JOIN users u ON u.id = m.user_id
                    WHERE m.space_id = s.id AND m.user_id <> \(bind: user) AND u.suspended_at IS NULL
                    ORDER BY CASE m.role WHEN 'moderator' THEN 0 ELSE 1 END, m.created_at, m.user_id LIMIT 1
                ) AS heir
                FROM spaces s WHERE s.owner_id = \(bind: user) ORDER BY s.id
                """)
            try await PeopleStore.lockInOrder(
                try spaces.compactMap { try $0.decode(column: "heir", as: Int64?.self) }, on: db)
            for space in spaces {
                let id = try space.decode(column: "id", as: Int64.self)
                guard let heir = try space.decode(column: "heir", as: Int64?.self) else {
                    try await db.exec("DELETE FROM spaces WHERE id = \(bind: id)")
                    continue
                }
                try await db.exec("UPDATE spaces SET owner_id = \(bind: heir) WHERE id = \(bind: id)")
                try await db.exec(
                    "UPDATE space_members SET role = 'owner' WHERE space_id = \(bind: id) AND user_id = \(bind: heir)")
                let image = MediaRecord.list(try space.decode(column: "image", as: String?.self)).map(\.id)
                if !image.isEmpty {
                    // The image's bytes count against the heir's quota from now on.
                    try await db.exec(
                        """
                        UPDATE users SET media_bytes = media_bytes
                            + (SELECT COALESCE(SUM(bytes), 0) FROM media WHERE id IN (\(binds: image)) AND owner_id = \(bind: user))
                        WHERE id = \(bind: heir)
                        """)
                    try await db.exec(
                        "UPDATE media SET owner_id = \(bind: heir) WHERE id IN (\(binds: image)) AND owner_id = \(bind: user)"
                    )
                }
            }
        }
    }

    /// Link-preview images fetched at the person's request are shown on other people's posts and
    /// saved items too: each passes to one of them (its bytes count against them from now on).
    /// One nobody else shows goes with the account, and so do the cached previews that would hand
    /// it out again (the next request for that link fetches it anew).
    private func handOverPreviewImages(of user: Int64) async throws {
        try await db.write { db in
            let url: SQL = "'/media/' || m.id || '/medium?k=' || m.access_key"
            let images = try await db.rows(
                """
                SELECT m.id, m.bytes, \(url) AS url, COALESCE(
                    (SELECT p.author_id FROM posts p WHERE p.link_image_url = \(url) AND p.author_id <> \(bind: user)
                        ORDER BY p.author_id LIMIT 1),
                    (SELECT i.owner_id FROM collection_items i WHERE i.link_image_url = \(url) AND i.owner_id <> \(bind: user)
                        ORDER BY i.owner_id LIMIT 1)) AS heir
                FROM media m WHERE m.owner_id = \(bind: user) AND m.link_preview AND m.access_key IS NOT NULL
                ORDER BY m.id
                """)
            try await PeopleStore.lockInOrder(
                try images.compactMap { try $0.decode(column: "heir", as: Int64?.self) }, on: db)
            for image in images {
                let id = try image.decode(column: "id", as: Int64.self)
                guard let heir = try image.decode(column: "heir", as: Int64?.self) else {
                    try await db.exec(
                        "DELETE FROM link_previews WHERE image_url = \(bind: try image.decode(column: "url", as: String.self))"
                    )
                    continue
                }
                try await db.exec("UPDATE media SET owner_id = \(bind: heir) WHERE id = \(bind: id)")
                try await db.exec(
                    """
                    UPDATE users SET media_bytes = media_bytes + \(bind: try image.decode(column: "bytes", as: Int64.self))
                    WHERE id = \(bind: heir)
                    """)
            }
        }
    }

    /// Locks `with` and everyone notified of what `condition` picks among notifications (whose
    /// unread counts change with them), in id order (`PeopleStore.lockInOrder`).
    private static func lockPeople(notifiedOf condition: SQL, with others: [Int64], on db: Connection)
        async throws
    {
        guard db.dialect.rowLock(.noKeyUpdate) != nil else { return }
        let notified = try await db.rows("SELECT DISTINCT recipient_id FROM notifications WHERE \(condition)").map {
            try $0.decode(column: "recipient_id", as: Int64.self)
        }
        try await PeopleStore.lockInOrder(others + notified, on: db)
    }

    private func hasRows(_ tableAndCondition: SQL) async throws -> Bool {
        try await db.read { db in try await db.first("SELECT 1 AS found FROM \(tableAndCondition) LIMIT 1") != nil }
    }
}
