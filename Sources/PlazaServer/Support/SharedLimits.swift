/// Rate-limit buckets and sign-in throttle entries shared by every app server on PostgreSQL
/// (tables `rate_buckets` and `login_throttle`, migration 6). Each check is one statement: an
/// `INSERT … ON CONFLICT DO UPDATE … RETURNING` computes the new state from the old row under
/// the row's lock, so concurrent requests on several servers never both take the last token.
/// The tables are UNLOGGED (no WAL: a check costs no fsync); PostgreSQL empties them after a
/// crash, which only forgets recent limits. Times come from the app servers' clocks (keep them
/// in sync with NTP; a bucket never refills for a negative interval). SQLite keeps both in memory.
struct PostgresLimitStore: RateBucketStore, ThrottleStore {
    let db: Database

    // MARK: rate buckets

    func take(_ key: String, limit: RateLimiter.Limit, now: Int64) async throws -> Int? {
        let perMilli = limit.perSecond / 1000
        // The bucket refilled to now, as an expression over the old row (`b`).
        let refilled: SQL =
            "LEAST(\(bind: limit.burst), b.tokens + GREATEST(0, \(bind: now) - b.updated_at) * \(bind: perMilli))"
        let query: SQL =
            "INSERT INTO rate_buckets AS b (name, tokens, updated_at, allowed) VALUES (\(bind: key), \(bind: limit.burst - 1), \(bind: now), true) "
            + "ON CONFLICT (name) DO UPDATE SET tokens = " + refilled + " - CASE WHEN " + refilled
            + " >= 1 THEN 1 ELSE 0 END, "
            + "updated_at = GREATEST(b.updated_at, \(bind: now)), allowed = " + refilled + " >= 1 "
            + "RETURNING tokens, allowed"
        guard let row = try await db.write(query).first else { return nil }
        if try row.decode(column: "allowed", as: Bool.self) { return nil }
        return RateBucket(tokens: try row.decode(column: "tokens", as: Double.self), updated: now).wait(limit: limit)
    }

    func peek(_ key: String) async throws -> RateBucket? {
        try await db.read { db in
            try await db.first("SELECT tokens, updated_at FROM rate_buckets WHERE name = \(bind: key)").map {
                RateBucket(tokens: try $0.decode(column: "tokens"), updated: try $0.decode(column: "updated_at"))
            }
        }
    }

    // MARK: throttle entries

    func lockedUntil(_ keys: [String], now: Int64) async throws -> Int64? {
        guard !keys.isEmpty else { return nil }
        return try await db.read { db in
            try await db.first("SELECT MAX(locked_until) AS until FROM login_throttle WHERE name IN (\(binds: keys))")?
                .decode(column: "until", as: Int64?.self)
        }
    }

    /// `ThrottleEntry.failing` in SQL, for all `keys` in one statement. Rows are written in key
    /// order, so two statements locking overlapping keys always lock them in the same order.
    func recordFailure(_ keys: [ThrottleKey], policy: LoginThrottle.Policy, now: Int64) async throws {
        guard !keys.isEmpty else { return }
        let window = policy.windowSeconds * 1000
        let base = policy.baseLockoutSeconds * 1000
        let maximum = policy.maxLockoutSeconds * 1000
        let values = keys.sorted { $0.key < $1.key }.map { budget -> SQL in
            let locked = budget.free <= 1 ? now + min(base, maximum) : 0
            return "(\(bind: budget.key), 1, \(bind: now), \(bind: locked), \(bind: budget.free))"
        }
        let reset: SQL =
            "(\(bind: now) - t.window_start >= \(bind: window) AND t.locked_until <= \(bind: now))"
        let failures: SQL = "(CASE WHEN " + reset + " THEN 1 ELSE t.failures + 1 END)"
        let over: SQL = failures + " >= EXCLUDED.budget"
        let lockout: SQL =
            "CAST(LEAST(\(bind: Double(base)) * power(2, LEAST(" + failures
            + " - EXCLUDED.budget, 20)), \(bind: Double(maximum))) AS BIGINT)"
        let query: SQL =
            "INSERT INTO login_throttle AS t (name, failures, window_start, locked_until, budget) VALUES "
            + values.joined(separator: ", ")
            + " ON CONFLICT (name) DO UPDATE SET failures = " + failures
            + ", locked_until = CASE WHEN " + over + " THEN \(bind: now) + " + lockout + " WHEN " + reset
            + " THEN 0 ELSE t.locked_until END"
            + ", window_start = CASE WHEN " + over + " OR " + reset + " THEN \(bind: now) ELSE t.window_start END"
            + ", budget = EXCLUDED.budget"
        try await db.write(query)
    }

    func remove(_ keys: [String]) async throws {
        guard !keys.isEmpty else { return }
        try await db.write("DELETE FROM login_throttle WHERE name IN (\(binds: keys))")
    }

    // MARK: expiry

    static let pruneBatch = 10_000

    /// Deletes buckets untouched for `bucketAge` ms (full again, the same as no row) and throttle
    /// entries past their window and lockout, in batches. Run by `MaintenanceService`.
    func prune(now: Int64, bucketAge: Int64, throttleAge: Int64) async throws {
        while try await db.write(
            "DELETE FROM rate_buckets WHERE name IN (SELECT name FROM rate_buckets WHERE updated_at < \(bind: now - bucketAge) LIMIT \(literal: Self.pruneBatch)) RETURNING 1 AS gone"
        ).count >= Self.pruneBatch {}
        while try await db.write(
            "DELETE FROM login_throttle WHERE name IN (SELECT name FROM login_throttle WHERE window_start < \(bind: now - throttleAge) AND locked_until < \(bind: now) LIMIT \(literal: Self.pruneBatch)) RETURNING 1 AS gone"
        ).count >= Self.pruneBatch {}
    }
}
