import Hummingbird
import PlazaAPI
import SQLKit

extension Suggestions: ResponseEncodable {}

/// People and spaces to follow, for someone whose home feed is (nearly) empty: people followed
/// by the people I follow, who post in my spaces, or who posted lately; spaces my people are
/// in, or where people posted lately. Each source reads a bounded slice (the newest 200
/// follows, 50 memberships, 500 posts), so the cost does not grow with the graph.
struct SuggestionStore: Sendable {
    let db: Database
    let people: PeopleStore

    static let limit = 10

    func suggestions(for viewer: Int64) async throws -> Suggestions {
        let (userRows, spaceRows) = try await db.read { db in
            (try await db.rows(Self.peopleSQL(for: viewer)), try await db.rows(Self.spacesSQL(for: viewer)))
        }
        return Suggestions(
            people: try await people.users(try userRows.map(UserRecord.init(row:)), viewer: viewer),
            spaces: try spaceRows.map { try SpaceStore.space(row: $0, viewer: viewer) })
    }

    /// Scored candidates: 3 for each person I follow who follows them, 2 for each recent post of
    /// theirs in my spaces, 1 for each recent public post; not me, nobody I follow or asked to,
    /// nobody hidden from me.
    static func peopleSQL(for viewer: Int64) -> SQLQueryString {
        """
        SELECT \(UserRecord.columns), scored.score FROM (
            SELECT id, SUM(weight) AS score FROM (
                SELECT f2.followee_id AS id, 3 AS weight FROM
                    (SELECT followee_id FROM follows WHERE follower_id = \(bind: viewer) ORDER BY created_at DESC LIMIT 200) recent_follows
                    JOIN follows f2 ON f2.follower_id = recent_follows.followee_id
                UNION ALL
                SELECT p.author_id AS id, 2 AS weight FROM (
                    SELECT ps.post_id FROM post_spaces ps WHERE ps.space_id IN (
                        SELECT space_id FROM space_members WHERE user_id = \(bind: viewer) ORDER BY created_at DESC LIMIT 50)
                    ORDER BY ps.created_at DESC LIMIT 500) space_posts
                    JOIN posts p ON p.id = space_posts.post_id
                UNION ALL
                SELECT recent_posts.author_id AS id, 1 AS weight FROM
                    (SELECT author_id FROM posts WHERE audience = 'public' AND NOT processing ORDER BY created_at DESC LIMIT 500) recent_posts
            ) candidates GROUP BY id
        ) scored JOIN users u ON u.id = scored.id
        WHERE u.id <> \(bind: viewer) AND \(Visibility.profile(seenBy: viewer))
            AND NOT EXISTS (SELECT 1 FROM follows mf WHERE mf.follower_id = \(bind: viewer) AND mf.followee_id = u.id)
            AND NOT EXISTS (SELECT 1 FROM follow_requests mr WHERE mr.requester_id = \(bind: viewer) AND mr.target_id = u.id)
        ORDER BY scored.score DESC, u.id DESC LIMIT \(bind: limit)
        """
    }

    /// Spaces the people I follow are in (2 each) and where public posts went lately (1 each);
    /// listed to me, not mine already.
    static func spacesSQL(for viewer: Int64) -> SQLQueryString {
        """
        SELECT \(SpaceStore.columns(viewer: viewer)) FROM (
            SELECT id, SUM(weight) AS score FROM (
                SELECT m.space_id AS id, 2 AS weight FROM
                    (SELECT followee_id FROM follows WHERE follower_id = \(bind: viewer) ORDER BY created_at DESC LIMIT 200) recent_follows
                    JOIN space_members m ON m.user_id = recent_follows.followee_id
                UNION ALL
                SELECT ps.space_id AS id, 1 AS weight FROM
                    (SELECT id FROM posts WHERE audience = 'public' AND NOT processing ORDER BY created_at DESC LIMIT 500) recent_posts
                    JOIN post_spaces ps ON ps.post_id = recent_posts.id
            ) candidates GROUP BY id
        ) scored JOIN spaces s ON s.id = scored.id JOIN users u ON u.id = s.owner_id
        WHERE s.visibility <> 'private'
            AND NOT EXISTS (SELECT 1 FROM space_members mm WHERE mm.space_id = s.id AND mm.user_id = \(bind: viewer))
        ORDER BY scored.score DESC, s.id DESC LIMIT \(bind: 5)
        """
    }
}
