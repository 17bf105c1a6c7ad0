import PlazaAPI

/// Likes; a post's like count is kept on write.
package struct LikeStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog

    /// Likes or unlikes (idempotently) a post the user may see (else 404) and returns the new
    /// state. A change tells the post's author (`like.changed`, and a grouped notification for a like).
    func set(post: Int64, user: Int64, liked: Bool) async throws -> LikeState {
        let now = Timestamp.now.milliseconds
        let ids = ids
        let count = try await events.write { db -> Int? in
            let changed: Row?
            if liked {
                changed = try await db.first(
                    """
                    INSERT INTO likes (post_id, user_id, created_at) SELECT \(bind: post), \(bind: user), \(bind: now)
                    WHERE \(Visibility.post(id: post, readableBy: user, on: db.dialect)) ON CONFLICT DO NOTHING RETURNING user_id
                    """)
            } else {
                changed = try await db.first(
                    "DELETE FROM likes WHERE post_id = \(bind: post) AND user_id = \(bind: user) RETURNING user_id")
            }
            guard
                let row = try await db.first(
                    """
                    SELECT likes_count, author_id, audience FROM posts p WHERE p.id = \(bind: post)
                    AND \(Visibility.post("p", readableBy: user))
                    """)
            else { return nil }
            let count = try row.decode(column: "likes_count", as: Int.self)
            if changed != nil {
                let author = try row.decode(column: "author_id", as: Int64.self)
                if liked {
                    try await NotificationStore.notify([.like(post: post, author: author, by: user)], ids: ids, on: db)
                    if try row.decode(column: "audience", as: String.self) == PostAudience.public.rawValue {
                        try await Trends.record(.post, [String(post)], by: user, at: now, on: db)
                    }
                }
                let change = LikeChange(postId: String(post), userId: String(user), liked: liked, likes: count)
                try await EventLog.append(
                    .init(
                        kind: .likeChanged, actor: user, post: post,
                        data: String(decoding: try JSON.encoder.encode(change), as: UTF8.self)),
                    to: .users([author]), on: db)
            }
            return count
        }
        guard let count else { throw PlazaError.notFound("Post") }
        return LikeState(liked: liked, likes: count)
    }

    /// Who liked a post, newest like first, without users the viewer has a block with.
    package func likers(post: Int64, page: PageRequest, viewer: Int64?, people: PeopleStore) async throws -> Page<User>
    {
        let query = Self.likersSQL(post: post, page: page, viewer: viewer)
        return try await people.userPage(query, timeColumn: "liked_at", page: page, viewer: viewer)
    }

    static func likersSQL(post: Int64, page: PageRequest, viewer: Int64?) -> SQL {
        var sql: SQL = """
            SELECT \(UserRecord.columns), l.created_at AS liked_at FROM likes l JOIN users u ON u.id = l.user_id
            WHERE l.post_id = \(bind: post)
            """
        if let cursor = page.cursor {
            sql += " AND (l.created_at, l.user_id) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " AND \(Visibility.person("l.user_id", seenBy: viewer))"
        sql += " ORDER BY l.created_at DESC, l.user_id DESC LIMIT \(bind: page.fetchLimit)"
        return sql
    }
}
