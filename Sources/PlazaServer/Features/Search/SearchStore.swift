import PlazaAPI
import SQLKit

/// Full-text search over posts (FTS5 on SQLite, a weighted `tsvector` on PostgreSQL), ranked by
/// relevance with recency breaking ties, filtered like the feeds and by the viewer's blocks.
struct SearchStore: Sendable {
    let db: Database

    struct PostQuery: Sendable {
        var text: SearchText
        var field: SearchText.Field = .all
        var space: Int64?
        var kind: PostKind?
        var page: PageRequest
    }

    func posts(_ query: PostQuery, viewer: Int64?) async throws -> Page<Post> {
        let sql = Self.postsSQL(query, viewer: viewer, kind: db.kind)
        let rows = try await db.read { db in try await db.rows(sql) }
        let records = try rows.prefix(query.page.limit).map(PostRecord.init(row:))
        var next: String?
        if rows.count > query.page.limit, let last = records.last {
            let score = try rows[query.page.limit - 1].decode(column: "score", as: Double.self)
            next = Cursor(time: last.post.createdAt.milliseconds, id: last.id, score: score).encoded
        }
        return Page(items: records.map(\.post), nextCursor: next)
    }

    /// Lower scores rank first: FTS5's bm25 is negative (more relevant, more negative), and
    /// PostgreSQL's `ts_rank` is negated to match.
    static func postsSQL(_ query: PostQuery, viewer: Int64?, kind: DatabaseKind) -> SQLQueryString {
        var filters: SQLQueryString = ""
        if let kind = query.kind { filters += " AND p.kind = \(bind: kind.rawValue)" }
        if let space = query.space {
            filters += " AND EXISTS (SELECT 1 FROM post_spaces fs WHERE fs.post_id = p.id AND fs.space_id = \(bind: space))"
        }
        if viewer != nil { filters += " AND NOT \(PeopleStore.blockedEitherWay(viewer: viewer, column: "p.author_id"))" }
        var sql: SQLQueryString
        switch kind {
        case .sqlite:
            // Column weights: title, body, author, spaces.
            sql = """
                SELECT * FROM (SELECT \(PostRecord.columns(viewer: viewer)), bm25(posts_search, 8.0, 1.0, 4.0, 2.0) AS score
                FROM posts_search JOIN posts p ON p.id = posts_search.rowid JOIN users u ON u.id = p.author_id
                WHERE posts_search MATCH \(bind: query.text.fts5(in: query.field))\(filters)) AS r
                """
        case .postgres:
            sql = """
                SELECT * FROM (SELECT \(PostRecord.columns(viewer: viewer)), (-ts_rank(p.search, q.query))::float8 AS score
                FROM posts p JOIN users u ON u.id = p.author_id, (SELECT to_tsquery('plaza_search', \(bind: query.text.tsquery(in: query.field))) AS query) q
                WHERE p.search @@ q.query\(filters)) AS r
                """
        }
        if let cursor = query.page.cursor, let score = cursor.score {
            sql += """
                 WHERE (r.score > \(bind: score) OR (r.score = \(bind: score) AND (r.created_at, r.id) < (\(bind: cursor.time), \(bind: cursor.id))))
                """
        }
        return sql + " ORDER BY r.score, r.created_at DESC, r.id DESC LIMIT \(bind: query.page.limit + 1)"
    }
}
