import Crypto
import HTTPTypes
import Hummingbird
import NIOCore

/// `ETag` on the API's JSON answers to GET — single resources and list pages alike — and `304
/// Not Modified` without a body when `If-None-Match` names it. The tag is 32 hex digits of
/// SHA-256 over the answer's bytes, so it changes with anything the reader would see (a count,
/// their own like, an edit) and with nothing else. The server still reads the data; what a
/// match saves is the answer's bytes on the wire and the app's decoding and redrawing.
struct ConditionalGetMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    /// Larger answers go without a tag (no page of the API comes near).
    static let maxTaggedBytes = 1 << 20

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        var response = try await next(request, context)
        guard response.status == .ok, response.headers[.eTag] == nil,
            response.headers[.contentType]?.hasPrefix("application/json") == true,
            let bytes = try await response.collectedBody(upTo: Self.maxTaggedBytes)
        else { return response }
        let tag = ETag.strong(bytes.readableBytesView)
        response.headers[.eTag] = tag
        guard ETag.matches(request.headers[.ifNoneMatch], tag) else { return response }
        var headers = response.headers
        headers[.contentLength] = nil
        headers[.contentType] = nil
        return Response(status: .notModified, headers: headers)
    }
}

/// Entity tags (RFC 9110 §8.8.3), the one implementation for the API, the feeds and media files.
enum ETag {
    /// A strong tag of `bytes`: 32 hex digits of their SHA-256, quoted.
    static func strong(_ bytes: some Sequence<UInt8>) -> String {
        "\"" + ByteText.hex(SHA256.hash(data: Array(bytes)).prefix(16)) + "\""
    }

    /// Whether an `If-None-Match` value names `tag` or is `*` (weak comparison, RFC 9110 §13.1.2).
    static func matches(_ ifNoneMatch: String?, _ tag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        let bare = tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var candidate = candidate.trimmingCharacters(in: .whitespaces)
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == bare || candidate == "*"
        }
    }
}
