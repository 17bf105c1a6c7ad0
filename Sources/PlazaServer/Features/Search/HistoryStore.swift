import PlazaAPI

/// Reading history and the per-person term model behind recommendations. Everything is keyed
/// by the person, so history is private to its owner.
struct HistoryStore: Sendable {
    let db: Database

    /// Records that `user` viewed `post`; 404 when they may not see it. The first view adds the
    /// post's words to their view model.
    func view(post: Int64, by user: Int64, now: Int64 = Timestamp.now.milliseconds) async throws {
        try await db.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT p.created_at, p.title, p.body, \(PostSpacesColumn.select) FROM posts p
                    WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: user))\(db.dialect.rowLock(.keyShare) ?? "")
                    """)
            else { throw PlazaError.notFound("Post") }
            let first =
                try await db.first(
                    """
                    INSERT INTO post_views (user_id, post_id, post_created_at, first_viewed_at, last_viewed_at)
                    VALUES (\(bind: user), \(bind: post), \(bind: try row.decode(column: "created_at", as: Int64.self)), \(bind: now), \(bind: now))
                    ON CONFLICT (user_id, post_id) DO UPDATE SET views = post_views.views + 1, last_viewed_at = \(bind: now)
                    RETURNING views
                    """)?.decode(column: "views", as: Int.self) == 1
            if first { try await Self.add(TermModel.terms(of: Self.text(row)), to: 0, of: user, on: db) }
        }
    }

    /// Records that `user` picked `post` from search results: their click model gains its words,
    /// scaled for recency. The post must be in their history (viewing it is what a pick does).
    func click(post: Int64, by user: Int64, now: Int64 = Timestamp.now.milliseconds) async throws {
        try await db.write { db in
            guard
                let row = try await db.first(
                    """
                    SELECT p.title, p.body, \(PostSpacesColumn.select) FROM post_views v JOIN posts p ON p.id = v.post_id
                    WHERE v.user_id = \(bind: user) AND v.post_id = \(bind: post) AND \(Visibility.post("p", readableBy: user))
                    """)
            else { throw PlazaError.notFound("Post in your history") }
            try await db.exec(
                "UPDATE post_views SET clicks = clicks + 1 WHERE user_id = \(bind: user) AND post_id = \(bind: post)")
            let scale = TermModel.clickScale(at: now)
            try await Self.add(TermModel.terms(of: Self.text(row)).mapValues { $0 * scale }, to: 1, of: user, on: db)
        }
    }

    /// The words of a post for the term model: title, body and its spaces' names.
    static func text(title: String?, body: String?, spaces: [SpaceSummary]) -> String {
        ([title, body].compactMap { $0 } + spaces.map(\.name)).joined(separator: " ")
    }

    static func text(_ row: Row) throws -> String {
        text(
            title: try row.decode(column: "title", as: String?.self),
            body: try row.decode(column: "body", as: String?.self),
            spaces: PostRecord.spaces(try row.decode(column: "spaces", as: String?.self)))
    }

    private static func add(_ terms: [String: Double], to model: Int, of user: Int64, on db: Connection) async throws {
        guard !terms.isEmpty else { return }
        let rows = terms.map { term, weight -> SQL in
            "(\(bind: user), \(bind: model), \(bind: term), \(bind: weight))"
        }
        try await db.exec(
            """
            INSERT INTO user_terms (user_id, model, term, weight) VALUES \(rows.joined(separator: ", "))
            ON CONFLICT (user_id, model, term) DO UPDATE SET weight = user_terms.weight + excluded.weight
            """)
    }

    // MARK: history

    enum Sort: String, Sendable, CaseIterable {
        case viewedAt, postedAt, views
        var column: SQL {
            switch self {
            case .viewedAt: "v.last_viewed_at"
            case .postedAt: "v.post_created_at"
            case .views: "v.views"
            }
        }
    }

    struct HistoryQuery: Sendable {
        var sort: Sort = .viewedAt
        var text: SearchText?
        var field: SearchText.Field = .all
        var page: PageRequest
    }

    func history(of user: Int64, _ query: HistoryQuery) async throws -> Page<HistoryItem> {
        let sql = Self.historySQL(of: user, query, dialect: db.dialect)
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try query.page.split(rows) { try Cursor(row: $0, time: "sort_key") }
        return Page(items: try pageRows.map(Self.item(row:)), nextCursor: next)
    }

    static func item(row: Row) throws -> HistoryItem {
        HistoryItem(
            post: try PostRecord(row: row).post,
            firstViewedAt: Timestamp(milliseconds: try row.decode(column: "first_viewed_at", as: Int64.self)),
            viewedAt: Timestamp(milliseconds: try row.decode(column: "last_viewed_at", as: Int64.self)),
            views: try row.decode(column: "views", as: Int.self), clicks: try row.decode(column: "clicks", as: Int.self)
        )
    }

    static let historyColumns: SQL = "v.first_viewed_at, v.last_viewed_at, v.views, v.clicks"

    static func historySQL(of user: Int64, _ query: HistoryQuery, dialect: Dialect) -> SQL {
        let key = query.sort.column
        var sql: SQL = """
            SELECT \(PostRecord.columns(viewer: user)), \(historyColumns), \(key) AS sort_key
            FROM post_views v JOIN posts p ON p.id = v.post_id JOIN users u ON u.id = p.author_id
            WHERE v.user_id = \(bind: user) AND \(Visibility.post("p", readableBy: user))
            """
        if let text = query.text { sql += " AND \(dialect.postMatches("p", text, in: query.field))" }
        if let cursor = query.page.cursor {
            sql += " AND (\(key), v.post_id) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        return sql + " ORDER BY \(key) DESC, v.post_id DESC LIMIT \(bind: query.page.fetchLimit)"
    }

    // MARK: recommendations

    /// How many of the most recently viewed posts are ranked.
    static let candidates = 500

    /// The person's viewed posts, most likely to be opened next first (docs/recommendations.md):
    /// their term model is read once, and each of their latest viewed posts scored against it.
    func recommended(for user: Int64, limit: Int, now: Int64 = Timestamp.now.milliseconds) async throws -> [HistoryItem]
    {
        let (model, rows) = try await db.read { db in
            let model = try await db.rows("SELECT model, term, weight FROM user_terms WHERE user_id = \(bind: user)")
            let rows = try await db.rows(
                """
                SELECT \(PostRecord.columns(viewer: user)), \(Self.historyColumns) FROM post_views v
                JOIN posts p ON p.id = v.post_id JOIN users u ON u.id = p.author_id
                WHERE v.user_id = \(bind: user) AND \(Visibility.post("p", readableBy: user))
                ORDER BY v.last_viewed_at DESC, v.post_id DESC LIMIT \(bind: Self.candidates)
                """)
            return (model, rows)
        }
        var views: [String: Double] = [:]
        var clicks: [String: Double] = [:]
        for row in model {
            let term = try row.decode(column: "term", as: String.self)
            let weight = try row.decode(column: "weight", as: Double.self)
            if try row.decode(column: "model", as: Int.self) == 0 {
                views[term] = weight
            } else {
                clicks[term] = weight
            }
        }
        let viewTotal = views.values.reduce(0, +)
        let clickTotal = clicks.values.reduce(0, +)
        let scored = try rows.map { row -> (Double, HistoryItem) in
            let item = try Self.item(row: row)
            let text = Self.text(title: item.post.title, body: item.post.body, spaces: item.post.spaces)
            let score = TermModel.score(
                post: TermModel.terms(of: text), clicks: clicks, clickTotal: clickTotal, views: views,
                viewTotal: viewTotal,
                lastViewedAgoMillis: Double(max(0, now - item.viewedAt.milliseconds)))
            return (score, item)
        }
        return scored.sorted { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1.viewedAt > $1.1.viewedAt) }.prefix(limit).map(\.1)
    }
}
