import PlazaAPI

/// Boosts: a person shares a public post they may read with their followers. The post comes
/// into each follower's home timeline at the boost's time, marked with who boosted it, once
/// however many of the people they follow boost it (`home_entries.boosted_by`): the earliest
/// boost standing brings it, unless the follower has it already from its author
/// (`BoostStore.reaches`). Counts are kept by triggers (`posts.boosts_count`).
///
/// A boost reaches the timelines as a new post does, in batches: it waits in `boost_pending`,
/// which home feeds read meanwhile, until `HomeTimeline.enterPendingBoosts` enters it. Undoing a
/// boost that waits takes it off the queue; undoing one already entered queues the removal of its
/// entries, which home feeds hide from the moment the boost is gone (an entry shows while the
/// boost that made it, with its time, stands).
///
/// Followers of an account read at read time (`HomeTimeline`'s pulled accounts) do not get its
/// boosts: a pulled account's followers read its own posts only.
package struct BoostStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog
    /// Wakes `HomeFanOutService` when a boost (or its undoing) waits for the home timelines.
    var homeQueue = WorkSignal()

    static let notPublic = PlazaError(
        .unprocessableContent, "not_boostable", "Only public posts can be boosted: this one is for fewer people.")

    /// Boosts or undoes the boost of (idempotently) a post `user` may read (else 404); a boost
    /// of a post that is not public is 422 `not_boostable`. A new boost tells the post's author.
    func set(post: Int64, user: Int64, boosted: Bool) async throws {
        let now = Timestamp.now.milliseconds
        let id = ids.next()
        let ids = ids
        let queued = try await events.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT author_id, audience FROM posts p
                    WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: user))\(db.dialect.rowLock(.keyShare) ?? "")
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
                guard added != nil else { return false }
                try await db.exec(Self.queueSQL(boost: id, booster: user, post: post, at: now, undo: false))
                try await Trends.record(.post, [String(post)], by: user, at: now, on: db)
                // `notify` locks the author's row (the unread count) and passes over a self-boost.
                try await NotificationStore.notify([.boost(post: post, author: author, by: user)], ids: ids, on: db)
                return true
            }
            guard
                let removed = try await db.first(
                    "DELETE FROM boosts WHERE user_id = \(bind: user) AND post_id = \(bind: post) RETURNING id, created_at"
                )
            else { return false }
            let boost = try removed.decode(column: "id", as: Int64.self)
            // A boost still waiting was entered nowhere: it leaves the queue, and that is all.
            if try await db.first("DELETE FROM boost_pending WHERE boost_id = \(bind: boost) RETURNING boost_id") != nil
            {
                return false
            }
            let time = try removed.decode(column: "created_at", as: Int64.self)
            try await db.exec(Self.queueSQL(boost: boost, booster: user, post: post, at: time, undo: true))
            return true
        }
        if queued { homeQueue.wake() }
    }

    /// Queues boost `boost` (made at `time`) for `HomeTimeline.enterPendingBoosts`: to enter, or
    /// with `undo` to take out what it entered.
    static func queueSQL(boost: Int64, booster: Int64, post: Int64, at time: Int64, undo: Bool) -> SQL {
        """
        INSERT INTO boost_pending (boost_id, user_id, post_id, created_at, undo)
        VALUES (\(bind: boost), \(bind: booster), \(bind: post), \(bind: time), \(bind: undo))
        """
    }

    /// True when boost `bp` of post `p` brings `p` into the timeline of `follower` (who follows
    /// the booster, not pulled): unless the follower has the post from its author, or from a
    /// boost standing that was made before this one by someone else they follow (not pulled).
    /// So a follower gets a post once, from the earliest boost, and from the next one when that
    /// one is undone; a waiting boost is read by this rule and entered by it.
    static func reaches(follower: SQL) -> SQL {
        """
        NOT EXISTS (SELECT 1 FROM home_entries hx WHERE hx.user_id = \(follower) AND hx.created_at = p.created_at AND hx.post_id = p.id) \
        AND NOT EXISTS (SELECT 1 FROM boosts bx JOIN follows gx ON gx.followee_id = bx.user_id AND gx.follower_id = \(follower) \
        WHERE bx.post_id = bp.post_id AND NOT gx.pulled AND (bx.created_at, bx.user_id) < (bp.created_at, bp.user_id))
        """
    }

    /// Takes out the entries every boost of a post made (those whose undoing waits too), before
    /// the post (and its boosts) go.
    static func removeFromTimelines(post: Int64, on db: Connection) async throws {
        try await db.exec(removeFromTimelinesSQL(post: post))
    }

    static func removeFromTimelinesSQL(post: Int64) -> SQL {
        """
        DELETE FROM home_entries WHERE post_id = \(bind: post) AND (user_id, created_at) IN (
            SELECT f.follower_id, b.created_at FROM (
                SELECT user_id, created_at FROM boosts WHERE post_id = \(bind: post)
                UNION ALL SELECT user_id, created_at FROM boost_pending WHERE post_id = \(bind: post) AND undo
            ) AS b JOIN follows f ON f.followee_id = b.user_id)
        """
    }

    /// `user` now has posts from their own sources (a new follow's or followed tag's backfill):
    /// an entry a boost made for one of them leaves, so the post is there once, at its own time.
    static func redundantSQL(of user: Int64) -> SQL {
        """
        DELETE FROM home_entries WHERE user_id = \(bind: user) AND boosted_by IS NOT NULL AND (created_at, post_id) IN (
            SELECT b.created_at, b.post_id FROM follows g JOIN boosts b ON b.user_id = g.followee_id
            JOIN posts p ON p.id = b.post_id WHERE g.follower_id = \(bind: user) AND EXISTS (
                SELECT 1 FROM home_entries own
                WHERE own.user_id = \(bind: user) AND own.created_at = p.created_at AND own.post_id = p.id))
        """
    }

    /// `follower` no longer follows `followee`: the posts the followee's boosts brought leave
    /// (those of boosts whose undoing waits too).
    static func unfollowedSQL(follower: Int64, followee: Int64) -> SQL {
        """
        DELETE FROM home_entries WHERE user_id = \(bind: follower) AND boosted_by = \(bind: followee)
        AND (created_at, post_id) IN (
            SELECT created_at, post_id FROM boosts WHERE user_id = \(bind: followee)
            UNION ALL SELECT created_at, post_id FROM boost_pending WHERE user_id = \(bind: followee) AND undo)
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
        var sql: SQL = """
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
