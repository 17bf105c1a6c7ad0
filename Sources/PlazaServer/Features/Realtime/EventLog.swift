import NIOConcurrencyHelpers
import PlazaAPI

/// The write side of the event log: every visible change appends an event, in the transaction
/// that makes the change, with the people who may receive it (`event_inbox`).
///
/// `seq` grows in the order events are appended, not always in commit order: on PostgreSQL two
/// transactions may append at once and commit the other way round. Readers therefore read only
/// up to a head below which nothing is still uncommitted (`EventFeed.bounds`): each appending
/// transaction holds the append lock in *share* mode from its append to its commit, so appenders
/// never wait for each other, and finding the head takes the lock exclusively for an instant,
/// which waits for the appenders then in flight to end. Every appending transaction announces
/// the new seq with `NOTIFY plaza_events`, which every app server's hub listens to. SQLite has
/// one writer, so there appending order is commit order.
///
/// Lock order: `write` collects a transaction's events while its body runs and appends them
/// only after the body has returned, so the append lock is always the last lock a transaction
/// takes, and its holder only inserts rows nobody else can lock (`events`, `event_inbox`) before
/// it commits. No transaction can then hold the lock and wait for a row lock held by one that
/// waits behind a head reader for the lock.
struct EventLog: Sendable {
    let db: Database
    let signal: EventSignal
    /// Wakes the push worker after a commit that recorded a notification.
    let pushes: WorkSignal

    static let channel = "plaza_events"
    static let appendLock = 7_215_002

    /// Runs `body` in a write transaction, appends the events it recorded with `append` once
    /// it has returned, and wakes this server's hub (and push worker, for notifications) once
    /// the transaction has committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        let (result, notified) = try await db.write { connection in
            var connection = connection
            let pending = Pending()
            connection.events = pending
            let result = try await body(connection)
            let entries = pending.take()
            try await Self.flush(entries, on: connection)
            return (result, entries.contains { $0.0.kind == .notification })
        }
        signal.poke()
        if notified { pushes.wake() }
        return result
    }

    /// Who may receive an event.
    enum Audience: Sendable {
        case users([Int64])
        /// Those who see the post in their home feed: its author, the author's followers and
        /// the members of its spaces, less anyone with a block either way.
        case postReaders(post: Int64, author: Int64)
        /// `postReaders` with the post's spaces read when the event was recorded (a deleted
        /// post's spaces are gone by the time the events are appended).
        case readers(author: Int64, spaces: [Int64])
        /// The post's readers as they are when the log is read (`EventFeed.recipientsSQL`):
        /// for `post.created`, which would otherwise write a row per follower.
        case foundWhenRead
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

    /// The events a transaction has recorded and not yet appended.
    final class Pending: Sendable {
        private let entries = NIOLockedValueBox([(Event, Audience)]())
        func add(_ event: Event, _ audience: Audience) { entries.withLockedValue { $0.append((event, audience)) } }
        func take() -> [(Event, Audience)] {
            entries.withLockedValue { entries in
                defer { entries = [] }
                return entries
            }
        }
    }

    /// Records `event` for `audience`: inside `write`, it is appended when the body returns;
    /// elsewhere at once.
    static func append(_ event: Event, to audience: Audience, on db: Connection) async throws {
        if case .users(let users) = audience, users.isEmpty { return }
        var audience = audience
        if case .postReaders(let post, let author) = audience {
            let spaces = try await db.rows("SELECT space_id FROM post_spaces WHERE post_id = \(bind: post)").map {
                try $0.decode(column: "space_id", as: Int64.self)
            }
            audience = .readers(author: author, spaces: spaces)
        }
        if let pending = db.events {
            pending.add(event, audience)
        } else {
            try await flush([(event, audience)], on: db)
        }
    }

    /// Appends the events: on PostgreSQL under the append lock in share mode, the transaction's
    /// last lock, held until it commits. All of them go in one statement, and the people named
    /// by `.users` audiences in one more (a like appends two events, its notification's and its
    /// count's, and each was two statements). A sequence numbers a statement's rows in the
    /// order of its `VALUES` on both databases, so the events take the returned `seq`s in
    /// ascending order, whatever order `RETURNING` lists them in.
    private static func flush(_ entries: [(Event, Audience)], on db: Connection) async throws {
        guard !entries.isEmpty else { return }
        if let lock = db.dialect.advisoryLock(appendLock, shared: true) { try await db.exec("SELECT \(lock)") }
        let now = Timestamp.now.milliseconds
        let values = entries.map { event, _ -> SQL in
            """
            (\(bind: event.kind.rawValue), \(bind: event.actor), \(bind: event.post), \(bind: event.comment), \
            \(bind: event.notification), \(bind: event.data), \(bind: now))
            """
        }
        let seqs = try await db.rows(
            """
            INSERT INTO events (kind, actor_id, post_id, comment_id, notification_id, data, created_at)
            VALUES \(values.joined(separator: ", ")) RETURNING seq
            """
        ).map { try $0.decode(column: "seq", as: Int64.self) }.sorted()
        var named: [SQL] = []
        for ((_, audience), seq) in zip(entries, seqs) {
            switch audience {
            case .users(let users):
                named += Set(users).map { user -> SQL in "(\(bind: user), \(bind: seq))" }
            case .readers(let author, let spaces):
                try await db.exec(readersInboxSQL(seq: seq, author: author, spaces: spaces))
            case .postReaders:
                break  // resolved to `.readers` by `append`
            case .foundWhenRead:
                break
            }
        }
        if !named.isEmpty {
            try await db.exec("INSERT INTO event_inbox (recipient_id, seq) VALUES \(named.joined(separator: ", "))")
        }
        if let last = seqs.last, let notify = db.dialect.notify(channel, String(last)) { try await db.exec(notify) }
    }

    /// Puts event `seq` in the inboxes of a post's readers: its author, the author's followers
    /// and the members of `spaces`, less anyone with a block either way.
    private static func readersInboxSQL(seq: Int64, author: Int64, spaces: [Int64]) -> SQL {
        let members: SQL =
            spaces.isEmpty ? "" : " UNION SELECT m.user_id FROM space_members m WHERE m.space_id IN (\(binds: spaces))"
        return """
            INSERT INTO event_inbox (recipient_id, seq)
            SELECT r.id, \(bind: seq) FROM (
                SELECT CAST(\(bind: author) AS BIGINT) AS id
                UNION SELECT f.follower_id FROM follows f WHERE f.followee_id = \(bind: author)\(members)
            ) r
            WHERE \(Visibility.person("r.id", seenBy: author))
            """
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
