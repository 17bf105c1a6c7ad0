import Foundation
import Hummingbird
import Logging
import NIOCore
import PlazaAPI

/// Uploads (`/api/v1/me/media`) and the files themselves (`/media/{id}/{variant}?k={key}`).
struct MediaController: FeatureRoutes {
    let media: MediaStore
    let storage: any MediaStorage
    let actions: MediaActions
    /// Checks the capability URLs of media that are not public.
    let capabilities: MediaCapabilities
    /// The largest photo and video (nil: this server takes no videos) an upload may be.
    let limits: MultipartUpload.Limits

    /// `files` is the `/media` group, with the rate limiter and authentication in front (an
    /// upload nothing uses yet is served to its owner only).
    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.post("me/media", use: upload)
        signedIn.get("me/media", use: list)
        signedIn.get("me/media/{id}", use: show)
        signedIn.patch("me/media/{id}", use: describe)
        return routes
    }

    /// The files themselves, at `/media/{id}/{variant}`.
    var files: RouteCollection<PlazaContext> {
        let files = RouteCollection(context: PlazaContext.self)
        files.get("{id}/{variant}", use: serve)
        files.head("{id}/{variant}", use: serve)
        return files
    }

    /// An upload (`MediaActions.upload`): a photo is ready at once (201); a video is processed
    /// in the background (202, `state: processing`; `GET /me/media/{id}` reports its progress).
    @Sendable func upload(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Media> {
        let record = try await actions.upload(by: context.user.userID, logger: context.logger) { path in
            try await MultipartUpload.receive(request, into: path, limits: limits)
        }
        return EditedResponse(status: record.state == .processing ? .accepted : .created, response: record.media)
    }

    /// One of my uploads, with a video's processing state and progress.
    @Sendable func show(_ request: Request, context: SignedInContext) async throws -> Media {
        try await media.upload(id: try context.parameters.id("id", "Media"), owner: context.user.userID)
    }

    /// Sets or removes the alt text of one of my uploads, on the post that shows it too.
    @Sendable func describe(_ request: Request, context: SignedInContext) async throws -> Media {
        let body = try await request.decode(as: UpdateMediaRequest.self, context: context)
        return try await actions.describe(
            try context.parameters.id("id", "Media"), by: context.user.userID, as: body.description
        )
        .media
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<Media> {
        let me = context.user
        return try await media.list(owner: me.userID, page: request.pageRequest())
    }

    /// A wrong or missing key is the same 404 as an unknown id, as is media the viewer may not
    /// see. Media in use on a public post (or as an avatar, a space image, a preview image) are
    /// immutable and public to whoever has the URL, so caches may keep them for a year; an
    /// upload nothing uses yet is its owner's, and a post for followers or members is theirs,
    /// so only their browser may keep it, and it revalidates (the check runs again, a 304 when
    /// allowed), so that narrowing the post's audience takes effect at the next view.
    ///
    /// A capability URL (`MediaCapabilities`: `&r=…&e=…&s=…`) makes the request act as its
    /// reader, whoever sends it; expired, tampered or for other media, it is the same 404. Its
    /// answer may be kept by the reader's cache alone, no longer than the URL stays valid.
    @Sendable func serve(_ request: Request, context: PlazaContext) async throws -> Response {
        let id = try context.parameters.id("id", "Media")
        let query = request.uri.queryParameters
        guard let variant = context.parameters.get("variant").flatMap(ImagePipeline.Variant.init(rawValue:)),
            let key = query.get("k"), MediaRecord.isKeyShaped(key),
            let access = try await self.access(id: id, variant: variant, query: query, context: context),
            let served = try await media.served(id: id, key: key, viewer: access.viewer)
        else { throw PlazaError.notFound("Media") }
        let etag = "\"\(id)-\(variant.rawValue)\""
        let cacheControl =
            access.remaining.map { "private, max-age=\($0)" }
            ?? (served.isPublic ? "public, max-age=31536000, immutable" : "private, no-cache")
        var headers: HTTPFields = [
            .eTag: etag,
            .cacheControl: cacheControl,
            .contentType: variant == .original ? served.originalType : served.variantType,
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "sandbox",
        ]
        if ETag.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        let file = "\(id)/\(variant.rawValue)"
        headers[.acceptRanges] = "bytes"
        // One span (a player starting or seeking) when one span of bytes is asked for; ranges
        // are for GET alone (RFC 9110, 14.2): HEAD describes the whole file.
        let range = request.method == .get ? request.headers[.range].flatMap(ByteRange.parse) : nil
        switch try await storage.open(file, range: range, context: context) {
        case .missing:
            throw PlazaError.notFound("Media")
        case .unsatisfiable(let total):
            headers[.contentRange] = "bytes */\(total)"
            headers[.cacheControl] = "no-store"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .body(let body, let span, let total):
            headers[.contentLength] = String(total == 0 ? 0 : span.count)
            if range != nil { headers[.contentRange] = "bytes \(span.lowerBound)-\(span.upperBound)/\(total)" }
            return Response(
                status: range == nil ? .ok : .partialContent, headers: headers,
                body: request.method == .head ? ResponseBody() : body)
        }
    }

    /// Who a media request reads as: the capability's reader (with the seconds it has left) when
    /// the query carries a valid one, the signed-in viewer when it carries none; nil (a 404) when
    /// it carries one that is not valid.
    func access(id: Int64, variant: ImagePipeline.Variant, query: Parameters, context: PlazaContext) async throws -> (
        viewer: Int64?, remaining: Int64?
    )? {
        switch MediaCapability.parse(reader: query.get("r"), expires: query.get("e"), mac: query.get("s")) {
        case .none:
            return (context.viewerID, nil)
        case .malformed:
            return nil
        case .capability(let capability):
            let now = Int64(Date().timeIntervalSince1970)
            guard
                let valid = try await capabilities.reader(
                    of: capability, id: id, variant: variant.rawValue, now: now)
            else { return nil }
            return (valid.reader, valid.remaining)
        }
    }
}
