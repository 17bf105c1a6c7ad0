import Foundation
import PlazaAPI
import SQLKit

/// A processed upload as the rows that show it keep it (`posts.media`, `users.avatar`): one
/// line per item, `id contentType width height blurhash key`. Media never changes once
/// processed, so the copy cannot go stale, and showing a post needs no join.
struct MediaRecord: Sendable, Hashable {
    var id: Int64
    var contentType: String
    var width: Int
    var height: Int
    var blurhash: String?
    /// The media's access key (`media.access_key`), which its URLs carry; nil only in lines
    /// written before migration 7 added keys (which rewrote them).
    var key: String?

    var line: String { "\(id) \(contentType) \(width) \(height) \(blurhash ?? "-")" + (key.map { " " + $0 } ?? "") }

    init(id: Int64, contentType: String, width: Int, height: Int, blurhash: String?, key: String?) {
        self.id = id
        self.contentType = contentType
        self.width = width
        self.height = height
        self.blurhash = blurhash
        self.key = key
    }

    init?(line: Substring) {
        let fields = line.split(separator: " ")
        guard fields.count == 5 || fields.count == 6, let id = Int64(fields[0]), let width = Int(fields[2]),
            let height = Int(fields[3])
        else { return nil }
        self.init(
            id: id, contentType: String(fields[1]), width: width, height: height,
            blurhash: fields[4] == "-" ? nil : String(fields[4]),
            key: fields.count == 6 ? String(fields[5]) : nil)
    }

    init(row: Row) throws {
        self.init(
            id: try row.decode(column: "id", as: Int64.self),
            contentType: try row.decode(column: "content_type", as: String.self),
            width: try row.decode(column: "width", as: Int.self),
            height: try row.decode(column: "height", as: Int.self),
            blurhash: try row.decode(column: "blurhash", as: String?.self),
            key: try row.decode(column: "access_key", as: String?.self))
    }

    /// The columns `init(row:)` reads, for SELECT and RETURNING clauses.
    static let columns: SQLQueryString = "id, content_type, width, height, blurhash, access_key"

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
    var media: Media {
        let original = Self.url(id: id, variant: "original", key: key)
        return Media(
            id: String(id), contentType: contentType, width: width, height: height, blurhash: blurhash, url: original,
            variants: Media.Variants(
                thumbnail: Self.url(id: id, variant: "thumbnail", key: key),
                medium: Self.url(id: id, variant: "medium", key: key), original: original))
    }
}
