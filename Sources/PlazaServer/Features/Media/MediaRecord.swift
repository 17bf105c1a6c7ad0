import Foundation
import PlazaAPI

/// A processed upload as the rows that show it keep it (`posts.media`, `users.avatar`): one
/// line per item, `id contentType width height blurhash key`, and for a video `duration state`
/// after those, then the alt text, percent-encoded, when there is one (a photo's line then says
/// `- ready` before it). A line is rewritten when a video's processing ends (`VideoStore.finish`)
/// and when its uploader changes the alt text (`MediaStore.describe`). So the copy cannot go
/// stale, and showing a post needs no join.
package struct MediaRecord: Sendable, Hashable {
    var id: Int64
    var contentType: String
    var width: Int
    var height: Int
    var blurhash: String?
    /// The media's access key (`media.access_key`), which its URLs carry; nil only in lines
    /// written before migration 7 added keys (which rewrote them).
    var key: String?
    var state: MediaState = .ready
    /// A video's length.
    var durationMillis: Int64?
    /// Percent done while processing; read from the row, never kept in a line.
    var progress: Int?
    /// The alt text (`Media.description`).
    var description: String?

    var isVideo: Bool { contentType.hasPrefix("video/") }

    var line: String {
        var line = "\(id) \(contentType) \(width) \(height) \(blurhash ?? "-")" + (key.map { " " + $0 } ?? "")
        let encoded = description?.addingPercentEncoding(withAllowedCharacters: Self.unreserved)
        if key != nil, isVideo || state != .ready || encoded != nil {
            line += " \(durationMillis.map(String.init) ?? "-") \(state.rawValue)"
        }
        if key != nil, let encoded { line += " " + encoded }
        return line
    }

    /// What a line's alt text keeps as it is: no space or line break can split the line.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    init(
        id: Int64, contentType: String, width: Int, height: Int, blurhash: String?, key: String?,
        state: MediaState = .ready, durationMillis: Int64? = nil, progress: Int? = nil, description: String? = nil
    ) {
        self.id = id
        self.contentType = contentType
        self.width = width
        self.height = height
        self.blurhash = blurhash
        self.key = key
        self.state = state
        self.durationMillis = durationMillis
        self.progress = progress
        self.description = description
    }

    init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard [5, 6, 8, 9].contains(fields.count), let id = Int64(fields[0]), let width = Int(fields[2]),
            let height = Int(fields[3])
        else { return nil }
        var state = MediaState.ready
        var duration: Int64?
        if fields.count >= 8 {
            guard let parsed = MediaState(rawValue: String(fields[7])) else { return nil }
            state = parsed
            duration = Int64(fields[6])
        }
        self.init(
            id: id, contentType: String(fields[1]), width: width, height: height,
            blurhash: fields[4] == "-" ? nil : String(fields[4]),
            key: fields.count >= 6 ? String(fields[5]) : nil, state: state, durationMillis: duration,
            description: fields.count == 9 ? fields[8].removingPercentEncoding : nil)
    }

    init(row: Row) throws {
        self.init(
            id: try row.decode(column: "id", as: Int64.self),
            contentType: try row.decode(column: "content_type", as: String.self),
            width: try row.decode(column: "width", as: Int.self),
            height: try row.decode(column: "height", as: Int.self),
            blurhash: try row.decode(column: "blurhash", as: String?.self),
            key: try row.decode(column: "access_key", as: String?.self),
            state: MediaState(rawValue: try row.decode(column: "state", as: String.self)) ?? .failed,
            durationMillis: try row.decode(column: "duration_ms", as: Int64?.self),
            progress: try row.decode(column: "progress", as: Int?.self),
            description: try row.decode(column: "description", as: String?.self))
    }

    /// The columns `init(row:)` reads, for SELECT and RETURNING clauses.
    static let columns: SQL =
        "id, content_type, width, height, blurhash, access_key, state, duration_ms, progress, description"

    /// A new access key: 128 random bits, base64url without padding (22 characters).
    static func newKey() -> String { ByteText.base64url(ByteText.randomBytes(16)) }

    /// Whether `text` has the shape of a key (old keys are hex, new ones base64url), so that
    /// nothing else is looked up.
    static func isKeyShaped(_ text: String) -> Bool {
        (16...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// The URL of one variant: `/media/{id}/{variant}?k={key}`.
    static func url(id: Int64, variant: String, key: String?) -> String {
        "/media/\(id)/\(variant)" + (key.map { "?k=" + $0 } ?? "")
    }

    static func list(_ text: String?) -> [MediaRecord] {
        guard let text else { return [] }
        return text.split(separator: "\n").compactMap(MediaRecord.init(line:))
    }

    static func text(_ records: [MediaRecord]) -> String? {
        records.isEmpty ? nil : records.map(\.line).joined(separator: "\n")
    }

    /// The API object. URLs are relative to the server (`/media/{id}/{variant}?k={key}`): the
    /// same on every app server and behind any proxy; clients resolve them against the API's
    /// address. Without the key a URL is a 404, so media cannot be found by walking ids.
    package var media: Media {
        let original = Self.url(id: id, variant: "original", key: key)
        return Media(
            id: String(id), contentType: contentType, width: width, height: height, blurhash: blurhash, url: original,
            variants: Media.Variants(
                thumbnail: Self.url(id: id, variant: "thumbnail", key: key),
                medium: Self.url(id: id, variant: "medium", key: key), original: original),
            state: state, duration: durationMillis.map { Double($0) / 1000 },
            progress: state == .processing ? progress : nil, description: description)
    }
}
