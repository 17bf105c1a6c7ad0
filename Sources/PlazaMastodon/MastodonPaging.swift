import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's paging: `max_id` (older than), `since_id` and `min_id` (newer than), `limit`, and
/// a `Link` header with the next (`max_id`) and previous (`min_id`) pages. Plaza's ids are
/// time-ordered, and its lists are keyset-paged on (time, id), so an id is turned into the
/// cursor of the row it names.
///
/// `min_id` is served like `since_id` (the newest page above the id): Plaza's feeds are read
/// newest first only, so a gap of more than `limit` newer items is not walked upwards.
struct MastodonPaging: Sendable {
    var limit: Int
    var maxID: Int64?
    var newerThan: Int64?

    init(_ params: MastodonParams, defaultLimit: Int = 20, maxLimit: Int = 40) throws {
        limit = try params.limit(default: defaultLimit, max: maxLimit)
        maxID = try params.id("max_id")
        newerThan = try params.id("min_id") ?? params.id("since_id")
    }

    /// The keyset page for a list whose time column is read by `time(of:)` (the row's own time,
    /// or the id's when the row is gone).
    func page(time: (Int64) async throws -> Int64?) async throws -> PageRequest {
        try await keysetPage(placing: { id in try await time(id).map { ($0, id) } })
    }

    /// The page before `max_id`, whose place in the list `key` finds (a boost's is its time and
    /// its post's id, the keys of the timeline's entry).
    func keysetPage(placing key: (Int64) async throws -> (time: Int64, id: Int64)?) async throws -> PageRequest {
        var page = PageRequest(limit: limit)
        if let maxID {
            let (time, id) = try await key(maxID) ?? (Self.time(ofID: maxID), maxID)
            page.cursor = Cursor(time: time, id: id)
        }
        return page
    }

    /// The time a Plaza id was made.
    static func time(ofID id: Int64) -> Int64 { (id >> 22) + IDGenerator.epoch }

    // MARK: keys of lists

    /// The low bits of a key: those of its row's id.
    static let keyIDMask: Int64 = (1 << 22) - 1

    /// The numeric key of a row of a list ordered by `(time, id)` (a follow, a block, a like, a
    /// save), shaped as a Plaza id is: the row's time above 22 bits, 22 bits of its id below
    /// (`keyBits`). Apps read it as Mastodon's row ids (digits in the `Link` header); it orders as its
    /// row does, and it still places a page after its row is gone (an unfollow between pages).
    static func key(time: Int64, id: Int64) -> Int64 {
        (Swift.max(time - IDGenerator.epoch, 0) << 22) | keyBits(of: id)
    }

    /// The 22 bits of an id a key keeps: its low bits (node and sequence, which restart every
    /// millisecond) mixed with its time's, so that rows of one millisecond rarely share them.
    static func keyBits(of id: Int64) -> Int64 { (id ^ (id >> 22)) & keyIDMask }

    /// The keyset cursor of the row a `key` names: at the key's time, the row whose id has the
    /// key's low bits (`ids` lists those at that time). When that row is gone, the page takes
    /// every row of that millisecond as not yet seen (`below`: the page older than the key; else
    /// newer): at worst rows of the same millisecond come again, none is skipped.
    static func cursor(forKey key: Int64, below: Bool, ids: (Int64) async throws -> [Int64]) async throws -> Cursor {
        let time = (key >> 22) + IDGenerator.epoch
        let matching = try await ids(time).filter { keyBits(of: $0) == key & keyIDMask }
        if let id = below ? matching.max() : matching.min() { return Cursor(time: time, id: id) }
        return Cursor(time: time, id: below ? Int64.max : Int64.min)
    }

    /// The `Link` header of a page of `ids` (newest first): next when `hasMore`, previous when not empty.
    static func link(_ request: Request, baseURL: String, ids: [String], hasMore: Bool) -> HTTPFields {
        guard let first = ids.first, let last = ids.last else { return [:] }
        let kept = (request.uri.queryParameters.map { ($0.key, $0.value) } as [(Substring, Substring)])
            .filter { !["max_id", "min_id", "since_id", "access_token"].contains(String($0.0)) }
            .map { "\(PublicLinks.queryValue(String($0.0)))=\(PublicLinks.queryValue(String($0.1)))" }
        func url(_ extra: String) -> String {
            "<\(baseURL)\(request.uri.path)?\((kept + [extra]).joined(separator: "&"))>"
        }
        var links: [String] = []
        if hasMore { links.append("\(url("max_id=\(last)")); rel=\"next\"") }
        links.append("\(url("min_id=\(first)")); rel=\"prev\"")
        return [HTTPField.Name("Link")!: links.joined(separator: ", ")]
    }
}
