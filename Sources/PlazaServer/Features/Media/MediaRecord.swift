import PlazaAPI

/// A processed upload as the rows that show it keep it (`posts.media`, `users.avatar`): one
/// line per item, `id contentType width height blurhash`. Media never changes once processed,
/// so the copy cannot go stale, and showing a post needs no join.
struct MediaRecord: Sendable, Hashable {
    var id: Int64
    var contentType: String
    var width: Int
    var height: Int
    var blurhash: String?

    var line: String { "\(id) \(contentType) \(width) \(height) \(blurhash ?? "-")" }

    init(id: Int64, contentType: String, width: Int, height: Int, blurhash: String?) {
        self.id = id
        self.contentType = contentType
        self.width = width
        self.height = height
        self.blurhash = blurhash
    }

    init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count == 5, let id = Int64(fields[0]), let width = Int(fields[2]), let height = Int(fields[3]) else { return nil }
        self.init(id: id, contentType: String(fields[1]), width: width, height: height, blurhash: fields[4] == "-" ? nil : String(fields[4]))
    }

    init(row: Row) throws {
        self.init(
            id: try row.decode(column: "id", as: Int64.self),
            contentType: try row.decode(column: "content_type", as: String.self),
            width: try row.decode(column: "width", as: Int.self),
            height: try row.decode(column: "height", as: Int.self),
            blurhash: try row.decode(column: "blurhash", as: String?.self))
    }

    static func list(_ text: String?) -> [MediaRecord] {
        guard let text else { return [] }
        return text.split(separator: "\n").compactMap(MediaRecord.init(line:))
    }

    static func text(_ records: [MediaRecord]) -> String? {
        records.isEmpty ? nil : records.map(\.line).joined(separator: "\n")
    }

    /// The API object. URLs are relative to the server (`/media/{id}/{variant}`): the same on
    /// every app server and behind any proxy; clients resolve them against the API's address.
    var media: Media {
        let base = "/media/\(id)/"
        return Media(
            id: String(id), contentType: contentType, width: width, height: height, blurhash: blurhash, url: base + "original",
            variants: Media.Variants(thumbnail: base + "thumbnail", medium: base + "medium", original: base + "original"))
    }
}
