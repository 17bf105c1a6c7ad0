import PlazaAPI

/// Hashtags: which posts carry which (`post_tags`, kept on every write of a post's text), who
/// follows which (`tag_follows`), and a followed tag's public posts entered in its followers'
/// home timelines as the people they follow are (`HomeTimeline`).
package struct TagStore: Sendable {
    let db: Database

    /// What is trending.
    package var trends: Trends { Trends(db: db) }

    /// The most tags one person follows.
    static let maxFollowed = 200
    static let tooManyFollowed = PlazaError(
        .unprocessableContent, "too_many_followed_tags", "You follow \(maxFollowed) tags already; unfollow one first.")

    /// Records the tags of a new post (the tags themselves when new).
    static func index(post: Int64, createdAt: Int64, tags: [Hashtag], on db: Connection) async throws {
        guard !tags.isEmpty else { return }
        try await remember(tags, at: createdAt, on: db)
        let rows = tags.map { tag -> SQL in "(\(bind: tag.key), \(bind: createdAt), \(bind: post))" }
        try await db.exec(
            "INSERT INTO post_tags (tag, created_at, post_id) VALUES \(rows.joined(separator: ", ")) ON CONFLICT DO NOTHING"
        )
    }

    /// Records the tags of an edited post in place of the ones it had.
    static func reindex(post: Int64, createdAt: Int64, tags: [Hashtag], on db: Connection) async throws {
        try await db.exec("DELETE FROM post_tags WHERE post_id = \(bind: post)")
        try await index(post: post, createdAt: createdAt, tags: tags, on: db)
    }

    /// Inserts the tags not known yet, in key order (as `Trends.record`, so that two new posts
    /// with the same new tags do not wait on each other crosswise).
    private static func remember(_ tags: [Hashtag], at time: Int64, on db: Connection) async throws {
        let rows = tags.sorted { $0.key < $1.key }.map { tag -> SQL in
            "(\(bind: tag.key), \(bind: tag.name), \(bind: time))"
        }
        try await db.exec(
            "INSERT INTO tags (key, name, created_at) VALUES \(rows.joined(separator: ", ")) ON CONFLICT (key) DO NOTHING"
        )
    }

    /// Enters a new public post in the home timelines of the people who follow one of its tags.
    static func fanOut(post: Int64, createdAt: Int64, tags: [Hashtag], on db: Connection) async throws {
        guard !tags.isEmpty else { return }
        try await db.exec(
            """
            INSERT INTO home_entries (user_id, created_at, post_id)
            SELECT DISTINCT user_id, \(bind: createdAt), \(bind: post) FROM tag_follows WHERE tag IN (\(binds: tags.map(\.key)))
            ON CONFLICT DO NOTHING
            """)
    }

    /// The tag as `viewer` sees it: the form first written (or `tag`'s own when nobody has used
    /// it yet) and whether they follow it.
    package func summary(_ tag: Hashtag, viewer: Int64?) async throws -> HashtagSummary {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT t.name, \(Self.following(viewer)) AS following FROM tags t WHERE t.key = \(bind: tag.key)
                """)
        }
        return HashtagSummary(
            name: try row?.decode(column: "name", as: String.self) ?? tag.name, key: tag.key,
            following: try row?.decode(column: "following", as: Bool.self) ?? false)
    }

    private static func following(_ viewer: Int64?) -> SQL {
        guard let viewer else { return "FALSE" }
        return "EXISTS (SELECT 1 FROM tag_follows tf WHERE tf.user_id = \(bind: viewer) AND tf.tag = t.key)"
    }

    /// `user` follows `tag` (again: nothing changes): its latest public posts enter their home
    /// timeline, as a followed person's do. 422 past `maxFollowed`.
    ///
    /// On PostgreSQL it locks the authors of the posts it enters with the user, as a batch of
    /// boosts locks the boosted posts' authors (`HomeTimeline.enterPendingBoosts`): the batch
    /// then either enters a boost of one of them before this takes the boost's entry out
    /// (`BoostStore.redundantSQL`), or sees the post's own entry and enters none. Without it
    /// both could pass each other and the post show twice.
    func follow(_ tag: Hashtag, by user: Int64) async throws {
        try await db.write { db in
            var people = [user]
            if db.kind == .postgres {
                people += try await db.rows(Self.backfillAuthorsSQL(tag: tag.key)).map {
                    try $0.decode(column: "author_id", as: Int64.self)
                }
            }
            try await PeopleStore.lockInOrder(people, on: db)
            let count = try await db.first("SELECT COUNT(*) AS n FROM tag_follows WHERE user_id = \(bind: user)")
            guard try count?.decode(column: "n", as: Int.self) ?? 0 < Self.maxFollowed else {
                throw Self.tooManyFollowed
            }
            let now = Timestamp.now.milliseconds
            try await Self.remember([tag], at: now, on: db)
            let added = try await db.rows(
                """
                INSERT INTO tag_follows (user_id, tag, created_at) VALUES (\(bind: user), \(bind: tag.key), \(bind: now))
                ON CONFLICT DO NOTHING RETURNING tag
                """)
            if !added.isEmpty {
                try await db.exec(Self.backfillSQL(user: user, tag: tag.key))
                try await db.exec(BoostStore.redundantSQL(of: user))
            }
        }
    }

    /// The posts a follow of `tag` enters: its newest public ones, `HomeTimeline.backfill` of them.
    static func backfillPostsSQL(tag: String) -> SQL {
        """
        SELECT pt.created_at, pt.post_id, p.author_id FROM post_tags pt JOIN posts p ON p.id = pt.post_id
        WHERE pt.tag = \(bind: tag) AND p.audience = 'public'
        ORDER BY pt.created_at DESC, pt.post_id DESC LIMIT \(bind: HomeTimeline.backfill)
        """
    }

    /// The authors of the posts `backfillSQL` enters (on PostgreSQL only: SQLite has one writer
    /// and locks nothing).
    static func backfillAuthorsSQL(tag: String) -> SQL {
        "SELECT DISTINCT t.author_id FROM (\(backfillPostsSQL(tag: tag))) t"
    }

    /// Enters the posts `backfillPostsSQL` names in `user`'s home timeline (`WHERE TRUE`: SQLite
    /// would read the upsert's `ON` as a join's).
    static func backfillSQL(user: Int64, tag: String) -> SQL {
        """
        INSERT INTO home_entries (user_id, created_at, post_id)
        SELECT \(bind: user), t.created_at, t.post_id FROM (\(backfillPostsSQL(tag: tag))) t WHERE TRUE
        ON CONFLICT DO NOTHING
        """
    }

    /// `user` no longer follows `tag`: the posts it brought leave their home timeline (not those
    /// of people they follow, their own, or those another followed tag brings).
    func unfollow(_ tag: Hashtag, by user: Int64) async throws {
        try await db.write { db in
            let removed = try await db.rows(
                "DELETE FROM tag_follows WHERE user_id = \(bind: user) AND tag = \(bind: tag.key) RETURNING tag")
            if !removed.isEmpty { try await db.exec(Self.unfollowedSQL(user: user, tag: tag.key)) }
        }
    }

    static func unfollowedSQL(user: Int64, tag: String) -> SQL {
        """
        DELETE FROM home_entries WHERE user_id = \(bind: user) AND (created_at, post_id) IN (
            SELECT pt.created_at, pt.post_id FROM post_tags pt JOIN posts p ON p.id = pt.post_id
            WHERE pt.tag = \(bind: tag) AND p.author_id <> \(bind: user)
            AND NOT EXISTS (SELECT 1 FROM follows f WHERE f.follower_id = \(bind: user) AND f.followee_id = p.author_id)
            AND NOT EXISTS (
                SELECT 1 FROM post_tags o JOIN tag_follows tf ON tf.tag = o.tag AND tf.user_id = \(bind: user)
                WHERE o.post_id = pt.post_id))
        """
    }

    /// The tags `user` follows, by name.
    package func followed(by user: Int64) async throws -> [HashtagSummary] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT t.key, t.name FROM tag_follows tf JOIN tags t ON t.key = tf.tag
                WHERE tf.user_id = \(bind: user) ORDER BY t.key LIMIT \(bind: Self.maxFollowed)
                """)
        }.map {
            HashtagSummary(
                name: try $0.decode(column: "name", as: String.self),
                key: try $0.decode(column: "key", as: String.self),
                following: true)
        }
    }

    /// Up to `limit` tags whose key starts as `prefix`'s does, for the composer's suggestions.
    package func complete(_ prefix: String, viewer: Int64?, limit: Int = 10) async throws -> [HashtagSummary] {
        let start = SearchFolding.fold(prefix)
        guard !start.isEmpty else { return [] }
        // Every key that starts with `start` sorts from `start` to `start` followed by U+10FFFF.
        let end = start + "\u{10FFFF}"
        return try await db.read { db in
            // PostgreSQL compares in code point order with `C`, as its index `tags_key_order` does.
            let key: SQL = db.dialect.kind == .postgres ? #"t.key COLLATE "C""# : "t.key"
            return try await db.rows(
                """
                SELECT t.key, t.name, \(Self.following(viewer)) AS following FROM tags t
                WHERE \(key) >= \(bind: start) AND \(key) < \(bind: end) ORDER BY \(key) LIMIT \(bind: limit)
                """)
        }.map {
            HashtagSummary(
                name: try $0.decode(column: "name", as: String.self),
                key: try $0.decode(column: "key", as: String.self),
                following: try $0.decode(column: "following", as: Bool.self))
        }
    }

    /// How a tag was used on each of the last `days` days (UTC), newest first: its public posts
    /// and their distinct authors (one range of the tag's index).
    package struct DayOfUse: Sendable, Hashable {
        package let day: Int64
        package let posts: Int
        package let people: Int
    }

    package func history(of tag: Hashtag, days: Int = 7, now: Timestamp = .now) async throws -> [DayOfUse] {
        let today = now.milliseconds / 86_400_000
        let since = (today - Int64(days) + 1) * 86_400_000
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT pt.created_at / 86400000 AS day, COUNT(*) AS posts, COUNT(DISTINCT p.author_id) AS people
                FROM post_tags pt JOIN posts p ON p.id = pt.post_id
                WHERE pt.tag = \(bind: tag.key) AND pt.created_at >= \(bind: since) AND p.audience = 'public'
                GROUP BY pt.created_at / 86400000
                """)
        }
        var used: [Int64: (Int, Int)] = [:]
        for row in rows {
            used[try row.decode(column: "day", as: Int64.self)] = (
                try row.decode(column: "posts", as: Int.self), try row.decode(column: "people", as: Int.self)
            )
        }
        return (0..<Int64(days)).map { back in
            let day = today - back
            return DayOfUse(day: day, posts: used[day]?.0 ?? 0, people: used[day]?.1 ?? 0)
        }
    }
}
