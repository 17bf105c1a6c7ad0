import PlazaAPI
import SQLKit

/// Likes; a post's like count is kept on write.
struct LikeStore: Sendable {
    let db: Database

    /// Likes or unlikes (idempotently) and returns the new state.
    func set(post: Int64, user: Int64, liked: Bool) async throws -> LikeState {
        let now = Timestamp.now.milliseconds
        do {
            return try await write(post: post, user: user, liked: liked, now: now)
        } catch where Dialect.isForeignKeyViolation(error) {
            throw PlazaError.notFound("Post")
        }
    }

    private func write(post: Int64, user: Int64, liked: Bool, now: Int64) async throws -> LikeState {
        try await db.write { db in
            let changed =
                liked
                ? try await db.first(
                    "INSERT INTO likes (post_id, user_id, created_at) VALUES (\(bind: post), \(bind: user), \(bind: now)) ON CONFLICT DO NOTHING RETURNING post_id")
                : try await db.first("DELETE FROM likes WHERE post_id = \(bind: post) AND user_id = \(bind: user) RETURNING post_id")
            let delta = changed == nil ? 0 : liked ? 1 : -1
            let count: Row? =
                delta == 0
                ? try await db.first("SELECT likes_count FROM posts WHERE id = \(bind: post)")
                : try await db.first("UPDATE posts SET likes_count = likes_count + \(bind: delta) WHERE id = \(bind: post) RETURNING likes_count")
            return LikeState(liked: liked, likes: try count?.decode(column: "likes_count", as: Int.self) ?? 0)
        }
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
