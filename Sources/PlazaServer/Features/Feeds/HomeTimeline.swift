import SQLKit

/// Each person's home timeline, filled on write ("fan-out"), so reading a page of it costs a
/// page whatever the person follows and however much those people have posted; see
/// `docs/feeds.md` for the choice and its cost.
///
/// - `home_entries (user_id, created_at, post_id)`: a post is entered in its author's timeline and
///   in the timeline of each follower whose follow is not `pulled`, when it is made; a new follow
///   enters the followee's latest `backfill` posts; an unfollow (or a block) takes the followee's
///   posts out; deleting a post takes it out of every timeline it is in.
/// - People with many followers are read at read time instead: once an account has more than
///   `fanOutLimit` followers, `users.home_pulled` is set for good and every follow of it becomes
///   `pulled`; their posts are not entered anywhere, and each follower's home feed merges the
///   newest page of each pulled account (as it merges each joined space's).
/// - Who may read what (audiences, blocks, mutes, suspensions) is applied when the page is read,
///   by `Visibility`, so an entry never shows what its reader may not see.
///
/// Every change runs in the write's transaction, under the locks the write takes anyway: the
/// author's row for a new or deleted post, both people's rows for a follow or unfollow. So a
/// follow and a post by the followee never miss each other.
struct HomeTimeline: Sendable {
    /// Followers above which an account is pulled at read time rather than fanned out.
    var fanOutLimit: Int

    static let defaultFanOutLimit = 5_000
    /// How many of a newly followed person's posts a follow enters (Mastodon merges 400).
    static let backfill = 400
    /// Pulled accounts merged one by one into a page (each walks its own index in order); any
    /// more are read together, in one branch that sorts their posts.
    static let maxPulledBranches = 100

    /// Enters a new post in its author's timeline and their followers' (unless pulled).
    static func fanOut(post: Int64, author: Int64, createdAt: Int64, on db: Connection) async throws {
        try await db.exec(fanOutSQL(post: post, author: author, createdAt: createdAt))
    }

    static func fanOutSQL(post: Int64, author: Int64, createdAt: Int64) -> SQLQueryString {
        """
        INSERT INTO home_entries (user_id, created_at, post_id)
        SELECT follower_id, \(bind: createdAt), \(bind: post) FROM follows WHERE followee_id = \(bind: author) AND NOT pulled
        UNION ALL SELECT \(bind: author), \(bind: createdAt), \(bind: post)
        """
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
    }

    static func sources(of user: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: user)).map { try $0.decode(column: "followee_id", as: Int64.self) }
        let exclusive = try await db.first(exclusiveSQL(of: user)) != nil
        return Sources(
            pulled: pulled, spaces: try await SpaceStore.memberships(of: user, on: db), exclusive: exclusive)
    }

    /// The sources of `owner`'s list `list`'s feed.
    static func sources(of owner: Int64, list: Int64, on db: Connection) async throws -> Sources {
        let pulled = try await db.rows(pulledSQL(of: owner, list: list)).map {
            try $0.decode(column: "followee_id", as: Int64.self)
        }
        return Sources(pulled: pulled, list: list)
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
