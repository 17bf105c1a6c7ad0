import Foundation
import PlazaAPI

/// Full-text search over posts (FTS5 on SQLite, a weighted `tsvector` on PostgreSQL), ranked by
/// relevance with recency breaking ties, filtered like the feeds and by the viewer's blocks.
package struct SearchStore: Sendable {
    let db: Database
    let cache: SearchWindowCache
    let postStore: PostStore
    let people: PeopleStore

    package struct PostQuery: Sendable {
        /// nil with `near`: every post in the circle, nearest first.
        var text: SearchText?
        var field: SearchText.Field = .all
        var space: Int64?
        var kind: PostKind?
        var near: Near?
        /// Only posts by the people this person follows (`followed=true`).
        var followedBy: Int64?
        var page: PageRequest

        package init(
            text: SearchText? = nil, field: SearchText.Field = .all, space: Int64? = nil, kind: PostKind? = nil,
            near: Near? = nil, followedBy: Int64? = nil, page: PageRequest
        ) {
            self.text = text
            self.field = field
            self.space = space
            self.kind = kind
            self.near = near
            self.followedBy = followedBy
            self.page = page
        }
    }

    /// A circle on the globe; `box` bounds it in latitude and longitude for the index.
    package struct Near: Sendable {
        var latitude: Double
        var longitude: Double
        var radiusKm: Double

        var box: Box {
            let dLat = radiusKm / 110.574
            let minLat = max(-90, latitude - dLat)
            let maxLat = min(90, latitude + dLat)
            let widest = max(abs(minLat), abs(maxLat))
            // Near a pole, or across the antimeridian, every longitude may be in the circle.
            guard widest < 89 else { return Box(minLat, maxLat, -180, 180) }
            let dLon = radiusKm / (111.320 * cos(widest * .pi / 180))
            guard longitude - dLon >= -180, longitude + dLon <= 180 else { return Box(minLat, maxLat, -180, 180) }
            return Box(minLat, maxLat, longitude - dLon, longitude + dLon)
        }
    }

    /// A latitude and longitude range.
    struct Box: Sendable, Equatable {
        var minLatitude, maxLatitude, minLongitude, maxLongitude: Double

        init(_ minLatitude: Double, _ maxLatitude: Double, _ minLongitude: Double, _ maxLongitude: Double) {
            (self.minLatitude, self.maxLatitude) = (minLatitude, maxLatitude)
            (self.minLongitude, self.maxLongitude) = (minLongitude, maxLongitude)
        }
    }

    /// A page of posts found, with the viewer's keyword filters for public places applied (a page
    /// may come back shorter; its cursor is the unfiltered page's).
    package func posts(_ query: PostQuery, viewer: Int64?) async throws -> Page<Post> {
        let page = try await unfilteredPosts(query, viewer: viewer)
        let filters = try await db.read { db in try await KeywordFilterStore.matcher(for: viewer, in: .public, on: db) }
        return filters.apply(to: page)
    }

    private func unfilteredPosts(_ query: PostQuery, viewer: Int64?) async throws -> Page<Post> {
        guard let text = query.text else { return try await nearby(query, viewer: viewer) }
        var hits = try await window(text, query)[...]
        if let cursor = query.page.cursor, let score = cursor.score {
            hits = hits.drop { $0.score < score || ($0.score == score && $0.id >= cursor.id) }
        }
        // The page's posts as the viewer may see them, one more to know whether there is a next
        // page. Posts of people blocked either way (and any deleted since the ranking) are skipped.
        let wanted = query.page.fetchLimit
        var page: [(hit: SearchWindowCache.Hit, post: Post)] = []
        // Hidden posts are rare, so the first read asks for just the page; if some were hidden,
        // later reads take bigger steps (a window of 1,000 takes at most 5 reads).
        var step = wanted
        while page.count < wanted, !hits.isEmpty {
            let chunk = hits.prefix(step)
            hits = hits.dropFirst(chunk.count)
            step = max(step, 250)
            let found = try await postStore.posts(ids: chunk.map(\.id), viewer: viewer)
            page += chunk.compactMap { hit in found[hit.id].map { (hit: hit, post: $0) } }.prefix(wanted - page.count)
        }
        let (shown, next) = query.page.split(page) { Cursor(time: 0, id: $0.hit.id, score: $0.hit.score) }
        return Page(items: shown.map(\.post), nextCursor: next)
    }

    /// The ranked window of a word query, from the cache when it was ranked in the last second.
    func window(_ text: SearchText, _ query: PostQuery) async throws -> [SearchWindowCache.Hit] {
        let key = Self.windowKey(query)
        // Monotonic: a clock step cannot keep a window.
        let now = Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000)
        let cached = cache.get(key, now: now)
        if let hits = cached.hits { return hits }
        let sql = Self.windowSQL(text, query, dialect: db.dialect)
        let rows = try await db.read { db in try await db.rows(sql) }
        let hits = try rows.map {
            SearchWindowCache.Hit(
                id: try $0.decode(column: "id", as: Int64.self), score: try $0.decode(column: "score", as: Double.self))
        }
        cache.put(key, hits, generation: cached.generation, now: now)
        return hits
    }

    /// Everything that decides a window (the page, cursor and viewer do not).
    /// The cursor after a ranked row: its score, then its id.
    static func scoreCursor(_ row: Row) throws -> Cursor {
        Cursor(
            time: 0, id: try row.decode(column: "id", as: Int64.self),
            score: try row.decode(column: "score", as: Double.self))
    }

    static func windowKey(_ query: PostQuery) -> String {
        var key =
            (query.text?.fts5(in: query.field) ?? "") + "\u{1}" + (query.kind?.rawValue ?? "") + "\u{1}"
            + (query.space.map(String.init) ?? "")
        if let near = query.near {
            key += "\u{1}\(near.latitude.bitPattern),\(near.longitude.bitPattern),\(near.radiusKm.bitPattern)"
        }
        if let follower = query.followedBy { key += "\u{1}followed:\(follower)" }
        return key
    }

    /// Posts in the circle without words: every one of them, nearest first, a page at a time.
    private func nearby(_ query: PostQuery, viewer: Int64?) async throws -> Page<Post> {
        let sql = Self.nearbySQL(query, viewer: viewer, dialect: db.dialect)
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try query.page.split(rows) { try Self.scoreCursor($0) }
        let records = try pageRows.map(PostRecord.init(row:))
        return Page(items: records.map(\.post), nextCursor: next)
    }

    /// Word queries rank the newest this many matches (after filters): relevance among recent
    /// posts, at a cost that does not grow with how common a word is.
    static let rankedWindow = 1_000

    /// The filters of `query` other than its words, on posts `p`, and the distance from its
    /// `near` point (0 without one).
    private static func filters(_ query: PostQuery, dialect: Dialect) -> (
        filters: SQL, distance: SQL
    ) {
        var filters: SQL = ""
        var distance: SQL = "0"
        if let near = query.near {
            distance = "plaza_distance_km(p.latitude, p.longitude, \(bind: near.latitude), \(bind: near.longitude))"
            filters += " AND \(dialect.postInBox("p", near.box)) AND \(distance) <= \(bind: near.radiusKm)"
        }
        if let kind = query.kind { filters += " AND p.kind = \(bind: kind.rawValue)" }
        if let follower = query.followedBy {
            filters +=
                " AND EXISTS (SELECT 1 FROM follows ff WHERE ff.follower_id = \(bind: follower) AND ff.followee_id = p.author_id)"
        }
        if let space = query.space {
            filters +=
                " AND EXISTS (SELECT 1 FROM post_spaces fs WHERE fs.post_id = p.id AND fs.space_id = \(bind: space))"
        }
        return (filters, distance)
    }

    /// The newest `rankedWindow` posts matching `text` (after the query's filters, before
    /// blocks), with their scores, best first. Ties go to the newer post (ids are time-ordered).
    static func windowSQL(_ text: SearchText, _ query: PostQuery, dialect: Dialect) -> SQL {
        let (filters, _) = Self.filters(query, dialect: dialect)
        let readsPosts = query.kind != nil || query.space != nil || query.near != nil || query.followedBy != nil
        let hits = dialect.rankedPosts(
            text, in: query.field, filters: filters, filtersReadPosts: readsPosts, window: rankedWindow)
        return "SELECT h.id, h.score FROM (\(hits)) AS h ORDER BY h.score, h.id DESC"
    }

    /// A page of the posts within `near` of a point, nearest first (ties: newer first).
    static func nearbySQL(_ query: PostQuery, viewer: Int64?, dialect: Dialect) -> SQL {
        var (filters, distance) = Self.filters(query, dialect: dialect)
        filters += " AND \(Visibility.post("p", readableBy: viewer))"
        var page: SQL =
            "SELECT h.id, h.score FROM (SELECT p.id, \(distance) AS score FROM posts p WHERE TRUE\(filters)) AS h"
        if let cursor = query.page.cursor, let score = cursor.score {
            page += " WHERE (h.score > \(bind: score) OR (h.score = \(bind: score) AND h.id < \(bind: cursor.id)))"
        }
        page += " ORDER BY h.score, h.id DESC LIMIT \(bind: query.page.fetchLimit)"
        return """
            SELECT \(PostRecord.columns(viewer: viewer)), k.score FROM (\(page)) AS k JOIN posts p ON p.id = k.id
            JOIN users u ON u.id = p.author_id ORDER BY k.score, p.id DESC
            """
    }

    // MARK: accounts

    /// Accounts whose username or display name has words starting with each word of `text`;
    /// best match first (a username hit outranks a display-name hit).
    package func users(_ text: SearchText, page: PageRequest, viewer: Int64?) async throws -> Page<User> {
        let sql = Self.usersSQL(text.asPrefixes, page: page, viewer: viewer, dialect: db.dialect)
        let rows = try await db.read { db in try await db.rows(sql) }
        let (pageRows, next) = try page.split(rows) { try Self.scoreCursor($0) }
        return Page(
            items: try await people.users(pageRows.map(UserRecord.init(row:)), viewer: viewer), nextCursor: next)
    }

    static func usersSQL(_ text: SearchText, page: PageRequest, viewer: Int64?, dialect: Dialect) -> SQL {
        let hidden: SQL = " AND \(Visibility.profile("u", seenBy: viewer))"
        var sql: SQL =
            "SELECT * FROM (\(dialect.rankedUsers(text, columns: UserRecord.columns, filters: hidden))) AS r"
        if let cursor = page.cursor, let score = cursor.score {
            sql += " WHERE (r.score > \(bind: score) OR (r.score = \(bind: score) AND r.id < \(bind: cursor.id)))"
        }
        return sql + " ORDER BY r.score, r.id DESC LIMIT \(bind: page.fetchLimit)"
    }

    // MARK: saved items

    /// The caller's saved items whose link title, description, URL, note or saved post's text
    /// contain every word of `text`, newest first. A person's saves are few enough to filter
    /// while walking them in index order. The text of a saved post the owner may no longer read
    /// (a block either way) is not searched.
    func saved(_ text: SearchText, owner: Int64, page: PageRequest, collections: CollectionStore) async throws -> Page<
        CollectionItem
    > {
        let sql = Self.savedSQL(text, owner: owner, page: page)
        let rows = try await db.read { db in try await db.rows(sql) }
        return try await collections.page(of: rows, page: page, viewer: owner, posts: postStore)
    }

    static func savedSQL(_ text: SearchText, owner: Int64, page: PageRequest) -> SQL {
        let haystack: SQL = """
            plaza_search_text(coalesce(i.link_title, '') || ' ' || coalesce(i.link_description, '') || ' ' || coalesce(i.url, '') \
            || ' ' || i.note || ' ' || coalesce(p.title, '') || ' ' || coalesce(p.body, ''))
            """
        var sql: SQL = """
            SELECT \(CollectionStore.itemColumns) FROM collection_items i LEFT JOIN posts p ON p.id = i.post_id AND \(Visibility.post("p", readableBy: owner))
            WHERE i.owner_id = \(bind: owner)
            """
        for phrase in text.phrases {
            sql += " AND \(haystack) LIKE \(bind: "%" + SpaceStore.likeEscaped(phrase) + "%") ESCAPE '\\'"
        }
        if let cursor = page.cursor { sql += " AND (i.saved_at, i.id) < (\(bind: cursor.time), \(bind: cursor.id))" }
        return sql + " ORDER BY i.saved_at DESC, i.id DESC LIMIT \(bind: page.fetchLimit)"
    }
}
