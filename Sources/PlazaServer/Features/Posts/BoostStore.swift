import PlazaAPI
import SQLKit

/// Boosts: a person shares a public post they may read with their followers. The post comes
/// into each follower's home timeline at the boost's time, marked with who boosted it, once
/// however many of the people they follow boost it (`home_entries.boosted_by`); undoing the boost
/// takes out the entries it made. Counts are kept by triggers (`posts.boosts_count`).
///
/// Followers of an account read at read time (`HomeTimeline`'s pulled accounts) do not get its
/// boosts: a pulled account's followers read its own posts only.
package struct BoostStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog

    static let notPublic = PlazaError(
        .unprocessableContent, "not_boostable", "Only public posts can be boosted: this one is for fewer people.")

    /// Boosts or undoes the boost of (idempotently) a post `user` may read (else 404); a boost
    /// of a post that is not public is 422 `not_boostable`. A new boost tells the post's author.
    func set(post: Int64, user: Int64, boosted: Bool) async throws {
        let now = Timestamp.now.milliseconds
        let id = ids.next()
        let ids = ids
        try await events.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT author_id, audience, created_at FROM posts p
                    WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: user))
                    """)
            else { throw PlazaError.notFound("Post") }
            let author = try row.decode(column: "author_id", as: Int64.self)
            if boosted {
                guard try row.decode(column: "audience", as: String.self) == PostAudience.public.rawValue else {
                    throw Self.notPublic
                }
                let added = try await db.first(
                    """
                    INSERT INTO boosts (id, user_id, post_id, created_at)
                    VALUES (\(bind: id), \(bind: user), \(bind: post), \(bind: now)) ON CONFLICT DO NOTHING RETURNING id
                    """)
                guard added != nil else { return }
                let created = try row.decode(column: "created_at", as: Int64.self)
                // Who has the post already is read from the timelines, so a post still waiting
                // to be entered in them is entered first.
                _ = try await HomeTimeline.enterPending(limit: 1, post: post, on: db)
                try await db.exec(Self.fanOutSQL(post: post, createdAt: created, booster: user, at: now))
                try await Trends.record(.post, [String(post)], by: user, at: now, on: db)
                // `notify` locks the author's row (the unread count) and passes over a self-boost.
                try await NotificationStore.notify([.boost(post: post, author: author, by: user)], ids: ids, on: db)
            } else {
                let removed = try await db.first(
                    "DELETE FROM boosts WHERE user_id = \(bind: user) AND post_id = \(bind: post) RETURNING created_at")
                guard let removed else { return }
                try await db.exec(
                    Self.undoSQL(
                        post: post, booster: user, at: try removed.decode(column: "created_at", as: Int64.self)))
            }
        }
    }

    /// Enters a boosted post in the booster's followers' timelines at the boost's time, except
    /// for those who have it already: from its author (its own entry) or from another boost.
    static func fanOutSQL(post: Int64, createdAt: Int64, booster: Int64, at time: Int64) -> SQLQueryString {
        """
        INSERT INTO home_entries (user_id, created_at, post_id, boosted_by)
        SELECT f.follower_id, \(bind: time), \(bind: post), \(bind: booster) FROM follows f
        WHERE f.followee_id = \(bind: booster) AND NOT f.pulled
        AND NOT EXISTS (
            SELECT 1 FROM home_entries he
            WHERE he.user_id = f.follower_id AND he.created_at = \(bind: createdAt) AND he.post_id = \(bind: post))
        AND NOT EXISTS (
            SELECT 1 FROM boosts b JOIN follows g ON g.followee_id = b.user_id AND g.follower_id = f.follower_id
            WHERE b.post_id = \(bind: post) AND b.user_id <> \(bind: booster))
        ON CONFLICT DO NOTHING
        """
    }

    /// Takes out the entries one boost made.
    static func undoSQL(post: Int64, booster: Int64, at time: Int64) -> SQLQueryString {
        """
        DELETE FROM home_entries WHERE created_at = \(bind: time) AND post_id = \(bind: post)
        AND boosted_by = \(bind: booster)
        AND user_id IN (SELECT follower_id FROM follows WHERE followee_id = \(bind: booster))
        """
    }

    /// Takes out the entries every boost of a post made, before the post (and its boosts) go.
    static func removeFromTimelines(post: Int64, on db: Connection) async throws {
        try await db.exec(
            """
            DELETE FROM home_entries WHERE post_id = \(bind: post) AND (user_id, created_at) IN (
                SELECT f.follower_id, b.created_at FROM boosts b JOIN follows f ON f.followee_id = b.user_id
                WHERE b.post_id = \(bind: post))
            """)
    }

    /// `follower` no longer follows `followee`: the posts the followee's boosts brought leave.
    static func unfollowedSQL(follower: Int64, followee: Int64) -> SQLQueryString {
        """
        DELETE FROM home_entries WHERE user_id = \(bind: follower) AND boosted_by = \(bind: followee)
        AND (created_at, post_id) IN (SELECT created_at, post_id FROM boosts WHERE user_id = \(bind: followee))
        """
    }

    struct Key: Hashable {
        let user: Int64
        let post: Int64
    }

    /// The boosts that brought the records of a home feed's page into it, in one query.
    static func boosters(of records: [PostRecord], on db: Database) async throws -> [Key: Post.Boost] {
        let boosted = records.filter { $0.boostedBy != nil }
        guard !boosted.isEmpty else { return [:] }
        let users = Array(Set(boosted.compactMap(\.boostedBy)))
        let posts = boosted.map(\.id)
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT b.id AS boost_id, b.post_id, b.created_at AS boosted_at, u.id, \(UserSummary.columns)
                FROM boosts b JOIN users u ON u.id = b.user_id
                WHERE b.post_id IN (\(binds: posts)) AND b.user_id IN (\(binds: users))
                """)
        }
        var found: [Key: Post.Boost] = [:]
        for row in rows {
            let user = try row.decode(column: "id", as: Int64.self)
            let key = Key(user: user, post: try row.decode(column: "post_id", as: Int64.self))
            found[key] = Post.Boost(
                id: String(try row.decode(column: "boost_id", as: Int64.self)),
                by: try UserSummary(authorIn: row, id: user),
                at: Timestamp(milliseconds: try row.decode(column: "boosted_at", as: Int64.self)))
        }
        return found
    }

    /// A boost's keys in a home timeline: its time and its post's id.
    package func key(of boost: Int64) async throws -> (time: Int64, id: Int64)? {
        guard
            let row = try await db.read({ db in
                try await db.first("SELECT created_at, post_id FROM boosts WHERE id = \(bind: boost)")
            })
        else { return nil }
        return (try row.decode(column: "created_at", as: Int64.self), try row.decode(column: "post_id", as: Int64.self))
    }

    /// The id of `user`'s boost of `post`, if they boosted it.
    package func boostID(post: Int64, user: Int64) async throws -> Int64? {
        try await db.read { db in
            try await db.first("SELECT id FROM boosts WHERE user_id = \(bind: user) AND post_id = \(bind: post)")
        }?.decode(column: "id", as: Int64.self)
    }

    /// Who boosted a post, newest boost first, without people the viewer has a block with.
    package func boosters(post: Int64, page: PageRequest, viewer: Int64?, people: PeopleStore) async throws
        -> Page<User>
    {
        var sql: SQLQueryString = """
            SELECT \(UserRecord.columns), boost.created_at AS boosted_at FROM boosts boost JOIN users u ON u.id = boost.user_id
            WHERE boost.post_id = \(bind: post)
            """
        if let cursor = page.cursor {
            sql += " AND (boost.created_at, boost.user_id) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " AND \(Visibility.person("boost.user_id", seenBy: viewer))"
        sql += " ORDER BY boost.created_at DESC, boost.user_id DESC LIMIT \(bind: page.fetchLimit)"
        return try await people.userPage(sql, timeColumn: "boosted_at", page: page, viewer: viewer)
    }
}
