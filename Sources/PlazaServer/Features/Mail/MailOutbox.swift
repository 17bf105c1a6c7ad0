import Foundation
import PlazaAPI

/// The durable queue of outgoing mail (`mail_outbox`). A message is added in the transaction
/// that made it (a token and the mail carrying it commit together), claimed by `MailService`
/// with a lease (so a server that dies mid-delivery leaves it to be tried again), and retried
/// with growing waits until it is sent or given up.
struct MailOutbox: Sendable {
    let db: Database
    let ids: IDGenerator

    /// Waits after each failed attempt: 30 s, 2 min, 8 min, 32 min, then up to 6 h; after
    /// `maxAttempts` the message is marked failed (about 27 hours after the first try).
    static let maxAttempts = 10
    static func retryDelayMillis(afterAttempt attempt: Int) -> Int64 {
        let base: Int64 = 30_000
        return min(base << Int64(2 * max(0, min(attempt - 1, 10))), 6 * 3_600_000)
    }

    /// Sent messages are listed for this long, then deleted.
    static let keepSentMillis: Int64 = 30 * 86_400_000

    /// Queues `message` in the caller's transaction; the caller wakes the worker after committing.
    func enqueue(_ message: MailMessage, now: Int64 = Timestamp.now.milliseconds, on db: Connection) async throws {
        try await db.exec(
            """
            INSERT INTO mail_outbox (id, kind, recipient, subject, text_body, html_body, state, attempts, next_attempt_at, created_at)
            VALUES (\(bind: ids.next()), \(bind: message.kind.rawValue), \(bind: message.to), \(bind: message.subject),
                    \(bind: message.text), \(bind: message.html), 'pending', 0, \(bind: now), \(bind: now))
            """)
    }

    struct Job: Sendable, Equatable {
        var id: Int64
        var message: MailMessage
        /// Attempts before this one.
        var attempts: Int
    }

    /// Takes up to `limit` due messages for one delivery attempt each; their next attempt is
    /// pushed `leaseMillis` ahead so no other worker takes them meanwhile.
    func claimDue(now: Int64, limit: Int, leaseMillis: Int64) async throws -> [Job] {
        let skipLocked = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        let rows = try await db.write(
            """
            UPDATE mail_outbox SET next_attempt_at = \(bind: now + leaseMillis), attempts = attempts + 1
            WHERE id IN (SELECT id FROM mail_outbox WHERE state = 'pending' AND next_attempt_at <= \(bind: now)
                ORDER BY next_attempt_at LIMIT \(bind: limit)\(skipLocked))
            RETURNING id, kind, recipient, subject, text_body, html_body, attempts
            """)
        return try rows.compactMap { row in
            guard let kind = MailMessage.Kind(rawValue: try row.decode(column: "kind", as: String.self)) else {
                return nil
            }
            return Job(
                id: try row.decode(column: "id", as: Int64.self),
                message: MailMessage(
                    kind: kind, to: try row.decode(column: "recipient", as: String.self),
                    subject: try row.decode(column: "subject", as: String.self),
                    text: try row.decode(column: "text_body", as: String.self),
                    html: try row.decode(column: "html_body", as: String.self)),
                attempts: try row.decode(column: "attempts", as: Int.self) - 1)
        }
    }

    /// Marks it sent and forgets its bodies, which held a token.
    func markSent(_ id: Int64, now: Int64 = Timestamp.now.milliseconds) async throws {
        try await db.write { db in
            try await db.exec(
                """
                UPDATE mail_outbox SET state = 'sent', sent_at = \(bind: now), text_body = '', html_body = '', last_error = NULL
                WHERE id = \(bind: id)
                """)
        }
    }

    /// Mails waiting to be sent (or retried), counted up to `cap` (`mail_outbox_state`).
    func pendingCount(cap: Int) async throws -> Int {
        try await db.read { db in
            try await db.first(
                "SELECT count(*) AS n FROM (SELECT 1 FROM mail_outbox WHERE state = 'pending' LIMIT \(bind: cap)) AS q"
            )
        }.map { Int(try $0.decode(column: "n", as: Int64.self)) } ?? 0
    }

    /// Records a failed attempt: tried again after a wait, or given up when `permanent` or out of attempts.
    func markFailed(_ job: Job, error: String, permanent: Bool, now: Int64 = Timestamp.now.milliseconds)
        async throws
    {
        let attempt = job.attempts + 1
        let giveUp = permanent || attempt >= Self.maxAttempts
        let next = now + Self.retryDelayMillis(afterAttempt: attempt)
        let message = String(error.prefix(500))
        db.metrics?.deliveryFailed("mail")
        try await db.write { db in
            if giveUp {
                try await db.exec(
                    """
                    UPDATE mail_outbox SET state = 'failed', text_body = '', html_body = '', last_error = \(bind: message)
                    WHERE id = \(bind: job.id)
                    """)
            } else {
                try await db.exec(
                    "UPDATE mail_outbox SET next_attempt_at = \(bind: next), last_error = \(bind: message) WHERE id = \(bind: job.id)"
                )
            }
        }
    }

    /// The admins' view, newest first: everything or one state, keyset paginated by id.
    func list(state: String?, page: PageRequest) async throws -> Page<OutgoingMail> {
        var conditions: [SQL] = []
        if let state { conditions.append("state = \(bind: state)") }
        if let cursor = page.cursor { conditions.append("id < \(bind: cursor.id)") }
        let condition: SQL = conditions.isEmpty ? "" : "WHERE \(conditions.joined(separator: " AND "))"
        let all = try await db.read { db in
            try await db.rows(
                """
                SELECT id, kind, recipient, subject, state, attempts, next_attempt_at, created_at, sent_at, last_error
                FROM mail_outbox \(condition) ORDER BY id DESC LIMIT \(bind: page.limit + 1)
                """)
        }
        let (rows, next) = try page.split(all) { try Cursor(row: $0, time: "created_at") }
        return Page(items: try rows.map(Self.outgoingMail), nextCursor: next)
    }

    private static func outgoingMail(_ row: Row) throws -> OutgoingMail {
        let state = try row.decode(column: "state", as: String.self)
        return OutgoingMail(
            id: String(try row.decode(column: "id", as: Int64.self)),
            kind: try row.decode(column: "kind", as: String.self),
            to: try row.decode(column: "recipient", as: String.self),
            subject: try row.decode(column: "subject", as: String.self),
            state: state, attempts: try row.decode(column: "attempts", as: Int.self),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            sentAt: try row.decode(column: "sent_at", as: Int64?.self).map(Timestamp.init(milliseconds:)),
            nextAttemptAt: state == "pending"
                ? Timestamp(milliseconds: try row.decode(column: "next_attempt_at", as: Int64.self)) : nil,
            lastError: try row.decode(column: "last_error", as: String?.self))
    }

    /// Deletes sent and failed messages older than `keepSentMillis` (ids are time-ordered).
    func prune(now: Int64) async throws {
        let before = (now - Self.keepSentMillis - IDGenerator.epoch) << 22
        try await db.write { db in
            for state in ["sent", "failed"] {
                try await db.exec("DELETE FROM mail_outbox WHERE state = \(bind: state) AND id < \(bind: before)")
            }
        }
    }
}
