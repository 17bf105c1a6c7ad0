/// Each person's home timeline, filled on write ("fan-out"), so reading a page of it costs a
/// page whatever the person follows and however much those people have posted; see
/// `docs/feeds.md` for the choice and its cost.
///
/// - `home_entries (user_id, created_at, post_id)`: a post is entered in its author's timeline and
///   in the timeline of each follower whose follow is not `pulled`; a new follow enters the
///   followee's latest `backfill` posts; an unfollow (or a block) takes the followee's posts out;
///   deleting a post takes it out of every timeline it is in.
/// - A new post is entered in batches: it waits in `home_pending` (one row), and
///   `HomeFanOutService` enters every waiting post at once, in the order of the timelines, so a
///   follower's timeline page is written once per batch, not once per post (with 20 follows each,
///   a post alone wrote ~21 pages scattered over the timelines; see `docs/feeds.md`). Until then
///   a home feed reads the waiting posts of the people it follows (and its own) from
///   `home_pending` too, so a post is in its readers' feeds as soon as it is made. Boosts wait
///   and are entered the same way, in `boost_pending` (`BoostStore`).
/// - People with many followers are read at read time instead: once an account has more than
///   `fanOutLimit` followers, `users.home_pulled` is set for good and every follow of it becomes
///   `pulled`; their posts are not entered anywhere, and each follower's home feed merges the
///   newest page of each pulled account (as it merges each joined space's).
/// - Who may read what (audiences, blocks, mutes, suspensions) is applied when the page is read,
///   by `Visibility`, so an entry never shows what its reader may not see.
///
/// Every other change runs in the write's transaction, under the locks the write takes anyway:
/// the author's row for a new or deleted post, both people's rows for a follow or unfollow; a
/// batch of waiting posts takes its authors' rows too, a batch of boosts its boosters' and the
/// boosted posts' authors'. So a follow and a post by the followee never miss each other, and a
/// post's deletion finds every entry a boost of it made.
struct HomeTimeline: Sendable {
    /// Followers above which an account is pulled at read time rather than fanned out.
    var fanOutLimit: Int

    static let defaultFanOutLimit = 5_000
    /// How many of a newly followed person's posts a follow enters (Mastodon merges 400).
    static let backfill = 400
    /// Pulled accounts merged one by one into a page (each walks its own index in order); any
    /// more are read together, in one branch that sorts their posts.
    static let maxPulledBranches = 100

    /// Queues a new post for its author's timeline and their followers' (unless pulled): the
    /// next batch of `enterPending` enters it.
    static func queue(post: Int64, author: Int64, createdAt: Int64, on db: Connection) async throws {
        try await db.exec(queueSQL(post: post, author: author, createdAt: createdAt))
    }

    static func queueSQL(post: Int64, author: Int64, createdAt: Int64) -> SQL {
        "INSERT INTO home_pending (post_id, author_id, created_at) VALUES (\(bind: post), \(bind: author), \(bind: createdAt))"
    }

    /// Enters up to `limit` waiting posts, the oldest first, in their authors' timelines and
    /// their followers' (unless pulled), follower by follower, and takes them off the queue;
    /// returns how many it took. It stops before the post that would take it past `rows`
    /// timeline rows (the authors' follower counts; none for a pulled author), but always takes
    /// one: an account may have up to `fanOutLimit` followers, so a count of posts alone does not
    /// bound a batch.
    ///
    /// On PostgreSQL it takes the locks a post's own fan-out took: the authors' rows (in id
    /// order, as every write does), which a follow, unfollow or block of them also locks, so it
    /// reads their followers either before such a change or after it, never during; only then
    /// the waiting rows, skipping any another server took meanwhile (a post deleted meanwhile
    /// goes from the queue with its row). The authors come first because a post's deletion locks
    /// its author and then the post's queue row: taking queue rows first could deadlock with it.
    /// So two servers that pick the same posts take turns rather than share them. A follow made
    /// while a post waits has entered it already (its backfill reads the posts), which
    /// `ON CONFLICT` keeps once.
    static func enterPending(limit: Int, rows: Int = .max, on db: Connection) async throws -> Int {
        let taken = try await take(
            """
            SELECT hp.post_id AS id, hp.author_id AS account, hp.author_id AS author, \(Self.timelineRows(own: 1)) AS n
            FROM home_pending hp
            JOIN users u ON u.id = hp.author_id ORDER BY hp.post_id LIMIT \(bind: limit)
            """, from: "home_pending", key: "post_id", rows: rows, on: db)
        guard !taken.isEmpty else { return 0 }
        try await db.exec(
            """
            INSERT INTO home_entries (user_id, created_at, post_id)
            SELECT f.follower_id, hp.created_at, hp.post_id FROM home_pending hp
            JOIN follows f ON f.followee_id = hp.author_id AND NOT f.pulled WHERE hp.post_id IN (\(binds: taken))
            UNION ALL SELECT hp.author_id, hp.created_at, hp.post_id FROM home_pending hp WHERE hp.post_id IN (\(binds: taken))
            ORDER BY 1, 2, 3
            ON CONFLICT DO NOTHING
            """)
        try await db.exec("DELETE FROM home_pending WHERE post_id IN (\(binds: taken))")
        return taken.count
    }

    /// Enters up to `limit` waiting boosts (`boost_pending`), the oldest first, in their
    /// boosters' followers' timelines (unless pulled) where `BoostStore.reaches` says so, takes
    /// out the entries of boosts undone since they were entered (a follower who still follows
    /// someone else who boosted the post gets it from the earliest such boost), and takes them
    /// off the queue; returns how many it took. Rows and locks as `enterPending`, with the
    /// boosters' rows locked too, since their followers are the ones read. The authors' rows
    /// stand for their posts: a post's deletion locks its author before the post's queue rows go
    /// and its entries are taken out, so a batch enters a boost before the deletion reads the
    /// timelines or finds the post gone; a follow of the author (which takes a boost's entry out
    /// for the author's own) is ordered with it the same way. A boost of a post that waits itself
    /// is left for after the post: who has the post already is read from the timelines.
    static func enterPendingBoosts(limit: Int, rows: Int = .max, on db: Connection) async throws -> Int {
        let taken = try await take(
            """
            SELECT bp.boost_id AS id, bp.user_id AS account, p.author_id AS author, \(Self.timelineRows(own: 0)) AS n
            FROM boost_pending bp JOIN users u ON u.id = bp.user_id JOIN posts p ON p.id = bp.post_id
            WHERE NOT EXISTS (SELECT 1 FROM home_pending hp WHERE hp.post_id = bp.post_id)
            ORDER BY bp.boost_id LIMIT \(bind: limit)
            """, from: "boost_pending", key: "boost_id", rows: rows, on: db)
        guard !taken.isEmpty else { return 0 }
        try await db.exec(undoneBoostsSQL(taken))
        try await db.exec(enterBoostsSQL(taken))
        try await db.exec("DELETE FROM boost_pending WHERE boost_id IN (\(binds: taken))")
        return taken.count
    }

    /// Takes out the entries of the undone boosts among `taken` (queue rows).
    static func undoneBoostsSQL(_ taken: [Int64]) -> SQL {
        """
        DELETE FROM home_entries WHERE (user_id, created_at, post_id, boosted_by) IN (
            SELECT f.follower_id, bp.created_at, bp.post_id, bp.user_id FROM boost_pending bp
            JOIN follows f ON f.followee_id = bp.user_id WHERE bp.boost_id IN (\(binds: taken)) AND bp.undo)
        """
    }

    /// Enters the new boosts among `taken` (queue rows), and for each follower who lost a post
    /// with an undone boost among them, the earliest boost of it still standing by someone else
    /// they follow: the one that brings it now (unless it waits itself, to be entered by its own
    /// row, or to leave with it if undone first).
    static func enterBoostsSQL(_ taken: [Int64]) -> SQL {
        """
        INSERT INTO home_entries (user_id, created_at, post_id, boosted_by)
        SELECT f.follower_id, bp.created_at, bp.post_id, bp.user_id FROM boost_pending bp JOIN posts p ON p.id = bp.post_id
        JOIN follows f ON f.followee_id = bp.user_id AND NOT f.pulled
        WHERE bp.boost_id IN (\(binds: taken)) AND NOT bp.undo AND \(BoostStore.reaches(follower: "f.follower_id"))
        UNION ALL SELECT f.follower_id, bp.created_at, bp.post_id, bp.user_id FROM boost_pending bu
        JOIN follows f ON f.followee_id = bu.user_id AND NOT f.pulled
        JOIN boosts bp ON bp.post_id = bu.post_id
        JOIN follows g ON g.follower_id = f.follower_id AND g.followee_id = bp.user_id AND NOT g.pulled
        JOIN posts p ON p.id = bu.post_id
        WHERE bu.boost_id IN (\(binds: taken)) AND bu.undo AND \(BoostStore.reaches(follower: "f.follower_id"))
        AND NOT EXISTS (SELECT 1 FROM boost_pending w WHERE w.boost_id = bp.id)
        ORDER BY 1, 2, 3
        ON CONFLICT DO NOTHING
        """
    }

    /// The timeline rows a queued post or boost of account `u` writes: one for each follower
    /// (none when the account is pulled: its follows are), and `own` in its own timeline.
    private static func timelineRows(own: Int) -> SQL {
        "CASE WHEN u.home_pulled THEN \(bind: own) ELSE u.followers_count + \(bind: own) END"
    }

    /// Takes queue rows off `table` for one batch: `waiting` lists the candidates, oldest first,
    /// as `id`, `account` (whose followers the row reaches), `author` (of the post) and `n` (the
    /// timeline rows it writes). It stops before the row that would take it past `rows`, but
    /// always takes one; locks the accounts and authors in id order, then the rows, skipping any
    /// another server holds, and returns the ids it holds.
    private static func take(
        _ waiting: SQL, from table: String, key: String, rows: Int, on db: Connection
    ) async throws -> [Int64] {
        var candidates: [(id: Int64, people: [Int64])] = []
        var entries = 0
        for row in try await db.rows(waiting) {
            entries += try row.decode(column: "n", as: Int.self)
            if entries > rows, !candidates.isEmpty { break }
            let people = [
                try row.decode(column: "account", as: Int64.self), try row.decode(column: "author", as: Int64.self),
            ]
            candidates.append((try row.decode(column: "id", as: Int64.self), people))
        }
        guard !candidates.isEmpty else { return [] }
        try await PeopleStore.lockInOrder(candidates.flatMap(\.people), on: db)
        let lock = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        return try await db.rows(
            """
            SELECT \(unsafeRaw: key) AS id FROM \(unsafeRaw: table) WHERE \(unsafeRaw: key) IN (\(binds: candidates.map(\.id)))\(lock)
            """
        ).map { try $0.decode(column: "id", as: Int64.self) }
    }

    /// True when anything `user` should see in their home feed (or in their list `list`'s)
    /// waits: a post in `home_pending`, theirs or of someone they follow and is not pulled, or a
    /// boost (or the undoing of one) in `boost_pending` by someone they follow and is not pulled.
    static func pendingSQL(of user: Int64, list: Int64?) -> SQL {
        """
        (EXISTS (SELECT 1 FROM home_pending hp WHERE \(pendingAuthor(of: user, list: list, account: "hp.author_id"))) \
        OR EXISTS (SELECT 1 FROM boost_pending bp WHERE bp.user_id IN (\(followed(by: user, list: nil)))))
        """
    }

    /// True when the account in `account` is one whose waiting posts belong in `user`'s home
    /// feed: `user`, or someone they follow and is not pulled (for a list's feed, in the list).
    static func pendingAuthor(of user: Int64, list: Int64?, account: SQL) -> SQL {
        let followed = followed(by: user, list: list)
        guard list == nil else { return "\(account) IN (\(followed))" }
        return "\(account) IN (\(followed) UNION ALL SELECT \(bind: user))"
    }

    /// The accounts `user` follows and are not pulled (in their list `list`, if given).
    static func followed(by user: Int64, list: Int64?) -> SQL {
        var followed: SQL =
            "SELECT f.followee_id FROM follows f WHERE f.follower_id = \(bind: user) AND NOT f.pulled"
        if let list { followed += " AND \(inList(list, account: "f.followee_id"))" }
        return followed
    }

    /// Takes a post out of every timeline: its author's, its author's followers' (including
    /// pulled ones, whose entries may date from before the account was pulled) and its tags'
    /// followers'. Run before the post's row (and so its tags) goes.
    static func remove(post: Int64, author: Int64, on db: Connection) async throws {
        try await db.exec(removeSQL(post: post, author: author))
    }

    static func removeSQL(post: Int64, author: Int64) -> SQL {
        """
        DELETE FROM home_entries
        WHERE created_at = (SELECT created_at FROM posts WHERE id = \(bind: post)) AND post_id = \(bind: post)
        AND user_id IN (
            SELECT follower_id FROM follows WHERE followee_id = \(bind: author) UNION ALL SELECT \(bind: author)
            UNION ALL SELECT tf.user_id FROM post_tags pt JOIN tag_follows tf ON tf.tag = pt.tag WHERE pt.post_id = \(bind: post))
        """
    }

    /// `follower` now follows `followee` (the follow row is in): marks the follow pulled when the
    /// followee is, or makes the followee pulled when this follow takes them over the limit;
    /// otherwise enters the followee's latest posts in the follower's timeline.
    func followed(follower: Int64, followee: Int64, on db: Connection) async throws {
        let row = try await db.first(
            "SELECT home_pulled, followers_count FROM users WHERE id = \(bind: followee)")
        guard let row else { return }
        if try row.decode(column: "home_pulled", as: Bool.self) {
            try await db.exec(
                "UPDATE follows SET pulled = TRUE WHERE follower_id = \(bind: follower) AND followee_id = \(bind: followee)"
            )
            return
        }
        if try row.decode(column: "followers_count", as: Int.self) > fanOutLimit {
            // Once, for good: later posts are read by each follower, earlier ones stay entered.
            try await db.exec("UPDATE users SET home_pulled = TRUE WHERE id = \(bind: followee)")
            try await db.exec("UPDATE follows SET pulled = TRUE WHERE followee_id = \(bind: followee)")
            return
        }
        try await db.exec(Self.backfillSQL(follower: follower, followee: followee))
        try await db.exec(BoostStore.redundantSQL(of: follower))
    }

    static func backfillSQL(follower: Int64, followee: Int64) -> SQL {
        """
        INSERT INTO home_entries (user_id, created_at, post_id)
        SELECT \(bind: follower), created_at, id FROM posts WHERE author_id = \(bind: followee)
        ORDER BY created_at DESC, id DESC LIMIT \(bind: backfill)
        ON CONFLICT DO NOTHING
        """
    }

    /// `follower` no longer follows `followee` (run before or after the follow row goes): the
    /// followee's posts leave the follower's timeline.
    static func unfollowed(follower: Int64, followee: Int64, on db: Connection) async throws {
        try await db.exec(unfollowedSQL(follower: follower, followee: followee))
        try await db.exec(BoostStore.unfollowedSQL(follower: follower, followee: followee))
    }

    static func unfollowedSQL(follower: Int64, followee: Int64) -> SQL {
        """
        DELETE FROM home_entries WHERE user_id = \(bind: follower)
        AND (created_at, post_id) IN (SELECT created_at, id FROM posts WHERE author_id = \(bind: followee))
        """
    }

    /// What a person's home feed merges besides their timeline: the accounts they follow that are
    /// pulled, and the spaces they joined; whether they have accounts in an exclusive list (left
    /// out of it). A list's feed merges the pulled accounts of the list, and no space.
    struct Sources: Sendable {
        var pulled: [Int64] = []
        var spaces: [Int64] = []
        var exclusive = false
        /// The list whose feed this is.
        var list: Int64?
        /// Whether posts or boosts for this feed wait in `home_pending` or `boost_pending`.
        var pending = false
    }

    static func sources(of user: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: user)).map { try $0.decode(column: "followee_id", as: Int64.self) }
        let flags = try await db.first(flagsSQL(of: user, list: nil))
        return Sources(
            pulled: pulled, spaces: try await SpaceStore.memberships(of: user, on: db),
            exclusive: try flags?.decode(column: "exclusive", as: Bool.self) ?? false,
            pending: try flags?.decode(column: "pending", as: Bool.self) ?? false)
    }

    /// The sources of `owner`'s list `list`'s feed.
    static func sources(of owner: Int64, list: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: owner, list: list)).map {
            try $0.decode(column: "followee_id", as: Int64.self)
        }
        let flags = try await db.first(flagsSQL(of: owner, list: list))
        return Sources(
            pulled: pulled, list: list, pending: try flags?.decode(column: "pending", as: Bool.self) ?? false)
    }

    /// In one statement, `exclusive`: whether `user` has any account in an exclusive list (by
    /// `list_accounts_exclusive`; false for a list's feed, which leaves no one out), and
    /// `pending`: whether anything waits for the feed (`pendingSQL`).
    static func flagsSQL(of user: Int64, list: Int64?) -> SQL {
        let exclusive: SQL =
            list == nil
            ? "EXISTS (SELECT 1 FROM list_accounts WHERE user_id = \(bind: user) AND exclusive)" : "FALSE"
        return "SELECT \(exclusive) AS exclusive, \(pendingSQL(of: user, list: list)) AS pending"
    }

    /// The pulled accounts `user` follows: in their list `list`, or else not in an exclusive list of theirs.
    static func pulledSQL(of user: Int64, list: Int64? = nil, ordered: Bool = true) -> SQL {
        var sql: SQL = "SELECT f.followee_id FROM follows f WHERE f.follower_id = \(bind: user) AND f.pulled"
        if let list {
            sql += " AND \(inList(list, account: "f.followee_id"))"
        } else {
            sql += " AND NOT \(inExclusiveList(of: user, account: "f.followee_id"))"
        }
        if ordered { sql += " ORDER BY f.followee_id" }
        return sql
    }

    /// True when the account in `account` is in list `list`.
    static func inList(_ list: Int64, account: SQL) -> SQL {
        "EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = \(bind: list) AND la.account_id = \(account))"
    }

    /// True when the account in `account` is in an exclusive list of `user`.
    static func inExclusiveList(of user: Int64, account: SQL) -> SQL {
        """
        EXISTS (SELECT 1 FROM list_accounts lx WHERE lx.user_id = \(bind: user) AND lx.account_id = \(account) \
        AND lx.exclusive)
        """
    }
}
