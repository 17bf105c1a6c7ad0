import Foundation
import Hummingbird
import Logging
import NIOCore
import PlazaAPI

extension Media: ResponseEncodable {}

/// Uploads (`/api/v1/me/media`) and the files themselves (`/media/{id}/{variant}`).
struct MediaController {
    let media: MediaStore
    let storage: any MediaStorage
    let ingest: MediaIngest
    let ids: IDGenerator
    /// Where uploads wait while they are processed.
    let uploadDirectory: String
    let maxUploadBytes: Int

    func register(api: RouterGroup<PlazaContext>, router: Router<PlazaContext>) {
        api.post("me/media", use: upload)
        api.get("me/media", use: list)
        router.get("media/{id}/{variant}", use: serve)
        router.head("media/{id}/{variant}", use: serve)
    }

    @Sendable func upload(_ request: Request, context: PlazaContext) async throws -> EditedResponse<Media> {
        let me = try context.requireUser()
        let id = ids.next()
        let path = "\(uploadDirectory)/upload-\(id)"
        defer { unlink(path) }
        try await MultipartUpload.receive(request, into: path, limits: .init(maxFileBytes: maxUploadBytes))
        let record = try await ingest.ingest(path: path, id: id, owner: me.userID, linkPreview: false, logger: context.logger)
        return EditedResponse(status: .created, response: record.media)
    }

    @Sendable func list(_ request: Request, context: PlazaContext) async throws -> Page<Media> {
        let me = try context.requireUser()
        return try await media.list(owner: me.userID, page: request.pageRequest())
    }

    @Sendable func serve(_ request: Request, context: PlazaContext) async throws -> Response {
        let id = try context.parameters.id("id", "Media")
        guard let variant = context.parameters.get("variant").flatMap(ImagePipeline.Variant.init(rawValue:)),
            let types = try await media.contentTypes(id: id)
        else { throw PlazaError.notFound("Media") }
        let etag = "\"\(id)-\(variant.rawValue)\""
        var headers: HTTPFields = [
            .eTag: etag,
            .cacheControl: "public, max-age=31536000, immutable",
            .contentType: variant == .original ? types.original : types.variants,
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "sandbox",
        ]
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" }) {
            return Response(status: .notModified, headers: headers)
        }
        guard let bytes = try await storage.get("\(id)/\(variant.rawValue)") else { throw PlazaError.notFound("Media") }
        headers[.contentLength] = String(bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: request.method == .head ? .init() : .init(byteBuffer: bytes))
    }
}
