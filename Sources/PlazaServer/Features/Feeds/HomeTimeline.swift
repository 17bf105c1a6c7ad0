import SQLKit

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
///   `home_pending` too, so a post is in its readers' feeds as soon as it is made.
/// - People with many followers are read at read time instead: once an account has more than
///   `fanOutLimit` followers, `users.home_pulled` is set for good and every follow of it becomes
///   `pulled`; their posts are not entered anywhere, and each follower's home feed merges the
///   newest page of each pulled account (as it merges each joined space's).
/// - Who may read what (audiences, blocks, mutes, suspensions) is applied when the page is read,
///   by `Visibility`, so an entry never shows what its reader may not see.
///
/// Every other change runs in the write's transaction, under the locks the write takes anyway:
/// the author's row for a new or deleted post, both people's rows for a follow or unfollow; a
/// batch of waiting posts takes its authors' rows too. So a follow and a post by the followee
/// never miss each other.
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
    static func fanOut(post: Int64, author: Int64, createdAt: Int64, on db: Connection) async throws {
        try await db.exec(fanOutSQL(post: post, author: author, createdAt: createdAt))
    }

    static func fanOutSQL(post: Int64, author: Int64, createdAt: Int64) -> SQLQueryString {
        "INSERT INTO home_pending (post_id, author_id, created_at) VALUES (\(bind: post), \(bind: author), \(bind: createdAt))"
    }

    /// Enters up to `limit` waiting posts, the oldest first, in their authors' timelines and
    /// their followers' (unless pulled), follower by follower, and takes them off the queue;
    /// returns how many it took. It stops before the post that would take it past `rows`
    /// timeline rows (the authors' follower counts), but always takes one: an account may have
    /// up to `fanOutLimit` followers, so a count of posts alone does not bound a batch. With
    /// `post`, enters that post alone if it waits (a boost does, first, to know who has the post
    /// already).
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
    static func enterPending(limit: Int, rows: Int = .max, post: Int64? = nil, on db: Connection) async throws
        -> Int
    {
        let only: SQLQueryString = post.map { " WHERE hp.post_id = \(bind: $0)" } ?? ""
        var waiting: [(post: Int64, author: Int64)] = []
        var entries = 0
        for row in try await db.rows(
            """
            SELECT hp.post_id, hp.author_id, u.followers_count FROM home_pending hp JOIN users u ON u.id = hp.author_id\(only)
            ORDER BY hp.post_id LIMIT \(bind: limit)
            """)
        {
            entries += try row.decode(column: "followers_count", as: Int.self) + 1
            if entries > rows, !waiting.isEmpty { break }
            waiting.append(
                (try row.decode(column: "post_id", as: Int64.self), try row.decode(column: "author_id", as: Int64.self))
            )
        }
        guard !waiting.isEmpty else { return 0 }
        try await PeopleStore.lockInOrder(waiting.map(\.author), on: db)
        let candidates = waiting.map(\.post)
        let taken = try await db.rows(
            """
            SELECT post_id FROM home_pending WHERE post_id IN (\(binds: candidates))\(db.dialect.rowLock(.update, skipLocked: true) ?? "")
            """
        ).map { try $0.decode(column: "post_id", as: Int64.self) }
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

    /// Whether a post `user` should see in their home feed (or in their list `list`'s) waits in
    /// `home_pending`: theirs, or of someone they follow and is not pulled.
    static func hasPendingSQL(of user: Int64, list: Int64?) -> SQLQueryString {
        "SELECT 1 AS x FROM home_pending hp WHERE \(pendingAuthor(of: user, list: list, account: "hp.author_id")) LIMIT 1"
    }

    /// True when the account in `account` is one whose waiting posts belong in `user`'s home
    /// feed: `user`, or someone they follow and is not pulled (for a list's feed, in the list).
    static func pendingAuthor(of user: Int64, list: Int64?, account: SQLQueryString) -> SQLQueryString {
        var followed: SQLQueryString =
            "SELECT f.followee_id FROM follows f WHERE f.follower_id = \(bind: user) AND NOT f.pulled"
        guard let list else { return "\(account) IN (\(followed) UNION ALL SELECT \(bind: user))" }
        followed += " AND \(inList(list, account: "f.followee_id"))"
        return "\(account) IN (\(followed))"
    }

    /// Takes a post out of every timeline: its author's, its author's followers' (including
    /// pulled ones, whose entries may date from before the account was pulled) and its tags'
    /// followers'. Run before the post's row (and so its tags) goes.
    static func remove(post: Int64, author: Int64, on db: Connection) async throws {
        try await db.exec(removeSQL(post: post, author: author))
    }

    static func removeSQL(post: Int64, author: Int64) -> SQLQueryString {
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
    }

    static func backfillSQL(follower: Int64, followee: Int64) -> SQLQueryString {
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

    static func unfollowedSQL(follower: Int64, followee: Int64) -> SQLQueryString {
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
        /// Whether posts for this feed wait in `home_pending`.
        var pending = false
    }

    static func sources(of user: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: user)).map { try $0.decode(column: "followee_id", as: Int64.self) }
        let exclusive = try await db.first(exclusiveSQL(of: user)) != nil
        return Sources(
            pulled: pulled, spaces: try await SpaceStore.memberships(of: user, on: db), exclusive: exclusive,
            pending: try await db.first(hasPendingSQL(of: user, list: nil)) != nil)
    }

    /// The sources of `owner`'s list `list`'s feed.
    static func sources(of owner: Int64, list: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: owner, list: list)).map {
            try $0.decode(column: "followee_id", as: Int64.self)
        }
        return Sources(
            pulled: pulled, list: list, pending: try await db.first(hasPendingSQL(of: owner, list: list)) != nil)
    }

    /// The pulled accounts `user` follows: in their list `list`, or else not in an exclusive list of theirs.
    static func pulledSQL(of user: Int64, list: Int64? = nil, ordered: Bool = true) -> SQLQueryString {
        var sql: SQLQueryString = "SELECT f.followee_id FROM follows f WHERE f.follower_id = \(bind: user) AND f.pulled"
        if let list {
            sql += " AND \(inList(list, account: "f.followee_id"))"
        } else {
            sql += " AND NOT \(inExclusiveList(of: user, account: "f.followee_id"))"
        }
        if ordered { sql += " ORDER BY f.followee_id" }
        return sql
    }

    /// Whether `user` has any account in an exclusive list (by `list_accounts_exclusive`).
    static func exclusiveSQL(of user: Int64) -> SQLQueryString {
        "SELECT 1 AS x FROM list_accounts WHERE user_id = \(bind: user) AND exclusive LIMIT 1"
    }

    /// True when the account in `account` is in list `list`.
    static func inList(_ list: Int64, account: SQLQueryString) -> SQLQueryString {
        "EXISTS (SELECT 1 FROM list_accounts la WHERE la.list_id = \(bind: list) AND la.account_id = \(account))"
    }

    /// True when the account in `account` is in an exclusive list of `user`.
    static func inExclusiveList(of user: Int64, account: SQLQueryString) -> SQLQueryString {
        """
        EXISTS (SELECT 1 FROM list_accounts lx WHERE lx.user_id = \(bind: user) AND lx.account_id = \(account) \
        AND lx.exclusive)
        """
    }
}
