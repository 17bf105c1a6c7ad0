import Foundation

/// An opaque keyset cursor: the sort key of the last item of a page, `(time, id)`, led by
/// a relevance `score` in ranked search results (kept bit-exact).
package struct Cursor: Equatable {
    var time: Int64
    var id: Int64
    var score: Double?

    var encoded: String {
        let text = score.map { "\(time):\(id):\($0.bitPattern)" } ?? "\(time):\(id)"
        return ByteText.base64url(text.utf8)
    }

    package init(time: Int64, id: Int64, score: Double? = nil) {
        self.time = time
        self.id = id
        self.score = score
    }

    /// The cursor after `row`: its `time` column and its `id`.
    init(row: Row, time column: String) throws {
        self.init(
            time: try row.decode(column: column, as: Int64.self), id: try row.decode(column: "id", as: Int64.self))
    }

    package init?(encoded: String) {
        guard encoded.count <= 128 else { return nil }
        guard let bytes = ByteText.bytes(base64url: encoded), let text = String(validating: bytes, as: UTF8.self) else {
            return nil
        }
        let parts = text.split(separator: ":")
        guard parts.count == 2 || parts.count == 3, let time = Int64(parts[0]), let id = Int64(parts[1]) else {
            return nil
        }
        self.time = time
        self.id = id
        if parts.count == 3 {
            guard let bits = UInt64(parts[2]), Double(bitPattern: bits).isFinite else { return nil }
            score = Double(bitPattern: bits)
        }
    }
}

/// `?limit=&cursor=` of a list request.
package struct PageRequest {
    static let defaultLimit = 20
    static let maxLimit = 100
    package var limit: Int
    package var cursor: Cursor?

    package init(limit: Int, cursor: Cursor? = nil) {
        self.limit = limit
        self.cursor = cursor
    }

    /// The LIMIT of a page's query: one row more than the page, to learn whether another follows.
    var fetchLimit: Int { limit + 1 }

    /// Rows fetched with `fetchLimit`, split into the page's rows and the encoded cursor after
    /// the last of them (nil on the last page). `cursor` reads the page's own sort key from a row.
    func split<Row>(_ rows: [Row], cursor: (Row) throws -> Cursor) rethrows -> (rows: ArraySlice<Row>, next: String?) {
        let page = rows.prefix(limit)
        guard rows.count > limit, let last = page.last else { return (page, nil) }
        return (page, try cursor(last).encoded)
    }
}
