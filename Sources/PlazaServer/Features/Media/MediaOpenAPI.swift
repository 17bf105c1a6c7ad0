import OpenAPIKit

extension OpenAPIDocument {
    /// Uploads and the media files.
    static var mediaOperations: [(String, Operation)] { uploadOperations + mediaFileOperations }

    private static var uploadOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/media",
                Operation(
                    method: .post,
                    summary: """
                        Upload a photo (JPEG, PNG, WebP, GIF, HEIC: re-encoded, metadata stripped, variants made; 201) \
                        or a video (MP4, MOV, WebM: probed, its poster made, then transcoded in the background to \
                        H.264/AAC MP4 at most 720p, metadata stripped; 202 with state processing, see GET \
                        /me/media/{id}). 422 no_video, unreadable_video, video_too_large (past 4K), video_too_long; \
                        413 past the size cap or storage_quota_exceeded past the storage quota; 429 daily_upload_limit \
                        past the daily cap
                        """,
                    auth: .required, status: 201, alsoStatus: [202], response: ref("Media"), upload: true)
            ),
            (
                "\(v1)/me/media",
                Operation(
                    method: .get, summary: "My uploads, newest first", auth: .required, query: Params.page,
                    response: pageOf("Media"))
            ),
            (
                "\(v1)/me/media/{id}",
                Operation(
                    method: .get,
                    summary:
                        "One of my uploads: a video's state (processing, ready, failed) and progress while processing",
                    auth: .required, response: ref("Media"))
            ),
            (
                "\(v1)/me/media/{id}",
                Operation(
                    method: .patch,
                    summary: """
                        Sets (or with null or blank text, removes) the alt text of one of my uploads, up to \
                        \(MediaActions.maxAltTextLength) characters, on the post that shows it too; an upload's form \
                        may carry it as its description field
                        """,
                    auth: .required, body: "UpdateMediaRequest", response: ref("Media"))
            ),
        ]
    }

    private static var mediaFileOperations: [(String, Operation)] {
        [
            (
                "/media/{id}/{variant}",
                Operation(
                    method: .get,
                    summary: """
                        The bytes of a media variant (thumbnail, medium, original; a video's original is its MP4, \
                        thumbnail and medium its poster), at the URL Media gives (with its key k). An upload nothing \
                        uses yet is its owner's alone (Cache-Control: private); media in use are cached for a year; \
                        a post's media are 404 to whoever may not see the post. One span of bytes=… in Range gets \
                        206 (416 past the end); anything else in Range gets the whole file. A capability URL (r, e \
                        and s, as Mastodon's API hands out for media that are not public) fetches as its reader \
                        without credentials, until it expires or the reader may no longer see the post \
                        (Cache-Control: private, max-age of the time it has left); expired or altered, it is 404
                        """,
                    auth: .optional, query: [Params.mediaKey, Params.range] + capability, image: true)
            ),
            (
                "/media/{id}/{variant}",
                Operation(
                    method: .head, summary: "The headers of a media variant", auth: .optional,
                    query: [Params.mediaKey, Params.range] + capability, image: true)
            ),
        ]
    }

    /// The capability a media URL may carry (`MediaCapabilities`); all three or none.
    private static var capability: [OpenAPI.Parameter] {
        [
            .query(
                name: "r", required: false, schema: .string(pattern: "^[1-9][0-9]{0,18}$"),
                description: "The reader a capability URL was signed for"),
            .query(
                name: "e", required: false, schema: .string(pattern: "^[1-9][0-9]{0,11}$"),
                description: "When the capability expires, in unix seconds"),
            .query(
                name: "s", required: false, schema: .string(pattern: "^[A-Za-z0-9_-]{43}$"),
                description: "The server's signature (HMAC-SHA256, base64url) of the media, variant, reader and expiry"),
        ]
    }
}
