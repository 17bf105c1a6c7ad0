import Hummingbird
import NIOCore

/// Serves the OpenAPI 3.1 document of the API.
struct OpenAPIController {
    /// Encoded at the first request: sorting its keys loads Foundation's ICU collation data,
    /// 4 MB of resident memory a server that is never asked for the document need not map.
    private static let body = ByteBuffer(bytes: OpenAPIDocument.json)

    func register(to api: RouterGroup<PlazaContext>) {
        api.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: Self.body))
        }
    }
}
