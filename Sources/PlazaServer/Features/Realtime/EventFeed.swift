import Foundation
import NIOCore
import PlazaAPI

/// The read side of the event log: a recipient's events after a point (replay), everyone's
/// events after a point (the hub), and their rendering as Server-Sent Events frames.
package struct EventFeed: Sendable {
    let db: Database
    let posts: PostStore
    let notifications: NotificationStore

    /// Which of a person's streams an event goes to.
    package enum Channel: Int, Sendable, Hashable {
        /// Their own: their home feed's posts, events about their posts, their notifications.
        case own = 0
        /// Everyone's public posts (Mastodon's public streams), as this person may see them.
        case everyone = 1
    }

    /// One event for one recipient on one of their channels.
    struct Entry: Sendable {
        var recipient: Int64
        var channel: Channel
        var seq: Int64
        /// nil for a kind this server does not know (written by a newer one): not sent.
        var kind: StreamEventKind?
        var post: Int64?
        var comment: Int64?
        var notification: Int64?
        var data: String?

        init(row: Row) throws {
            recipient = try row.decode(column: "recipient_id", as: Int64.self)
            channel = Channel(rawValue: try row.decode(column: "channel", as: Int.self)) ?? .own
            seq = try row.decode(column: "seq", as: Int64.self)
            kind = StreamEventKind(rawValue: try row.decode(column: "kind", as: String.self))
            post = try row.decode(column: "post_id", as: Int64?.self)
            comment = try row.decode(column: "comment_id", as: Int64?.self)
            notification = try row.decode(column: "notification_id", as: Int64?.self)
            data = try row.decode(column: "data", as: String?.self)
        }
    }

    /// Who receives the events with a seq in (`after`, `through`], on which channel. Their own
    /// channel: their inbox rows, and for each `post.created` (which has none: a post would write
    /// one per follower, half of what a new post cost) its author, the author's followers and the
    /// members of its spaces, found when the log is read. With `recipient`, only that person's.
    /// The public channel, for each of `publicReaders`: the new and changed public posts whose
    /// media are processed, and the deleted posts.
    static func recipientsSQL(after: Int64, through: Int64, recipient: Int64?, publicReaders: [Int64] = [])
        -> SQL
    {
        let window: SQL = "pc.seq > \(bind: after) AND pc.seq <= \(bind: through)"
        let created: SQL = "\(window) AND pc.kind = 'post.created'"
        var inbox: SQL = "SELECT recipient_id, 0 AS channel, seq FROM event_inbox WHERE "
        var author: SQL = "SELECT pc.actor_id AS recipient_id, 0, pc.seq FROM events pc WHERE \(created)"
        var followers: SQL =
            "SELECT f.follower_id, 0, pc.seq FROM events pc JOIN follows f ON f.followee_id = pc.actor_id"
        var members: SQL = """
            SELECT m.user_id, 0, pc.seq FROM events pc JOIN post_spaces ps ON ps.post_id = pc.post_id
            JOIN space_members m ON m.space_id = ps.space_id
            """
        if let recipient {
            inbox += "recipient_id = \(bind: recipient) AND "
            author += " AND pc.actor_id = \(bind: recipient)"
            followers += " AND f.follower_id = \(bind: recipient)"
            members += " AND m.user_id = \(bind: recipient)"
        }
        inbox += "seq > \(bind: after) AND seq <= \(bind: through)"
        var branches = [inbox, author, followers + " WHERE \(created)", members + " WHERE \(created)"]
        if !publicReaders.isEmpty {
            branches.append(
                """
                SELECT r.id, 1, pc.seq FROM events pc JOIN users r ON r.id IN (\(binds: publicReaders))
                WHERE \(window) AND (pc.kind = 'post.deleted' OR (pc.kind IN ('post.created', 'post.updated')
                AND EXISTS (SELECT 1 FROM posts pp WHERE pp.id = pc.post_id AND pp.audience = 'public' AND NOT pp.processing)))
                """)
        }
        return branches.joined(separator: " UNION ")
    }

    /// The events with a seq in (`after`, `through`] and their recipients (`recipientsSQL`),
    /// oldest first, less those the recipient may not see *now* (rules applied when read, which
    /// is when the hub delivers them, so a block, a mute, an unfollow, a narrowed audience, a
    /// removal from a space or a suspension made after the event was written holds, live and on
    /// replay): everything for a suspended recipient; events by someone with a block either way;
    /// new posts by someone they muted (and on the public channel anything by them); and events
    /// about a post they may not read, except `post.deleted`, which goes only to those who may not
    /// read the post (deleted, or no longer theirs to read). A suspended person's posts fail that
    /// last rule; their comments and notifications are left out when the events are read (`events`).
    static func entriesSQL(after: Int64, through: Int64, recipient: Int64? = nil, publicReaders: [Int64] = [])
        -> SQL
    {
        let readable: SQL =
            "EXISTS (SELECT 1 FROM posts ep WHERE ep.id = e.post_id AND \(Visibility.post("ep", readableBy: "i.recipient_id")))"
        let recipients = recipientsSQL(
            after: after, through: through, recipient: recipient, publicReaders: publicReaders)
        return """
            SELECT i.recipient_id, i.channel, e.seq, e.kind, e.post_id, e.comment_id, e.notification_id, e.data
            FROM (\(recipients)) i JOIN events e ON e.seq = i.seq
            WHERE \(Visibility.active("i.recipient_id"))
            AND NOT \(Visibility.blocked(between: "i.recipient_id", and: "e.actor_id"))
            AND ((i.channel = 0 AND e.kind <> 'post.created') OR \(Visibility.unmuted("e.actor_id", by: "i.recipient_id")))
            AND (e.post_id IS NULL OR (e.kind = 'post.deleted') <> \(readable))
            ORDER BY i.seq, i.recipient_id, i.channel
            """
    }

    /// The seqs one read covers: every recipient of a window's events is read at once, so a
    /// reader's place in the log is a seq. The hub reads every recipient's events, a replay only
    /// one person's (which costs a walk over the window's new posts).
    static let hubWindow: Int64 = 500
    static let replayWindow: Int64 = 5_000

    /// The events after `seq` up to `head` (from `bounds`) or to the end of a window, whichever
    /// comes first, for `recipient` or for everyone (and the public channel of `publicReaders`),
    /// oldest first; and the seq read through.
    func entries(after seq: Int64, through head: Int64, recipient: Int64? = nil, publicReaders: [Int64] = [])
        async throws -> (entries: [Entry], through: Int64)
    {
        let end = min(head, seq + (recipient == nil ? Self.hubWindow : Self.replayWindow))
        guard end > seq else { return ([], seq) }
        let rows = try await db.read { db in
            try await db.rows(
                Self.entriesSQL(after: seq, through: end, recipient: recipient, publicReaders: publicReaders))
        }
        return (try rows.map(Entry.init(row:)), end)
    }

    /// The head: a seq at or below which every event is committed, so a reader that has read up
    /// to it never finds an earlier one later; and the last seq retention dropped (older resume
    /// points are gone). On PostgreSQL, where transactions append concurrently (`EventLog`), the
    /// statement takes the append lock exclusively, which waits for the appenders in flight to
    /// commit; the largest seq its snapshot saw was taken before it got the lock, so by then every
    /// event up to it is committed or rolled back. New appenders queue behind it for that instant.
    func bounds() async throws -> (head: Int64, prunedThrough: Int64) {
        let lock: SQL =
            db.dialect.advisoryLock(EventLog.appendLock, shared: false).map { ", \($0) AS barrier" } ?? ""
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT (SELECT max(seq) FROM events) AS head, (SELECT pruned_through FROM event_log) AS pruned_through\(lock)
                """
            )
        }
        let pruned = try row?.decode(column: "pruned_through", as: Int64.self) ?? 0
        return (max(try row?.decode(column: "head", as: Int64?.self) ?? 0, pruned), pruned)
    }

    /// Drops events older than `cutoff` (milliseconds), a batch at a time; returns how many.
    @discardableResult
    func prune(before cutoff: Int64, batch: Int = 5_000) async throws -> Int {
        var total = 0
        while true {
            let last = try await db.read { db in
                try await db.first(
                    """
                    SELECT max(seq) AS last FROM (SELECT seq, created_at FROM events ORDER BY seq LIMIT \(bind: batch)) t
                    WHERE created_at < \(bind: cutoff)
                    """)?.decode(column: "last", as: Int64?.self)
            }
            guard let last else { return total }
            let deleted = try await db.write { db in
                try await db.exec("DELETE FROM event_inbox WHERE seq <= \(bind: last)")
                try await db.exec(
                    "UPDATE event_log SET pruned_through = \(bind: last) WHERE pruned_through < \(bind: last)")
                return try await db.rows("DELETE FROM events WHERE seq <= \(bind: last) RETURNING seq").count
            }
            total += deleted
            if deleted < batch { return total }
        }
    }

    // MARK: typed events

    /// One page of what `recipient` missed after `seq` up to `head`, as Server-Sent Events: the
    /// bytes, how many events, and the sequence number the next page starts after.
    func replayPage(after seq: Int64, through head: Int64, recipient: Int64) async throws
        -> (bytes: ByteBuffer, count: Int, through: Int64)
    {
        let (entries, through) = try await entries(after: seq, through: head, recipient: recipient)
        var bytes = ByteBuffer()
        let events = try await events(entries)
        for (_, event) in events { bytes.writeImmutableBuffer(event.serverSentEvent) }
        return (bytes, events.count, through)
    }

    /// The typed event of each entry whose subject still exists and is shown, in order; entries
    /// of one seq share one event (and so its encodings). Posts and comments are read once per
    /// batch, without a reader's relation (the entries' query decided who may have them; comments
    /// by suspended people are not read); notifications are read per recipient, as the list shows them.
    func events(_ entries: [Entry]) async throws -> [(entry: Entry, event: StreamEvent)] {
        var postIDs: Set<Int64> = []
        var commentIDs: Set<Int64> = []
        var notificationIDs: [Int64: [Int64]] = [:]
        for entry in entries {
            switch entry.kind {
            case .postCreated, .postUpdated: if let id = entry.post { postIDs.insert(id) }
            case .commentCreated: if let id = entry.comment { commentIDs.insert(id) }
            case .notification:
                if let id = entry.notification { notificationIDs[entry.recipient, default: []].append(id) }
            default: break
            }
        }
        let posts = try await posts.postsForEvents(ids: Array(postIDs))
        let commentList = Array(commentIDs)
        let comments = try await db.read { db in try await CommentStore.comments(ids: commentList, on: db) }
        var notes: [Int64: PlazaAPI.Notification] = [:]
        for (recipient, ids) in notificationIDs {
            notes.merge(try await notifications.notifications(ids: ids, recipient: recipient)) { a, _ in a }
        }
        let filters = try await streamFilters(entries)
        var made: [Int64: StreamEvent] = [:]
        return entries.compactMap { entry in
            if let event = made[entry.seq] {
                return filters.hides(event.payload, for: entry) ? nil : (entry, event)
            }
            guard let kind = entry.kind,
                let payload = Self.payload(entry, posts: posts, comments: comments, notes: notes)
            else { return nil }
            let event = StreamEvent(seq: entry.seq, kind: kind, payload: payload)
            made[entry.seq] = event
            return filters.hides(payload, for: entry) ? nil : (entry, event)
        }
    }

    /// The keyword filters of the recipients of post and comment events, read in one query.
    private func streamFilters(_ entries: [Entry]) async throws -> StreamFilters {
        let recipients = Set(
            entries.filter { [.postCreated, .postUpdated, .commentCreated].contains($0.kind) }.map(\.recipient))
        guard !recipients.isEmpty else { return StreamFilters(filters: [:]) }
        let now = Timestamp.now.milliseconds
        let filters = try await db.read { db in
            try await KeywordFilterStore.active(of: Array(recipients), now: now, on: db)
        }
        return StreamFilters(filters: filters)
    }

    /// Events are shared by their recipients, so a filter only takes one out of a person's
    /// stream (a hiding filter: a post in their home feed or the public stream, a comment in a
    /// thread); warnings are for the client to show (PlazaKit applies the same `KeywordFilters`).
    struct StreamFilters {
        /// Each recipient's filters for home, public and thread, each phrase folded once a batch.
        let matchers: [Int64: [FilterContext: KeywordFilters]]

        init(filters: [Int64: [KeywordFilter]]) {
            matchers = filters.mapValues { mine in
                let contexts: [FilterContext] = [.home, .public, .thread]
                return Dictionary(uniqueKeysWithValues: contexts.map { ($0, KeywordFilters(mine, context: $0)) })
            }
        }

        func hides(_ payload: StreamEvent.Payload, for entry: Entry) -> Bool {
            guard let mine = matchers[entry.recipient] else { return false }
            let viewer = String(entry.recipient)
            switch payload {
            case .post(let post):
                guard post.author.id != viewer else { return false }
                return mine[entry.channel == .everyone ? .public : .home]?.verdict(for: post) == .hide
            case .comment(let comment):
                guard comment.author.id != viewer else { return false }
                return mine[.thread]?.verdict(for: comment) == .hide
            default: return false
            }
        }
    }

    private static func payload(
        _ entry: Entry, posts: [Int64: Post], comments: [Int64: Comment], notes: [Int64: PlazaAPI.Notification]
    ) -> StreamEvent.Payload? {
        switch entry.kind {
        case .postCreated, .postUpdated: entry.post.flatMap { posts[$0] }.map { .post($0) }
        case .postDeleted: entry.post.map { .deletedPost(DeletedPost(id: String($0))) }
        case .commentCreated: entry.comment.flatMap { comments[$0] }.map { .comment($0) }
        case .likeChanged:
            entry.data.flatMap { try? JSONDecoder().decode(LikeChange.self, from: Data($0.utf8)) }.map { .like($0) }
        case .notification: entry.notification.flatMap { notes[$0] }.map { .notification($0) }
        case .ready, .reset, nil: nil
        }
    }

    /// `id: …`, `event: …` and one `data:` line (the JSON has no line breaks).
    static func frame(id: Int64, event: StreamEventKind, json: some Collection<UInt8>) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString("id: \(id)\nevent: \(event.rawValue)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }
}
