import Hummingbird
import PlazaServer

/// Makes the media URLs in a signed-in request's answer the reader's capability URLs
/// (`MastodonMapper.mediaSigner`): Mastodon apps load images without credentials, so the media of
/// followers-only and space posts need URLs that carry their reader.
struct MastodonMediaReader: RouterMiddleware {
    let capabilities: MediaCapabilities

    func handle(
        _ request: Request, context: PlazaContext, next: (Request, PlazaContext) async throws -> Response
    ) async throws -> Response {
        guard let identity = context.identity else { return try await next(request, context) }
        let signer = try await capabilities.signer(for: identity.userID)
        return try await MastodonMapper.$mediaSigner.withValue(signer) { try await next(request, context) }
    }
}
