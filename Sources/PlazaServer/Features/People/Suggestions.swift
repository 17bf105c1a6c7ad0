import Hummingbird
import PlazaAPI

/// People and spaces to follow, for someone whose home feed is (nearly) empty: people followed
/// by the people I follow, who post in my spaces, or who posted lately; spaces my people are
/// in, or where people posted lately. Every source is a walk of an index cut by a LIMIT, one
/// branch per person I follow and per space of mine (the newest 20 and 10), as the home feed
/// merges its sources: the cost does not grow with anyone's follows or any space's posts.
package struct SuggestionStore: Sendable {
    let db: Database
    let people: PeopleStore

    package init(people: PeopleStore) {
        db = people.db
        self.people = people
    }

    static let limit = 10
    /// How many of my newest follows and memberships are read, and how much of each.
    static let followees = 20
    static let spaces = 10
    static let perSource = 50

    /// Whom I follow and which spaces I am in, newest first (bounded).
    struct Sources: Sendable {
        var followees: [Int64] = []
        var spaces: [Int64] = []
    }

    func suggestions(for viewer: Int64) async throws -> Suggestions {
        let (userRows, spaceRows) = try await db.read { db in
            let sources = try await Self.sources(of: viewer, on: db)
            return (
                try await db.rows(Self.peopleSQL(for: viewer, sources)),
                try await db.rows(Self.spacesSQL(for: viewer, sources))
            )
        }
        return Suggestions(
            people: try await people.users(try userRows.map(UserRecord.init(row:)), viewer: viewer),
            spaces: try spaceRows.map { try SpaceStore.space(row: $0, viewer: viewer) })
    }

    /// Why a person is suggested: the strongest of the sources that named them.
    package enum Reason: Int, Sendable {
        /// Someone I follow follows them.
        case followedByMyFollows = 3
        /// They posted lately in one of my spaces.
        case postsInMySpaces = 2
        /// They posted publicly lately.
        case postedLately = 1
    }

    /// The people of `suggestions(for:)`, each with why (Mastodon's suggestions).
    package func people(for viewer: Int64) async throws -> [(user: User, reason: Reason)] {
        let rows = try await db.read { db in
            try await db.rows(Self.peopleSQL(for: viewer, try await Self.sources(of: viewer, on: db)))
        }
        let users = try await people.users(try rows.map(UserRecord.init(row:)), viewer: viewer)
        return try zip(users, rows).map { user, row in
            (user, Reason(rawValue: try row.decode(column: "best", as: Int.self)) ?? .postedLately)
        }
    }

    static func sources(of viewer: Int64, on db: Connection) async throws -> Sources {
        let followees = try await db.rows(
            """
            SELECT followee_id FROM follows WHERE follower_id = \(bind: viewer) ORDER BY created_at DESC LIMIT \(bind: Self.followees)
            """
        ).map { try $0.decode(column: "followee_id", as: Int64.self) }
        let spaces = try await db.rows(
            """
            SELECT space_id FROM space_members WHERE user_id = \(bind: viewer) ORDER BY created_at DESC LIMIT \(bind: Self.spaces)
            """
        ).map { try $0.decode(column: "space_id", as: Int64.self) }
        return Sources(followees: followees, spaces: spaces)
    }

    /// One bounded branch: `select` ordered by `order`, at most `perSource` rows.
    private static func branch(_ select: SQL, order: SQL, limit: Int = perSource)
        -> SQL
    {
        "SELECT id, weight FROM (SELECT \(select) ORDER BY \(order) LIMIT \(bind: limit)) AS by_source"
    }

    /// Recent public posts that anyone may read: the fallback source of both lists.
    private static let recentPosts: SQL =
        "p.audience = 'public' AND NOT p.processing"

    /// Scored candidates: 3 for each person I follow who follows them, 2 for each recent post of
    /// theirs in my spaces that I may read, 1 for each recent public post; not me, nobody I
    /// follow, asked to follow or muted, nobody hidden from me.
    static func peopleSQL(for viewer: Int64, _ sources: Sources) -> SQL {
        var branches: [SQL] = sources.followees.map {
            branch(
                "followee_id AS id, 3 AS weight FROM follows WHERE follower_id = \(bind: $0)",
                order: "created_at DESC")
        }
        branches += sources.spaces.map {
            branch(
                """
                p.author_id AS id, 2 AS weight FROM post_spaces ps JOIN posts p ON p.id = ps.post_id
                WHERE ps.space_id = \(bind: $0) AND \(Visibility.post("p", readableBy: viewer))
                """,
                order: "ps.created_at DESC")
        }
        branches.append(
            branch(
                "p.author_id AS id, 1 AS weight FROM posts p WHERE \(recentPosts)", order: "p.created_at DESC",
                limit: 500))
        return """
            SELECT \(UserRecord.columns), scored.score, scored.best FROM (
                SELECT id, SUM(weight) AS score, MAX(weight) AS best
                FROM (\(branches.joined(separator: " UNION ALL "))) AS candidates GROUP BY id
            ) AS scored JOIN users u ON u.id = scored.id
            WHERE u.id <> \(bind: viewer) AND \(Visibility.profile(seenBy: viewer))
                AND NOT EXISTS (SELECT 1 FROM follows mf WHERE mf.follower_id = \(bind: viewer) AND mf.followee_id = u.id)
                AND NOT EXISTS (SELECT 1 FROM follow_requests mr WHERE mr.requester_id = \(bind: viewer) AND mr.target_id = u.id)
                AND \(Visibility.unmuted("u.id", by: viewer))
            ORDER BY scored.score DESC, u.id DESC LIMIT \(bind: limit)
            """
    }

    /// Spaces the people I follow are in (2 each) and where public posts went lately (1 each);
    /// listed to me, not mine already.
    static func spacesSQL(for viewer: Int64, _ sources: Sources) -> SQL {
        var branches: [SQL] = sources.followees.map {
            branch(
                "space_id AS id, 2 AS weight FROM space_members WHERE user_id = \(bind: $0)", order: "created_at DESC")
        }
        branches.append(
            branch(
                "ps.space_id AS id, 1 AS weight FROM posts p JOIN post_spaces ps ON ps.post_id = p.id WHERE \(recentPosts)",
                order: "p.created_at DESC", limit: 500))
        return """
            SELECT \(SpaceStore.columns(viewer: viewer)) FROM (
                SELECT id, SUM(weight) AS score FROM (\(branches.joined(separator: " UNION ALL "))) AS candidates GROUP BY id
            ) AS scored JOIN spaces s ON s.id = scored.id JOIN users u ON u.id = s.owner_id
            WHERE s.visibility <> 'private'
                AND NOT EXISTS (SELECT 1 FROM space_members mm WHERE mm.space_id = s.id AND mm.user_id = \(bind: viewer))
            ORDER BY scored.score DESC, s.id DESC LIMIT 5
            """
    }
}
