import PlazaAPI
import SQLKit

/// Likes; a post's like count is kept on write.
struct LikeStore: Sendable {
    let db: Database

    /// Likes or unlikes (idempotently) and returns the new state. One statement on the write
    /// path; the count (kept by a trigger) is read back from a reader.
    func set(post: Int64, user: Int64, liked: Bool) async throws -> LikeState {
        let now = Timestamp.now.milliseconds
        do {
            if liked {
                try await db.write(
                    "INSERT INTO likes (post_id, user_id, created_at) VALUES (\(bind: post), \(bind: user), \(bind: now)) ON CONFLICT DO NOTHING")
            } else {
                try await db.write("DELETE FROM likes WHERE post_id = \(bind: post) AND user_id = \(bind: user)")
            }
        } catch where Dialect.isForeignKeyViolation(error) {
            throw PlazaError.notFound("Post")
        }
        let count = try await db.read { db in
            try await db.first("SELECT likes_count FROM posts WHERE id = \(bind: post)")?.decode(column: "likes_count", as: Int.self)
        }
        return LikeState(liked: liked, likes: count ?? 0)
    }

    /// Who liked a post, newest like first, without users the viewer has a block with.
    func likers(post: Int64, page: PageRequest, viewer: Int64?, people: PeopleStore) async throws -> Page<User> {
        let query = Self.likersSQL(post: post, page: page, viewer: viewer)
        return try await people.userPage(query, timeColumn: "liked_at", limit: page.limit, viewer: viewer)
    }

    static func likersSQL(post: Int64, page: PageRequest, viewer: Int64?) -> SQLQueryString {
        var sql: SQLQueryString = """
            SELECT \(UserRecord.columns()), l.created_at AS liked_at FROM likes l JOIN users u ON u.id = l.user_id
            WHERE l.post_id = \(bind: post)
            """
        if let cursor = page.cursor { sql += " AND (l.created_at, l.user_id) < (\(bind: cursor.time), \(bind: cursor.id))" }
        if viewer != nil { sql += " AND NOT \(PeopleStore.blockedEitherWay(viewer: viewer, column: "l.user_id"))" }
        sql += " ORDER BY l.created_at DESC, l.user_id DESC LIMIT \(bind: page.limit + 1)"
        return sql
    }
}
