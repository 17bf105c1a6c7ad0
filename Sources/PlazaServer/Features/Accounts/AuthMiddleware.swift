import Hummingbird

/// Resolves `Authorization: Bearer <token>` into the context's identity. A token that is
/// unknown, revoked or expired is a 401 even on public routes, so clients notice.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let accounts: AccountStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw PlazaError(.unauthorized, "invalid_token", "Use Authorization: Bearer <token>.")
        }
        let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
        guard token.utf8.count <= 128, let identity = try await accounts.identity(token: token) else {
            throw PlazaError(.unauthorized, "invalid_token", "The token is invalid or has expired. Sign in again.")
        }
        var context = context
        context.identity = identity
        return try await next(request, context)
    }
}
