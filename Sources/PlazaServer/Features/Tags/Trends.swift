import PlazaAPI

/// What is trending: the hashtags, links and posts the most people used over the last days —
/// a tag or a link in a public post, a public post liked or boosted — each day's people weighed
/// half as much as the next day's (a decay). Counted when the thing is used (`record`), once a
/// person, thing and day, so that reading the trends sums at most `days` days of per-thing counts
/// and never reads the posts. Moderators keep a tag out (`tags.trendable`).
package struct Trends: Sendable {
    let db: Database

    package enum Kind: String, Sendable {
        case tag, link, post
    }

    /// The days the trends look back over, today included.
    static let days: Int64 = 3
    /// The days of counts kept; older ones are pruned.
    static let keptDays: Int64 = 7
    static let dayMillis: Int64 = 86_400_000

    /// Counts `person`'s use of each of `keys` today, once a person, thing and day (in the
    /// write's transaction). The day's rows are updated in key order: a popular tag's row is
    /// shared by every post using it that day, and two posts with the same tags in another
    /// order would otherwise lock them crosswise (a deadlock on PostgreSQL).
    static func record(_ kind: Kind, _ keys: [String], by person: Int64, at time: Int64, on db: Connection)
        async throws
    {
        let day = time / dayMillis
        for key in Set(keys).sorted() {
            let first = try await db.first(
                """
                INSERT INTO trend_uses (kind, day, key, user_id)
                VALUES (\(bind: kind.rawValue), \(bind: day), \(bind: key), \(bind: person))
                ON CONFLICT DO NOTHING RETURNING user_id
                """)
            guard first != nil else { continue }
            try await db.exec(
                """
                INSERT INTO trend_days (kind, day, key, people) VALUES (\(bind: kind.rawValue), \(bind: day), \(bind: key), 1)
                ON CONFLICT (kind, day, key) DO UPDATE SET people = trend_days.people + 1
                """)
        }
    }

    /// The scored things of a kind, highest first: a subquery of `key` and `score`.
    private static func scores(_ kind: Kind, now: Int64) -> SQL {
        let today = now / dayMillis
        return """
            SELECT key, SUM(people * (CASE day WHEN \(bind: today) THEN 4 WHEN \(bind: today - 1) THEN 2 ELSE 1 END)) AS score
            FROM trend_days WHERE kind = \(bind: kind.rawValue) AND day > \(bind: today - days) GROUP BY key
            """
    }

    /// The trending tags, most used first (at most `limit`), as `viewer` sees them.
    package func tags(limit: Int = 10, viewer: Int64?, now: Int64 = Timestamp.now.milliseconds) async throws
        -> [HashtagSummary]
    {
        let following: SQL =
            viewer.map { "EXISTS (SELECT 1 FROM tag_follows tf WHERE tf.user_id = \(bind: $0) AND tf.tag = t.key)" }
            ?? "FALSE"
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT t.key, t.name, \(following) AS following FROM (\(Self.scores(.tag, now: now))) s
                JOIN tags t ON t.key = s.key WHERE t.trendable ORDER BY s.score DESC, t.key LIMIT \(bind: limit)
                """)
        }
        return try rows.map {
            HashtagSummary(
                name: try $0.decode(column: "name", as: String.self),
                key: try $0.decode(column: "key", as: String.self),
                following: try $0.decode(column: "following", as: Bool.self))
        }
    }

    /// The trending links, most shared first, with their previews.
    package func links(limit: Int = 10, now: Int64 = Timestamp.now.milliseconds) async throws -> [LinkPreview] {
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT s.key, lp.title, lp.description, lp.image_url, lp.site_name, lp.fetched_at
                FROM (\(Self.scores(.link, now: now))) s LEFT JOIN link_previews lp ON lp.url = s.key
                ORDER BY s.score DESC, s.key LIMIT \(bind: limit)
                """)
        }
        return try rows.map {
            LinkPreview(
                url: try $0.decode(column: "key", as: String.self),
                title: try $0.decode(column: "title", as: String?.self),
                description: try $0.decode(column: "description", as: String?.self),
                imageURL: try $0.decode(column: "image_url", as: String?.self),
                siteName: try $0.decode(column: "site_name", as: String?.self),
                fetchedAt: try $0.decode(column: "fetched_at", as: Int64?.self).map(Timestamp.init(milliseconds:)))
        }
    }

    /// The ids of the trending posts, most liked and boosted by distinct people first.
    package func postIDs(limit: Int = 20, now: Int64 = Timestamp.now.milliseconds) async throws -> [Int64] {
        try await db.read { db in
            try await db.rows(
                "SELECT key FROM (\(Self.scores(.post, now: now))) s ORDER BY s.score DESC, s.key LIMIT \(bind: limit)")
        }.compactMap { Int64(try $0.decode(column: "key", as: String.self)) }
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
                SELECT day, key, people FROM trend_days
                WHERE kind = 'tag' AND day > \(bind: today - days) AND key IN (\(binds: keys))
                """)
        }
        var people: [String: [Int64: Int]] = [:]
        for row in rows {
            people[try row.decode(column: "key", as: String.self), default: [:]][
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
            try await db.exec("DELETE FROM trend_uses WHERE kind IN ('tag', 'link', 'post') AND day < \(bind: oldest)")
            try await db.exec("DELETE FROM trend_days WHERE kind IN ('tag', 'link', 'post') AND day < \(bind: oldest)")
        }
    }
}
