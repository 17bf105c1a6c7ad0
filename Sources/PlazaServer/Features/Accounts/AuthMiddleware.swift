import Hummingbird

/// Resolves `Authorization: Bearer <token>`, or the web app's session cookie, into the
/// context's identity. A bearer token that is unknown, revoked or expired is a 401 even on
/// public routes, so clients notice; a stale cookie just means signed out.
///
/// With `requireCSRFHeader` (the API), an unsafe request authenticated by the cookie must
/// carry the page's CSRF token in `X-CSRF-Token`. The web pages' own forms check theirs.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let accounts: AccountStore
    var requireCSRFHeader = true

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let header = request.headers[.authorization] {
            guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
                throw PlazaError(.unauthorized, "invalid_token", "Use Authorization: Bearer <token>.")
            }
            let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
            guard token.utf8.count <= 128, let identity = try await accounts.identity(token: token) else {
                throw PlazaError(.unauthorized, "invalid_token", "The token is invalid or has expired. Sign in again.")
            }
            context.identity = identity
        } else if let token = WebSession.sessionToken(request), let identity = try await accounts.identity(token: token) {
            if requireCSRFHeader, WebSession.isUnsafe(request.method),
                !WebSession.verify(request.headers[WebSession.csrfHeader], secret: token, request: request)
            {
                throw PlazaError(.forbidden, "csrf_failed", "This request is missing the page's CSRF token. Reload the page and try again.")
            }
            context.identity = identity
        }
        return try await next(request, context)
    }
}
