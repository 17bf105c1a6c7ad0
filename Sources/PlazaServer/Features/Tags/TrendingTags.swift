import PlazaAPI
import SQLKit

/// What is trending: the hashtags the most people used in public posts over the last days, each
/// day's people weighed half as much as the next day's (a decay), counted when a post is written
/// (`record`) so that reading the trends sums at most `days` days of per-tag counts. Moderators
/// keep a tag out (`tags.trendable`).
package struct TrendingTags: Sendable {
    let db: Database

    /// The days the trends look back over, today included.
    static let days: Int64 = 3
    /// The days of counts kept; older ones are pruned.
    static let keptDays: Int64 = 7
    static let dayMillis: Int64 = 86_400_000

    /// Counts `author`'s use of `tags` today, once a person and tag a day (in the post's transaction).
    static func record(_ tags: [Hashtag], by author: Int64, at time: Int64, on db: Connection) async throws {
        let day = time / dayMillis
        for tag in tags {
            let first = try await db.first(
                """
                INSERT INTO tag_uses (tag, day, user_id) VALUES (\(bind: tag.key), \(bind: day), \(bind: author))
                ON CONFLICT DO NOTHING RETURNING user_id
                """)
            guard first != nil else { continue }
            try await db.exec(
                """
                INSERT INTO tag_days (day, tag, people) VALUES (\(bind: day), \(bind: tag.key), 1)
                ON CONFLICT (day, tag) DO UPDATE SET people = tag_days.people + 1
                """)
        }
    }

    /// The trending tags, most used first (at most `limit`), as `viewer` sees them.
    package func top(limit: Int = 10, viewer: Int64?, now: Int64 = Timestamp.now.milliseconds) async throws
        -> [HashtagSummary]
    {
        let today = now / Self.dayMillis
        let following: SQLQueryString =
            viewer.map { "EXISTS (SELECT 1 FROM tag_follows tf WHERE tf.user_id = \(bind: $0) AND tf.tag = t.key)" }
            ?? "FALSE"
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT t.key, t.name, \(following) AS following, s.score FROM (
                    SELECT tag, SUM(people * (CASE day WHEN \(bind: today) THEN 4 WHEN \(bind: today - 1) THEN 2 ELSE 1 END)) AS score
                    FROM tag_days WHERE day > \(bind: today - Self.days) GROUP BY tag
                ) s JOIN tags t ON t.key = s.tag
                WHERE t.trendable ORDER BY s.score DESC, t.key LIMIT \(bind: limit)
                """)
        }
        return try rows.map {
            HashtagSummary(
                name: try $0.decode(column: "name", as: String.self),
                key: try $0.decode(column: "key", as: String.self),
                following: try $0.decode(column: "following", as: Bool.self))
        }
    }

    /// How many people used each of `keys` on each of the last `days` days, newest first, in one query.
    package func history(of keys: [String], days: Int64 = 7, now: Int64 = Timestamp.now.milliseconds) async throws
        -> [String: [TagStore.DayOfUse]]
    {
        guard !keys.isEmpty else { return [:] }
        let today = now / Self.dayMillis
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT day, tag, people FROM tag_days WHERE day > \(bind: today - days) AND tag IN (\(binds: keys))
                """)
        }
        var people: [String: [Int64: Int]] = [:]
        for row in rows {
            people[try row.decode(column: "tag", as: String.self), default: [:]][
                try row.decode(column: "day", as: Int64.self)] = try row.decode(column: "people", as: Int.self)
        }
        return Dictionary(
            uniqueKeysWithValues: keys.map { key in
                (
                    key,
                    (0..<days).map { back in
                        let count = people[key]?[today - back] ?? 0
                        return TagStore.DayOfUse(day: today - back, posts: count, people: count)
                    }
                )
            })
    }

    /// Keeps `tag` out of the trends, or lets it back in: the instance's admins and moderators
    /// may (403 for anyone else).
    package func setTrendable(_ tag: Hashtag, _ trendable: Bool, by person: Int64) async throws {
        try await db.write { db in
            guard try await db.first("SELECT 1 AS ok WHERE \(ModerationStore.isStaff(person))") != nil else {
                throw PlazaError.forbidden
            }
            try await db.exec(
                """
                INSERT INTO tags (key, name, created_at, trendable)
                VALUES (\(bind: tag.key), \(bind: tag.name), \(bind: Timestamp.now.milliseconds), \(bind: trendable))
                ON CONFLICT (key) DO UPDATE SET trendable = \(bind: trendable)
                """)
        }
    }

    /// Drops the counts of days older than `keptDays`.
    static func prune(now: Int64, on db: Database) async throws {
        let oldest = now / dayMillis - keptDays
        try await db.write { db in
            try await db.exec("DELETE FROM tag_uses WHERE day < \(bind: oldest)")
            try await db.exec("DELETE FROM tag_days WHERE day < \(bind: oldest)")
        }
    }
}
