import Hummingbird
import NIOCore

/// Serves the OpenAPI 3.1 document of the API.
struct OpenAPIController {
    /// Built and encoded at the first request, once: at start-up it would cost every server about
    /// 10 MB of resident memory (measured on a debug build: OpenAPIKit's code and the encoder's
    /// allocations) for a document most are rarely asked for. The document is constant and
    /// `OpenAPITests` encodes it, so this does not fail in a build whose tests pass; if it did, the
    /// request would get a 500 and the error would be logged.
    private static let body = Result { ByteBuffer(bytes: try OpenAPIDocument.json()) }

    func register(to api: RouterGroup<PlazaContext>) {
        api.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: try Self.body.get()))
        }
    }
}
