import Hummingbird

/// Resolves `Authorization: Bearer <token>`, or the web app's session cookie, into the
/// context's identity. A bearer token that is unknown, revoked or expired is a 401 even on
/// public routes, so clients notice; a stale cookie just means signed out.
///
/// With `requireCSRFHeader` (the API), an unsafe request authenticated by the cookie must
/// carry the page's CSRF token in `X-CSRF-Token`. The web pages' own forms check theirs.
package struct AuthMiddleware: RouterMiddleware {
    package typealias Context = PlazaContext
    let accounts: AccountStore
    var requireCSRFHeader = true

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws
        -> Response
    {
        var context = context
        if let header = request.headers[.authorization] {
            guard let identity = try await accounts.identity(token: try Self.bearerToken(header)) else {
                throw Self.invalidToken
            }
            if identity.scopes != nil { try Self.checkAppToken(identity, request, pages: !requireCSRFHeader) }
            context.identity = identity
        } else if let token = WebSession.sessionToken(request, secure: context.isHTTPS),
            let identity = try await accounts.identity(token: token),
            // An app's token (OAuth) is no browser's session: as a cookie it signs nobody in.
            identity.scopes == nil
        {
            if requireCSRFHeader, WebSession.isUnsafe(request.method),
                !WebSession.verify(request.headers[WebSession.csrfHeader], secret: token, request: request)
            {
                throw PlazaError(
                    .forbidden, "csrf_failed",
                    "This request is missing the page's CSRF token. Reload the page and try again.")
            }
            context.identity = identity
        }
        // What a signed-in person is shown is theirs, errors too: no shared cache may keep it.
        // An app signed in by a bearer token keeps its own copy and revalidates it before each use
        // (`private, no-cache`: an ETag and a 304 save the answer's bytes); a browser keeps nothing
        // (`no-store`), as a shared computer's next user could read its cache.
        guard context.identity != nil else { return try await next(request, context) }
        let policy = request.headers[.authorization] == nil ? "no-store" : "private, no-cache"
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as PlazaError {
            throw error.withHeader(.cacheControl, "no-store")
        }
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = policy }
        return response
    }

    /// What an app's token (OAuth, with scopes) may do outside Mastodon's API: read Plaza's own
    /// API with `read` and change things with `write`, but never the web pages (the consent
    /// page among them) nor what guards the account itself: sessions, password, email,
    /// two-factor, sign-in providers, administration, the account's export and deletion.
    static func checkAppToken(_ identity: Identity, _ request: Request, pages: Bool) throws {
        let path = request.uri.path
        let guarded = [
            "/api/v1/auth/", "/api/v1/admin/", "/api/v1/me/sessions", "/api/v1/me/password", "/api/v1/me/email",
            "/api/v1/me/two-factor", "/api/v1/me/identities", "/api/v1/me/export",
        ]
        let deletesAccount = request.method == .delete && (path == "/api/v1/me" || path == "/api/v1/me/")
        guard !pages, !deletesAccount, !guarded.contains(where: { path.hasPrefix($0) }),
            identity.allows(request.method == .get || request.method == .head ? "read" : "write")
        else {
            throw PlazaError(.forbidden, "insufficient_scope", "This app's token does not allow this request.")
        }
    }

    static let invalidToken = PlazaError(
        .unauthorized, "invalid_token", "The token is invalid or has expired. Sign in again.")

    /// The token of an `Authorization: Bearer <token>` header (RFC 6750: the scheme is
    /// case-insensitive), if it has a token's shape: 1–128 bytes of base64url or `.~+/=`.
    package static func bearerToken(_ header: String) throws -> String {
        let bytes = Array(header.utf8)
        guard bytes.count > 7, String(decoding: bytes[..<7], as: UTF8.self).lowercased() == "bearer " else {
            throw PlazaError(.unauthorized, "invalid_token", "Use Authorization: Bearer <token>.")
        }
        var token = bytes[7...]
        while token.first == UInt8(ascii: " ") { token = token.dropFirst() }
        while token.last == UInt8(ascii: " ") { token = token.dropLast() }
        guard (1...128).contains(token.count),
            token.allSatisfy({ MultipartParser.isTokenByte($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "=") })
        else { throw invalidToken }
        return String(decoding: token, as: UTF8.self)
    }
}
