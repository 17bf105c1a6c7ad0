import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// Serves the OpenAPI 3.1 document of the API.
struct OpenAPIController: FeatureRoutes {
    /// The parts of the doors in targets of their own (Mastodon's).
    let parts: [OpenAPIDocument.Part]

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        let body = Body(parts: parts)
        routes.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: try body.bytes()))
        }
        return routes
    }

    /// Built and encoded at the first request, once: at start-up it would cost every server about
    /// 10 MB of resident memory (measured on a debug build: OpenAPIKit's code and the encoder's
    /// allocations) for a document most are rarely asked for. The document is constant and
    /// `OpenAPITests` encodes it, so this does not fail in a build whose tests pass; if it did, the
    /// request would get a 500 and the error would be logged.
    private final class Body: Sendable {
        let parts: [OpenAPIDocument.Part]
        private let encoded = NIOLockedValueBox<Result<ByteBuffer, any Error>?>(nil)

        init(parts: [OpenAPIDocument.Part]) { self.parts = parts }

        func bytes() throws -> ByteBuffer {
            try encoded.withLockedValue { encoded in
                if let encoded { return encoded }
                let made = Result { ByteBuffer(bytes: try OpenAPIDocument.json(with: parts)) }
                encoded = made
                return made
            }
            .get()
        }
    }
}
