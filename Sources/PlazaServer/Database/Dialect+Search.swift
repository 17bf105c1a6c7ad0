/// Full-text and geographic search, per database: FTS5 tables (`posts_search`, `users_search`)
/// and an R*Tree (`posts_geo`) on SQLite; weighted `tsvector` columns (`search`) and a
/// latitude/longitude index on PostgreSQL. Scores are lower for better matches on both: FTS5's
/// bm25 is negative and `ts_rank` is negated to match.
extension Dialect {
    /// A filter: post `alias` matches `text` in `field`.
    func postMatches(_ alias: String, _ text: SearchText, in field: SearchText.Field) -> SQL {
        switch kind {
        case .sqlite:
            "\(unsafeRaw: alias).id IN (SELECT rowid FROM posts_search WHERE posts_search MATCH \(bind: text.fts5(in: field)))"
        case .postgres:
            """
            \(unsafeRaw: alias).search @@ to_tsquery('plaza_search', \(bind: text.tsquery(in: field)))\
            \(postgresFieldCheck(alias, text, field))
            """
        }
    }

    /// On PostgreSQL spaces and place share weight D: a search in one of them also checks that
    /// field's own text, on the rows the index found (empty for the other fields).
    private func postgresFieldCheck(_ alias: String, _ text: SearchText, _ field: SearchText.Field) -> SQL {
        let source: SQL
        switch field {
        case .place: source = "\(unsafeRaw: alias).location_name"
        case .space:
            source = """
                (SELECT string_agg(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id \
                WHERE ps.post_id = \(unsafeRaw: alias).id)
                """
        case .all, .title, .body, .author: return ""
        }
        return """
             AND to_tsvector('plaza_search', plaza_search_text(coalesce(\(source), ''))) @@ to_tsquery('plaza_search', \(bind: text.tsquery(in: .all)))
            """
    }

    /// A filter: post `alias` lies in `box` (through the index; the exact distance is checked apart).
    func postInBox(_ alias: String, _ box: SearchStore.Box) -> SQL {
        switch kind {
        case .sqlite:
            """
            \(unsafeRaw: alias).id IN (SELECT id FROM posts_geo WHERE min_lat >= \(bind: box.minLatitude) \
            AND max_lat <= \(bind: box.maxLatitude) AND min_lon >= \(bind: box.minLongitude) \
            AND max_lon <= \(bind: box.maxLongitude))
            """
        case .postgres:
            """
            \(unsafeRaw: alias).latitude BETWEEN \(bind: box.minLatitude) AND \(bind: box.maxLatitude) \
            AND \(unsafeRaw: alias).longitude BETWEEN \(bind: box.minLongitude) AND \(bind: box.maxLongitude)
            """
        }
    }

    /// `id, score` of the newest `window` posts `p` matching `text` in `field` and `filters`
    /// (which start with " AND "), unordered. `filters` names columns of posts `p` only when
    /// `filtersReadPosts`.
    func rankedPosts(
        _ text: SearchText, in field: SearchText.Field, filters: SQL, filtersReadPosts: Bool, window: Int
    ) -> SQL {
        switch kind {
        case .sqlite:
            // FTS5 walks the matches newest first and stops after the window; posts are read
            // only for filters. Column weights: title, body, author, spaces, place.
            let join: SQL = filtersReadPosts ? " JOIN posts p ON p.id = posts_search.rowid" : ""
            return """
                SELECT posts_search.rowid AS id, bm25(posts_search, 8.0, 1.0, 4.0, 2.0, 2.0) AS score FROM posts_search\(join)
                WHERE posts_search MATCH \(bind: text.fts5(in: field))\(filters)
                ORDER BY posts_search.rowid DESC LIMIT \(unsafeRaw: String(window))
                """
        case .postgres:
            // The window's edge first, so that only its posts are ranked.
            let tsquery: SQL = "to_tsquery('plaza_search', \(bind: text.tsquery(in: field)))"
            let check = postgresFieldCheck("p", text, field)
            return """
                SELECT p.id, (-ts_rank(p.search, \(tsquery)))::float8 AS score FROM posts p
                WHERE p.search @@ \(tsquery)\(check)\(filters) AND p.id >= coalesce((
                    SELECT p.id FROM posts p WHERE p.search @@ \(tsquery)\(check)\(filters) ORDER BY p.id DESC \
                OFFSET \(unsafeRaw: String(window - 1)) LIMIT 1), 0)
                """
        }
    }

    /// `columns, score` of every account `u` whose username or display name matches `text`
    /// and `filters` (which start with " AND "), unordered. A username hit outranks a
    /// display-name hit.
    func rankedUsers(_ text: SearchText, columns: SQL, filters: SQL) -> SQL {
        switch kind {
        case .sqlite:
            """
            SELECT \(columns), bm25(users_search, 4.0, 1.0) AS score FROM users_search
            JOIN users u ON u.id = users_search.rowid WHERE users_search MATCH \(bind: text.fts5(in: .all))\(filters)
            """
        case .postgres:
            """
            SELECT \(columns), (-ts_rank(u.search, q.query))::float8 AS score FROM users u,
            (SELECT to_tsquery('plaza_search', \(bind: text.tsquery(in: .all))) AS query) q WHERE u.search @@ q.query\(filters)
            """
        }
    }
}
