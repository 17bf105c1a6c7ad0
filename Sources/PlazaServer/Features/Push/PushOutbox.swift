import PlazaAPI
import SQLKit

/// The durable queue of pushes (`push_deliveries`): one row per notification and device,
/// added in the transaction that recorded the notification, claimed by `PushService` with a
/// lease, and retried with growing waits until it is sent, given up or found moot.
struct PushOutbox: Sendable {
    let db: Database

    static let maxAttempts = 8
    /// 15 s, 1 min, 4 min, 16 min, then hourly: about 4 h 20 min after the first try it is given up.
    static func retryDelayMillis(afterAttempt attempt: Int) -> Int64 {
        min(15_000 << Int64(2 * max(0, min(attempt - 1, 10))), 3_600_000)
    }

    /// A notification that gains actors after its push went out is pushed again no sooner
    /// than this after the last one, as one push for the whole burst.
    static let coalesceMillis: Int64 = 60_000
    /// Finished deliveries are kept this long (the coalescing window needs the last one's time).
    static let keepMillis: Int64 = 7 * 86_400_000

    /// Owes the recipient's devices a push of `notification` (new, or joined by an actor).
    /// Called by `NotificationStore.notify` in the causing transaction: one indexed insert.
    static func enqueue(notification: Int64, recipient: Int64, now: Int64, on db: Connection) async throws {
        try await db.exec(
            """
            INSERT INTO push_deliveries (notification_id, device_id, recipient_id, state, attempts, next_attempt_at, created_at)
            SELECT \(bind: notification), d.id, \(bind: recipient), 'pending', 0, \(bind: now), \(bind: now)
            FROM push_devices d WHERE d.user_id = \(bind: recipient)
            ON CONFLICT (notification_id, device_id) DO UPDATE SET state = 'pending', attempts = 0, last_error = NULL,
                next_attempt_at = CASE WHEN push_deliveries.sent_at + \(bind: coalesceMillis) > excluded.next_attempt_at
                    THEN push_deliveries.sent_at + \(bind: coalesceMillis) ELSE excluded.next_attempt_at END
            WHERE push_deliveries.state <> 'pending'
            """)
    }

    /// A delivery to make, with what it needs: the device and the recipient's push settings.
    struct Job: Sendable {
        var notification: Int64
        var device: Int64
        var recipient: Int64
        /// Attempts before this one.
        var attempts: Int
        var platform: PushPlatform
        var address: String
        var environment: String?
        var bundleID: String?
        var p256dh: String?
        var auth: String?
        /// The device's owner now: not the recipient when it moved to someone else since.
        var owner: Int64
        var preferences: String
        var unread: Int
    }

    /// Takes up to `limit` due deliveries for one attempt each, pushing their next attempt
    /// `leaseMillis` ahead so no other worker takes them meanwhile.
    func claimDue(now: Int64, limit: Int, leaseMillis: Int64) async throws -> [Job] {
        let skipLocked = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        return try await db.write { db in
            let claimed = try await db.rows(
                """
                UPDATE push_deliveries SET next_attempt_at = \(bind: now + leaseMillis), attempts = attempts + 1
                WHERE (notification_id, device_id) IN (SELECT notification_id, device_id FROM push_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= \(bind: now)
                    ORDER BY next_attempt_at LIMIT \(bind: limit)\(skipLocked))
                RETURNING notification_id, device_id
                """)
            guard !claimed.isEmpty else { return [] }
            let keys = try claimed.map { row -> SQLQueryString in
                "(\(bind: try row.decode(column: "notification_id", as: Int64.self)), \(bind: try row.decode(column: "device_id", as: Int64.self)))"
            }
            let rows = try await db.rows(
                """
                SELECT q.notification_id, q.device_id, q.recipient_id, q.attempts, d.platform, d.address, d.environment,
                    d.bundle_id, d.p256dh, d.auth, d.user_id AS owner_id, u.preferences, u.unread_notifications
                FROM push_deliveries q JOIN push_devices d ON d.id = q.device_id JOIN users u ON u.id = q.recipient_id
                WHERE (q.notification_id, q.device_id) IN (VALUES \(keys.joined(separator: ", ")))
                """)
            return try rows.map { row in
                Job(
                    notification: try row.decode(column: "notification_id", as: Int64.self),
                    device: try row.decode(column: "device_id", as: Int64.self),
                    recipient: try row.decode(column: "recipient_id", as: Int64.self),
                    attempts: try row.decode(column: "attempts", as: Int.self) - 1,
                    platform: PushPlatform(rawValue: try row.decode(column: "platform", as: String.self)) ?? .webpush,
                    address: try row.decode(column: "address", as: String.self),
                    environment: try row.decode(column: "environment", as: String?.self),
                    bundleID: try row.decode(column: "bundle_id", as: String?.self),
                    p256dh: try row.decode(column: "p256dh", as: String?.self),
                    auth: try row.decode(column: "auth", as: String?.self),
                    owner: try row.decode(column: "owner_id", as: Int64.self),
                    preferences: try row.decode(column: "preferences", as: String.self),
                    unread: try row.decode(column: "unread_notifications", as: Int.self))
            }
        }
    }

    /// How one attempt ended.
    enum Outcome: Sendable, Equatable {
        case sent
        /// Nothing to send: the notification is hidden, read or turned off, or the device moved.
        case moot(String)
        /// Try again after the backoff (or `after` milliseconds, if later), until `maxAttempts`.
        case retry(String, afterMillis: Int64?)
        /// The push service refused this message for good.
        case failed(String)
        /// The push service says the device or subscription is gone: it is removed.
        case gone(String)
    }

    func record(_ outcome: Outcome, for job: Job, now: Int64 = Timestamp.now.milliseconds) async throws {
        let key: SQLQueryString = "notification_id = \(bind: job.notification) AND device_id = \(bind: job.device)"
        try await db.write { db in
            switch outcome {
            case .sent:
                try await db.exec(
                    "UPDATE push_deliveries SET state = 'sent', sent_at = \(bind: now), last_error = NULL WHERE \(key)")
                try await db.exec("UPDATE push_devices SET last_used_at = \(bind: now) WHERE id = \(bind: job.device)")
            case .moot(let reason):
                try await db.exec(
                    "UPDATE push_deliveries SET state = 'moot', last_error = \(bind: reason) WHERE \(key)")
            case .failed(let error):
                try await db.exec(
                    "UPDATE push_deliveries SET state = 'failed', last_error = \(bind: String(error.prefix(500))) WHERE \(key)"
                )
            case .retry(let error, let after):
                let attempt = job.attempts + 1
                if attempt >= Self.maxAttempts {
                    try await db.exec(
                        "UPDATE push_deliveries SET state = 'failed', last_error = \(bind: String(error.prefix(500))) WHERE \(key)"
                    )
                } else {
                    let next = now + max(Self.retryDelayMillis(afterAttempt: attempt), after ?? 0)
                    try await db.exec(
                        """
                        UPDATE push_deliveries SET next_attempt_at = \(bind: next), last_error = \(bind: String(error.prefix(500)))
                        WHERE \(key)
                        """)
                }
            case .gone:
                // Its deliveries go with it.
                try await db.exec("DELETE FROM push_devices WHERE id = \(bind: job.device)")
            }
        }
    }

    /// Deletes finished deliveries older than `keepMillis`.
    func prune(now: Int64) async throws {
        try await db.write(
            "DELETE FROM push_deliveries WHERE state <> 'pending' AND created_at < \(bind: now - Self.keepMillis)")
    }
}
