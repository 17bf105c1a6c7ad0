import Foundation
import PlazaAPI

/// Profiles, follows and blocks. Follower and following counts are kept on write.
package struct PeopleStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog
    let home: HomeTimeline

    /// Locks the rows of `users` (their counters) in the order of their ids, as the first locks
    /// on people a PostgreSQL transaction takes: two transactions that change counters of the
    /// same people (a follow each way, a follow and a post's mention) then wait for each other
    /// instead of deadlocking. Post rows come before people (a comment locks its post, then
    /// notifies), so a transaction that locks a post does so before calling this. SQLite has one
    /// writer and needs nothing.
    static func lockInOrder(_ users: [Int64], on db: Connection) async throws {
        guard !users.isEmpty, let lock = db.dialect.rowLock(.noKeyUpdate) else { return }
        try await db.exec("SELECT id FROM users WHERE id IN (\(binds: Array(Set(users)).sorted())) ORDER BY id\(lock)")
    }

    /// The id of the user named `username` as `viewer` may reach it: 404 when there is none, or
    /// when `hiding` hides them from the viewer (the profile and everything under it).
    package func userID(username: String, viewer: Int64? = nil, hiding: Visibility.ProfileHiding = .eitherWay)
        async throws
        -> Int64
    {
        let key = username.lowercased()
        guard key.utf8.count <= 30,
            let row = try await db.read({ db in
                try await db.first(Self.userIDSQL(usernameKey: key, viewer: viewer, hiding: hiding))
            })
        else { throw PlazaError.notFound("User") }
        return try row.decode(column: "id", as: Int64.self)
    }

    /// The ids of the people named `usernames` (as written, any case) whom `viewer` may see, by
    /// their lower-cased names: the people a text mentions, in one read.
    package func userIDs(usernames: some Collection<String>, viewer: Int64?) async throws -> [String: Int64] {
        let keys = Array(Set(usernames.map { $0.lowercased() }.filter { $0.utf8.count <= 30 })).sorted().prefix(200)
        guard !keys.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows(
                "SELECT u.id, u.username_key FROM users u WHERE u.username_key IN (\(binds: Array(keys))) AND \(Visibility.profile(seenBy: viewer, hiding: .eitherWay))"
            )
        }
        var ids: [String: Int64] = [:]
        for row in rows {
            ids[try row.decode(column: "username_key", as: String.self)] = try row.decode(column: "id", as: Int64.self)
        }
        return ids
    }

    static func userIDSQL(usernameKey: String, viewer: Int64? = nil, hiding: Visibility.ProfileHiding = .eitherWay)
        -> SQL
    {
        "SELECT u.id FROM users u WHERE u.username_key = \(bind: usernameKey) AND \(Visibility.profile(seenBy: viewer, hiding: hiding))"
    }

    package func profile(userID: Int64, viewer: Int64?, hiding: Visibility.ProfileHiding = .eitherWay) async throws
        -> User
    {
        guard
            let row = try await db.read({ db in
                try await db.first(
                    "SELECT \(UserRecord.columns) FROM users u WHERE u.id = \(bind: userID) AND \(Visibility.profile(seenBy: viewer, hiding: hiding))"
                )
            })
        else { throw PlazaError.notFound("User") }
        return try await users([UserRecord(row: row)], viewer: viewer)[0]
    }

    /// The profiles among `ids` the viewer may see, in one read (and one for the relations).
    package func profiles(ids: [Int64], viewer: Int64?, hiding: Visibility.ProfileHiding = .eitherWay) async throws
        -> [User]
    {
        guard !ids.isEmpty else { return [] }
        let rows = try await db.read { db in
            try await db.rows(
                "SELECT \(UserRecord.columns) FROM users u WHERE u.id IN (\(binds: ids)) AND \(Visibility.profile(seenBy: viewer, hiding: hiding))"
            )
        }
        return try await users(rows.map(UserRecord.init(row:)), viewer: viewer)
    }

    /// Renders users with the viewer's relation to each, in one batched look-up.
    func users(_ records: [UserRecord], viewer: Int64?) async throws -> [User] {
        guard let viewer, !records.isEmpty else { return records.map { $0.user(viewer: nil) } }
        let ids = records.map(\.id)
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT 1 AS relation, followee_id AS id FROM follows WHERE follower_id = \(bind: viewer) AND followee_id IN (\(binds: ids))
                UNION ALL
                SELECT 2 AS relation, follower_id AS id FROM follows WHERE followee_id = \(bind: viewer) AND follower_id IN (\(binds: ids))
                UNION ALL
                SELECT 3 AS relation, blocked_id AS id FROM blocks WHERE blocker_id = \(bind: viewer) AND blocked_id IN (\(binds: ids))
                UNION ALL
                SELECT 4 AS relation, target_id AS id FROM follow_requests WHERE requester_id = \(bind: viewer) AND target_id IN (\(binds: ids))
                UNION ALL
                SELECT 5 AS relation, muted_id AS id FROM mutes WHERE muter_id = \(bind: viewer) AND muted_id IN (\(binds: ids))
                """)
        }
        // Indexed by relation - 1: following, followed by, blocking, requested, muting.
        var relations = Array(repeating: Set<Int64>(), count: 5)
        for row in rows {
            let relation = try row.decode(column: "relation", as: Int.self)
            guard relations.indices.contains(relation - 1) else { continue }
            relations[relation - 1].insert(try row.decode(column: "id", as: Int64.self))
        }
        return records.map {
            $0.user(
                viewer: User.Viewer(
                    following: relations[0].contains($0.id), followedBy: relations[1].contains($0.id),
                    blocking: relations[2].contains($0.id), requested: relations[3].contains($0.id),
                    muting: relations[4].contains($0.id)))
        }
    }

    static let blocked = PlazaError(.forbidden, "blocked", "You cannot interact with this user.")

    /// Follows `followee`; when they are locked (and not yet followed), asks them instead: a
    /// follow request, recorded once, and a `follow_request` notification.
    func follow(follower: Int64, followee: Int64) async throws {
        guard follower != followee else {
            throw PlazaError(.unprocessableContent, "cannot_follow_self", "You cannot follow yourself.")
        }
        let now = Timestamp.now.milliseconds
        let ids = ids
        try await events.write { db in
            try await Self.lockInOrder([follower, followee], on: db)
            if try await db.first(
                "SELECT 1 AS x WHERE \(Visibility.blocked(between: "\(bind: follower)", and: "\(bind: followee)"))"
            ) != nil {
                throw Self.blocked
            }
            // Read under the followee's row lock: an unlock (which takes it too) is seen whole.
            let needsApproval =
                try await db.first(
                    """
                    SELECT 1 AS x FROM users WHERE id = \(bind: followee) AND locked
                    AND NOT EXISTS (SELECT 1 FROM follows WHERE follower_id = \(bind: follower) AND followee_id = \(bind: followee))
                    """) != nil
            if needsApproval {
                let asked = try await db.first(
                    """
                    INSERT INTO follow_requests (requester_id, target_id, created_at) VALUES (\(bind: follower), \(bind: followee), \(bind: now))
                    ON CONFLICT DO NOTHING RETURNING requester_id
                    """)
                if asked != nil {
                    try await NotificationStore.notify([.followRequest(to: followee, by: follower)], ids: ids, on: db)
                }
                return
            }
            if try await Self.insertFollow(follower: follower, followee: followee, at: now, home: home, on: db) {
                // A request left from before an unlock (whose later batches had not run yet) is moot now.
                try await Self.endRequest(from: follower, to: followee, on: db)
                try await NotificationStore.notify([.follow(of: followee, by: follower)], ids: ids, on: db)
            }
        }
    }

    /// Records a follow (idempotent) and brings the followee's posts into the follower's home
    /// timeline; true when it is new. The caller holds both people's locks.
    static func insertFollow(
        follower: Int64, followee: Int64, at now: Int64, home: HomeTimeline, on db: Connection
    ) async throws -> Bool {
        let isNew =
            try await db.first(
                """
                INSERT INTO follows (follower_id, followee_id, created_at) VALUES (\(bind: follower), \(bind: followee), \(bind: now))
                ON CONFLICT DO NOTHING RETURNING follower_id
                """) != nil
        if isNew { try await home.followed(follower: follower, followee: followee, on: db) }
        return isNew
    }

    /// Ends each follow given, taking the followee's posts out of the follower's home timeline
    /// and the followee out of the follower's lists.
    /// The caller holds both people's locks.
    static func deleteFollows(_ pairs: [(follower: Int64, followee: Int64)], on db: Connection) async throws {
        for (follower, followee) in pairs {
            let ended = try await db.first(
                """
                DELETE FROM follows WHERE follower_id = \(bind: follower) AND followee_id = \(bind: followee)
                RETURNING follower_id
                """)
            if ended != nil {
                try await HomeTimeline.unfollowed(follower: follower, followee: followee, on: db)
                try await ListStore.unfollowed(follower: follower, followee: followee, on: db)
            }
        }
    }

    /// Unfollows `followee`, or withdraws a pending request to follow them.
    func unfollow(follower: Int64, followee: Int64) async throws {
        try await db.write { db in
            try await Self.lockInOrder([follower, followee], on: db)
            try await Self.deleteFollows([(follower, followee)], on: db)
            try await Self.endRequest(from: follower, to: followee, on: db)
        }
    }

    /// Blocks `blocked`: ends follows both ways; their content disappears for each other.
    func block(blocker: Int64, blocked: Int64) async throws {
        guard blocker != blocked else {
            throw PlazaError(.unprocessableContent, "cannot_block_self", "You cannot block yourself.")
        }
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            try await Self.lockInOrder([blocker, blocked], on: db)
            try await db.exec(
                "INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (\(bind: blocker), \(bind: blocked), \(bind: now)) ON CONFLICT DO NOTHING"
            )
            try await Self.deleteFollows([(blocker, blocked), (blocked, blocker)], on: db)
            // Requests go both ways too; `forget` takes their notifications with the rest.
            try await db.exec(
                """
                DELETE FROM follow_requests WHERE (requester_id = \(bind: blocker) AND target_id = \(bind: blocked))
                OR (requester_id = \(bind: blocked) AND target_id = \(bind: blocker))
                """)
            try await NotificationStore.forget(between: blocker, and: blocked, on: db)
        }
    }

    func unblock(blocker: Int64, blocked: Int64) async throws {
        try await db.write { db in
            try await db.exec(
                "DELETE FROM blocks WHERE blocker_id = \(bind: blocker) AND blocked_id = \(bind: blocked)")
        }
    }

    package enum Direction {
        case followers, following
        /// Mutual follows: whom `userID` follows and who follows them back.
        case friends
    }

    /// Who follows `userID` (or whom it follows, or its friends), newest follow (by `userID`,
    /// for friends) first, hiding users the viewer may not see.
    package func follows(_ direction: Direction, of userID: Int64, page: PageRequest, viewer: Int64?) async throws
        -> Page<User>
    {
        let query = Self.followsSQL(direction, of: userID, page: page, viewer: viewer)
        return try await userPage(query, timeColumn: "followed_at", page: page, viewer: viewer)
    }

    /// Runs a user-list query that asked for `page.fetchLimit` rows, each with its sort time in
    /// `timeColumn`, and renders the page.
    func userPage(_ query: SQL, timeColumn: String, page: PageRequest, viewer: Int64?) async throws -> Page<
        User
    > {
        let rows = try await db.read { db in try await db.rows(query) }
        let (pageRows, next) = try page.split(rows) { try Cursor(row: $0, time: timeColumn) }
        return Page(items: try await users(pageRows.map(UserRecord.init(row:)), viewer: viewer), nextCursor: next)
    }

    static func followsSQL(_ direction: Direction, of userID: Int64, page: PageRequest, viewer: Int64?)
        -> SQL
    {
        let (match, other): (SQL, SQL) =
            direction == .followers ? ("f.followee_id", "f.follower_id") : ("f.follower_id", "f.followee_id")
        var sql: SQL = """
            SELECT \(UserRecord.columns), f.created_at AS followed_at FROM follows f JOIN users u ON u.id = \(other)
            WHERE \(match) = \(bind: userID)
            """
        if direction == .friends {
            // Walks `follows_following` in order and looks each follow's reverse up by its key.
            sql +=
                " AND EXISTS (SELECT 1 FROM follows back WHERE back.follower_id = f.followee_id AND back.followee_id = f.follower_id)"
        }
        if let cursor = page.cursor {
            sql += " AND (f.created_at, \(other)) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " AND \(Visibility.person(other, seenBy: viewer))"
        sql += " ORDER BY f.created_at DESC, \(other) DESC LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    // MARK: activity

    /// Rows are counted per quarter of an hour, the finest step of any time zone's offset
    /// (Nepal is UTC+5:45), and the quarters are then put into the days of the asked zone.
    static let quarterMillis: Int64 = 900_000

    /// Per day over the last `days` days (today included), in `timeZone`, else the owner's
    /// `preferences.timeZone`, else UTC: the activity posts `viewer` may read, made, completed,
    /// and made but not finished yet, and the streaks of days with an activity completed. A
    /// day is a calendar day of the zone, 23 or 25 hours long when the clocks change. Read from
    /// two partial indexes, so the cost follows the person's activity in the window, not the
    /// size of `posts`. 404 when the profile is hidden from `viewer`.
    func activity(
        of userID: Int64, days: Int, viewer: Int64?, timeZone asked: String? = nil, now: Timestamp = .now
    ) async throws -> ActivityHeatmap {
        let (zoneName, rows, calendar, dayStarts) = try await db.read { db in
            guard
                let owner = try await db.first(
                    "SELECT u.preferences FROM users u WHERE u.id = \(bind: userID) AND \(Visibility.profile(seenBy: viewer))"
                )
            else { throw PlazaError.notFound("User") }
            let preferred = AccountStore.decodePreferences(try owner.decode(column: "preferences", as: String.self))[
                "timeZone"]?.stringValue
            // The name asked for or preferred, if it is a zone (a stored one always is), else UTC.
            let name = [asked, preferred, "UTC"].compactMap { $0 }.first { Validate.timeZone($0) != nil } ?? "UTC"
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = Validate.timeZone(name) ?? .gmt
            let dayStarts = Self.dayStarts(days: days, endingOn: now.date, calendar: calendar)
            let from = Timestamp(dayStarts[0]).milliseconds
            return (
                name, try await db.rows(Self.activitySQL(userID: userID, from: from, viewer: viewer)), calendar,
                dayStarts
            )
        }
        let dates = dayStarts.map { Self.dayText($0, calendar: calendar) }
        // Counts by kind of figure (1 posted, 2 completed, 3 unfinished), then the zone's day.
        var counts: [Int: [String: Int]] = [:]
        for row in rows {
            let quarter = try row.decode(column: "quarter", as: Int64.self)
            let day = Self.dayText(Timestamp(milliseconds: quarter * Self.quarterMillis).date, calendar: calendar)
            counts[try row.decode(column: "what", as: Int.self), default: [:]][day, default: 0] += try row.decode(
                column: "n", as: Int.self)
        }
        let heatmapDays = dates.map { date in
            ActivityHeatmap.Day(
                date: date, completed: counts[2]?[date] ?? 0, posted: counts[1]?[date] ?? 0,
                unfinished: counts[3]?[date] ?? 0)
        }
        return ActivityHeatmap(
            days: heatmapDays, timeZone: zoneName, streak: Self.streak(heatmapDays.map { $0.completed > 0 }))
    }

    /// The starts of the last `days` days of `calendar`'s zone, the one holding `now` last.
    static func dayStarts(days: Int, endingOn now: Date, calendar: Calendar) -> [Date] {
        let today = calendar.startOfDay(for: now)
        return (0..<max(days, 1)).reversed().map { back in
            calendar.date(byAdding: .day, value: -back, to: today).map { calendar.startOfDay(for: $0) } ?? today
        }
    }

    /// `YYYY-MM-DD` of `date` in `calendar`'s zone.
    static func dayText(_ date: Date, calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        func two(_ n: Int?) -> String { (n ?? 0) < 10 ? "0\(n ?? 0)" : "\(n ?? 0)" }
        return "\(parts.year ?? 1970)-\(two(parts.month))-\(two(parts.day))"
    }

    /// Days in a row with an activity completed: the run that reaches today (or yesterday,
    /// while today may still come) and the longest in the window.
    static func streak(_ active: [Bool]) -> ActivityHeatmap.Streak {
        var longest = 0
        var run = 0
        for day in active {
            run = day ? run + 1 : 0
            longest = max(longest, run)
        }
        var current = 0
        for day in active.dropLast(active.last == true ? 0 : 1).reversed() {
            guard day else { break }
            current += 1
        }
        return ActivityHeatmap.Streak(current: current, longest: longest)
    }

    static func activitySQL(userID: Int64, from start: Int64, viewer: Int64?) -> SQL {
        // The literal conditions match the partial indexes' own, so the planner can use them.
        """
        SELECT 1 AS what, p.created_at / \(unsafeRaw: String(quarterMillis)) AS quarter, COUNT(*) AS n FROM posts p
        WHERE p.author_id = \(bind: userID) AND p.kind = 'activity' AND p.created_at >= \(bind: start)
        AND \(Visibility.post(readableBy: viewer))
        GROUP BY p.created_at / \(unsafeRaw: String(quarterMillis))
        UNION ALL
        SELECT 2 AS what, p.activity_completed_at / \(unsafeRaw: String(quarterMillis)) AS quarter, COUNT(*) AS n FROM posts p
        WHERE p.author_id = \(bind: userID) AND p.activity_completed_at IS NOT NULL
        AND p.activity_completed_at >= \(bind: start) AND \(Visibility.post(readableBy: viewer))
        GROUP BY p.activity_completed_at / \(unsafeRaw: String(quarterMillis))
        UNION ALL
        SELECT 3 AS what, p.created_at / \(unsafeRaw: String(quarterMillis)) AS quarter, COUNT(*) AS n FROM posts p
        WHERE p.author_id = \(bind: userID) AND p.kind = 'activity' AND p.created_at >= \(bind: start)
        AND p.activity_completed_at IS NULL AND \(Visibility.post(readableBy: viewer))
        GROUP BY p.created_at / \(unsafeRaw: String(quarterMillis))
        """
    }
}
