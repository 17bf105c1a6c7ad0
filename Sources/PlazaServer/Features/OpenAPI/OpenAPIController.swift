import Hummingbird
import NIOCore

/// Serves the OpenAPI 3.1 document of the API.
struct OpenAPIController {
    func register(to api: RouterGroup<PlazaContext>) {
        let body = ByteBuffer(bytes: OpenAPIDocument.json)
        api.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
        }
    }
}
