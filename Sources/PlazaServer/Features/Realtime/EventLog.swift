import PlazaAPI
import SQLKit

/// The write side of the event log: every visible change appends an event, in the transaction
/// that makes the change, with the people who may receive it (`event_inbox`).
///
/// `seq` must grow in commit order, or a reader that has seen seq 11 could later miss a 10
/// committed after it. SQLite has one writer, so that holds by itself. On PostgreSQL each
/// appending transaction takes one advisory lock just before it appends (its last statements),
/// held until commit, and announces the new seq with `NOTIFY plaza_events`, which every app
/// server's hub listens to. The cost is that appending transactions commit one at a time.
struct EventLog: Sendable {
    let db: Database
    let signal: EventSignal

    static let channel = "plaza_events"
    private static let appendLock = 7_215_002

    /// Runs `body` in a write transaction and wakes this server's hub once it has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        let result = try await db.write(body)
        signal.poke()
        return result
    }

    /// Who may receive an event.
    enum Audience: Sendable {
        case users([Int64])
        /// Those who see the post in their home feed: its author, the author's followers and
        /// the members of its spaces, less anyone with a block either way.
        case postReaders(post: Int64, author: Int64)
    }

    struct Event: Sendable {
        var kind: StreamEventKind
        var actor: Int64
        var post: Int64?
        var comment: Int64?
        var notification: Int64?
        /// Small JSON known only at write time (a like change's new count).
        var data: String?
    }

    /// Appends `event` for `audience`. Call it last in the transaction (see the type's note).
    static func append(_ event: Event, to audience: Audience, on db: Connection) async throws {
        if case .users(let users) = audience, users.isEmpty { return }
        if db.kind == .postgres { try await db.exec("SELECT pg_advisory_xact_lock(\(literal: appendLock))") }
        guard
            let seq = try await db.first(
                """
                INSERT INTO events (kind, actor_id, post_id, comment_id, notification_id, data, created_at)
                VALUES (\(bind: event.kind.rawValue), \(bind: event.actor), \(bind: event.post), \(bind: event.comment),
                    \(bind: event.notification), \(bind: event.data), \(bind: Timestamp.now.milliseconds))
                RETURNING seq
                """)?.decode(column: "seq", as: Int64.self)
        else { return }
        switch audience {
        case .users(let users):
            let rows = Set(users).map { user -> SQLQueryString in "(\(bind: user), \(bind: seq))" }
            try await db.exec("INSERT INTO event_inbox (recipient_id, seq) VALUES \(rows.joined(separator: ", "))")
        case .postReaders(let post, let author):
            try await db.exec(
                """
                INSERT INTO event_inbox (recipient_id, seq)
                SELECT r.id, \(bind: seq) FROM (
                    SELECT CAST(\(bind: author) AS BIGINT) AS id
                    UNION SELECT f.follower_id FROM follows f WHERE f.followee_id = \(bind: author)
                    UNION SELECT m.user_id FROM post_spaces ps JOIN space_members m ON m.space_id = ps.space_id WHERE ps.post_id = \(bind: post)
                ) r
                WHERE NOT \(PeopleStore.blockedEitherWay(viewer: author, column: "r.id"))
                """)
        }
        if db.kind == .postgres { try await db.exec("SELECT pg_notify(\(literal: channel), \(bind: String(seq)))") }
    }
}

/// Wakes this server's hub: after a local commit, or when PostgreSQL announces one from
/// another server. Pokes that arrive while the hub is busy fold into one.
final class EventSignal: Sendable {
    let pokes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (pokes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func poke() { continuation.yield() }
}
