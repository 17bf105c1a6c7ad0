import PlazaAPI

/// The durable queue of pushes (`push_deliveries`): one row per notification and device,
/// added in the transaction that recorded the notification, claimed by `PushService` with a
/// lease, and retried with growing waits until it is sent, given up or found moot.
struct PushOutbox: Sendable {
    let db: Database

    static let maxAttempts = 8
    /// 15 s, 1 min, 4 min, 16 min, then hourly: given up at the 8th failure, about 3 h 20 min
    /// after the first try.
    static func retryDelayMillis(afterAttempt attempt: Int) -> Int64 {
        min(15_000 << Int64(2 * max(0, min(attempt - 1, 10))), 3_600_000)
    }

    /// A notification that gains actors after its push went out is pushed again no sooner
    /// than this after the last one, as one push for the whole burst.
    static let coalesceMillis: Int64 = 60_000
    /// Finished deliveries are kept this long (the coalescing window needs the last one's time).
    static let keepMillis: Int64 = 7 * 86_400_000

    /// Owes the recipient's devices a push of `notification` (new, or joined by an actor).
    /// Called by `NotificationStore.notify` in the causing transaction: one indexed insert. A
    /// waiting push keeps its time and counts a new `generation` (one being sent right now is
    /// then followed by another); a sent one is re-armed no sooner than `coalesceMillis` after it.
    /// The devices are read `FOR KEY SHARE` on PostgreSQL, so one deleted meanwhile (signed out,
    /// gone) is skipped instead of failing the insert's foreign key.
    static func enqueue(notification: Int64, recipient: Int64, now: Int64, on db: Connection) async throws {
        let keyShare = db.dialect.rowLock(.keyShare) ?? ""
        try await db.exec(
            """
            INSERT INTO push_deliveries (notification_id, device_id, recipient_id, state, attempts, next_attempt_at, created_at)
            SELECT \(bind: notification), d.id, \(bind: recipient), 'pending', 0, \(bind: now), \(bind: now)
            FROM push_devices d WHERE d.user_id = \(bind: recipient)\(keyShare)
            ON CONFLICT (notification_id, device_id) DO UPDATE SET generation = push_deliveries.generation + 1,
                attempts = CASE WHEN push_deliveries.state = 'pending' THEN push_deliveries.attempts ELSE 0 END,
                next_attempt_at = CASE
                    WHEN push_deliveries.state = 'pending' THEN push_deliveries.next_attempt_at
                    WHEN push_deliveries.sent_at + \(bind: coalesceMillis) > excluded.next_attempt_at
                        THEN push_deliveries.sent_at + \(bind: coalesceMillis)
                    ELSE excluded.next_attempt_at END,
                state = 'pending', last_error = NULL
            """)
    }

    /// A delivery to make, with what it needs: the device and the recipient's push settings.
    struct Job: Sendable {
        var notification: Int64
        var device: Int64
        var recipient: Int64
        /// Attempts before this one.
        var attempts: Int
        /// The row's generation when claimed: a newer one means the notification changed since.
        var generation: Int
        /// Which claim of the row this is: a later one means this one lapsed.
        var claim: Int
        var platform: PushPlatform
        var address: String
        var environment: String?
        var bundleID: String?
        var p256dh: String?
        var auth: String?
        /// The device's owner now: not the recipient when it moved to someone else since.
        var owner: Int64
        /// A subscription made through another door: the settings it stored (`PushDevices.Registration`).
        var appSettings: String? = nil
        /// Its app's access token, sealed (`AppPushTokens`).
        var appToken: String? = nil
        var preferences: String
        var unread: Int
    }

    /// The keys of up to `limit` due deliveries, soonest first (the partial index `push_deliveries_due`).
    static func dueSQL(now: Int64, limit: Int) -> SQL {
        """
        SELECT notification_id, device_id FROM push_deliveries WHERE state = 'pending' AND next_attempt_at <= \(bind: now) \
        ORDER BY next_attempt_at LIMIT \(bind: limit)
        """
    }

    /// Takes up to `limit` due deliveries for one attempt each, pushing their next attempt
    /// `leaseMillis` ahead so no other worker takes them meanwhile.
    func claimDue(now: Int64, limit: Int, leaseMillis: Int64) async throws -> [Job] {
        let skipLocked = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        return try await db.write { db in
            let claimed = try await db.rows(
                """
                UPDATE push_deliveries SET next_attempt_at = \(bind: now + leaseMillis), attempts = attempts + 1,
                    claims = claims + 1
                WHERE (notification_id, device_id) IN (\(Self.dueSQL(now: now, limit: limit))\(skipLocked))
                RETURNING notification_id, device_id
                """)
            guard !claimed.isEmpty else { return [] }
            let keys = try claimed.map { row -> SQL in
                "(\(bind: try row.decode(column: "notification_id", as: Int64.self)), \(bind: try row.decode(column: "device_id", as: Int64.self)))"
            }
            let rows = try await db.rows(
                """
                SELECT q.notification_id, q.device_id, q.recipient_id, q.attempts, q.generation, q.claims, d.platform,
                    d.address,
                    d.environment,
                    d.bundle_id, d.p256dh, d.auth, d.mastodon, d.app_token, d.user_id AS owner_id, u.preferences, u.unread_notifications
                FROM push_deliveries q JOIN push_devices d ON d.id = q.device_id JOIN users u ON u.id = q.recipient_id
                WHERE (q.notification_id, q.device_id) IN (VALUES \(keys.joined(separator: ", ")))
                """)
            return try rows.map { row in
                Job(
                    notification: try row.decode(column: "notification_id", as: Int64.self),
                    device: try row.decode(column: "device_id", as: Int64.self),
                    recipient: try row.decode(column: "recipient_id", as: Int64.self),
                    attempts: try row.decode(column: "attempts", as: Int.self) - 1,
                    generation: try row.decode(column: "generation", as: Int.self),
                    claim: try row.decode(column: "claims", as: Int.self),
                    platform: PushPlatform(rawValue: try row.decode(column: "platform", as: String.self)) ?? .webpush,
                    address: try row.decode(column: "address", as: String.self),
                    environment: try row.decode(column: "environment", as: String?.self),
                    bundleID: try row.decode(column: "bundle_id", as: String?.self),
                    p256dh: try row.decode(column: "p256dh", as: String?.self),
                    auth: try row.decode(column: "auth", as: String?.self),
                    owner: try row.decode(column: "owner_id", as: Int64.self),
                    appSettings: try row.decode(column: "mastodon", as: String?.self),
                    appToken: try row.decode(column: "app_token", as: String?.self),
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

    /// Pushes waiting to be sent (or retried), counted up to `cap` (`push_deliveries_due`).
    func pendingCount(cap: Int) async throws -> Int {
        try await db.read { db in
            try await db.first(
                "SELECT count(*) AS n FROM (SELECT 1 FROM push_deliveries WHERE state = 'pending' LIMIT \(bind: cap)) AS q"
            )
        }.map { Int(try $0.decode(column: "n", as: Int64.self)) } ?? 0
    }

    /// Records how the attempt ended, if the claim is still this worker's (a claim that outlived
    /// its lease was taken again, and the later attempt records). A push sent or found moot
    /// while the notification changed (a newer generation) stays pending: sent, it is sent
    /// again `coalesceMillis` later; moot, it is looked at again at once.
    func record(_ outcome: Outcome, for job: Job, now: Int64 = Timestamp.now.milliseconds) async throws {
        let claim: SQL = """
            notification_id = \(bind: job.notification) AND device_id = \(bind: job.device) \
            AND state = 'pending' AND claims = \(bind: job.claim)
            """
        let current: SQL = "\(claim) AND generation = \(bind: job.generation)"
        switch outcome {
        case .failed, .retry: db.metrics?.deliveryFailed("push")
        case .sent, .moot, .gone: break
        }
        try await db.write { db in
            switch outcome {
            case .sent:
                // The device's row first, then the delivery's: the order deletes of devices take.
                try await db.exec("UPDATE push_devices SET last_used_at = \(bind: now) WHERE id = \(bind: job.device)")
                let done = try await db.rows(
                    "UPDATE push_deliveries SET state = 'sent', sent_at = \(bind: now), last_error = NULL WHERE \(current) RETURNING attempts"
                )
                if done.isEmpty {
                    try await db.exec(
                        """
                        UPDATE push_deliveries SET sent_at = \(bind: now), attempts = 0,
                            next_attempt_at = \(bind: now + Self.coalesceMillis) WHERE \(claim)
                        """)
                }
            case .moot(let reason):
                let done = try await db.rows(
                    "UPDATE push_deliveries SET state = 'moot', last_error = \(bind: reason) WHERE \(current) RETURNING attempts"
                )
                if done.isEmpty {
                    try await db.exec(
                        "UPDATE push_deliveries SET attempts = 0, next_attempt_at = \(bind: now) WHERE \(claim)")
                }
            case .failed(let error):
                try await db.exec(
                    "UPDATE push_deliveries SET state = 'failed', last_error = \(bind: String(error.prefix(500))) WHERE \(claim)"
                )
            case .retry(let error, let after):
                let attempt = job.attempts + 1
                if attempt >= Self.maxAttempts {
                    try await db.exec(
                        "UPDATE push_deliveries SET state = 'failed', last_error = \(bind: String(error.prefix(500))) WHERE \(claim)"
                    )
                } else {
                    let wait = max(Self.retryDelayMillis(afterAttempt: attempt), min(max(after ?? 0, 0), 3_600_000))
                    try await db.exec(
                        """
                        UPDATE push_deliveries SET next_attempt_at = \(bind: now + wait), last_error = \(bind: String(error.prefix(500)))
                        WHERE \(claim)
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
