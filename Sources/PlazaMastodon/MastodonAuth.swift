import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's errors: `{"error": "…"}` with Mastodon's status codes and wording.
enum MastodonError {
    static let unauthorized = PlazaError(.unauthorized, "unauthorized", "The access token is invalid")
    static let signInRequired = PlazaError(.unauthorized, "unauthorized", "This method requires an authenticated user")
    static let outsideScopes = PlazaError(.forbidden, "forbidden", "This action is outside the authorized scopes")
    static let notFound = PlazaError(.notFound, "not_found", "Record not found")

    static func validation(_ message: String) -> PlazaError {
        PlazaError(.unprocessableContent, "validation_failed", "Validation failed: \(message)")
    }
}

/// On Mastodon's routes: resolves `Authorization: Bearer` (or `access_token` in the query, as
/// Mastodon's streaming clients send it) into a person's session or an app's own token, and
/// answers errors in Mastodon's shape. No cookies: these routes are for apps, not pages.
struct MastodonAuthMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let accounts: AccountStore
    let oauth: OAuthStore

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            var context = context
            var token: String?
            if let header = request.headers[.authorization] {
                guard let bearer = try? AuthMiddleware.bearerToken(header) else { throw MastodonError.unauthorized }
                token = bearer
            } else if let query = request.uri.queryParameters.get("access_token") {
                guard let bearer = try? AuthMiddleware.bearerToken("Bearer " + query) else {
                    throw MastodonError.unauthorized
                }
                token = bearer
            }
            if let token {
                if let identity = try await accounts.identity(token: token) {
                    context.identity = identity
                } else if let app = try await oauth.appCredential(token: token) {
                    context.appCredential = AppCredential(app: app.app, scopes: app.scopes)
                } else {
                    throw MastodonError.unauthorized
                }
            }
            var response = try await next(request, context)
            if context.identity != nil, response.headers[.cacheControl] == nil {
                response.headers[.cacheControl] = "no-store"
            }
            return response
        } catch let error as PlazaError {
            return MastodonError.response(
                error, identified: context.identity != nil || request.headers[.authorization] != nil)
        }
    }
}

extension MastodonError {
    /// An error as Mastodon answers it: `{"error": "…"}`, a 422's message starting "Validation
    /// failed", a 401 with `WWW-Authenticate`, and never kept by a cache when a token was sent.
    static func response(_ error: PlazaError, identified: Bool) -> Response {
        var headers = error.headers
        if identified { headers[.cacheControl] = "no-store" }
        if error.status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"Plaza\"" }
        var body: [String: String] = ["error": error.message]
        if error.status == .unprocessableContent, !error.message.hasPrefix("Validation failed") {
            body["error"] = "Validation failed: \(error.message)"
        }
        do {
            return try MastodonJSON.response(body, status: error.status, headers: headers)
        } catch {
            return Response(status: .internalServerError)
        }
    }

    /// The first segments under `/api/v1/` that are Mastodon's paths and not Plaza's own (from
    /// Mastodon's `config/routes/api.rb`): an error on them, even where no route here takes the
    /// path, is answered in Mastodon's shape. All of `/api/v2/` and `/oauth/` is Mastodon's too.
    static let v1Segments: Set<Substring> = [
        "accounts", "announcements", "annual_reports", "apps", "blocks", "bookmarks", "conversations",
        "custom_emojis", "directory", "domain_blocks", "emails", "endorsements", "favourites", "featured_tags",
        "filters", "follow_requests", "followed_tags", "instance", "lists", "markers", "mastodon", "media",
        "mutes",
        "notifications", "polls", "preferences", "profile", "scheduled_statuses", "statuses", "streaming",
        "suggestions", "tags", "timelines", "trends",
    ]

    /// Whether an error on `path` is answered in Mastodon's shape.
    static func owns(path: String) -> Bool {
        let parts = path.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].isEmpty else { return false }
        if parts[1] == "oauth" { return true }
        guard parts[1] == "api", parts.count >= 3 else { return false }
        if parts[2] == "v2" { return true }
        guard parts[2] == "v1", parts.count == 4 else { return false }
        let rest = parts[3]
        let first = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? rest
        return v1Segments.contains(first) || rest == "push/subscription" || rest.hasPrefix("push/subscription/")
    }
}

extension PlazaContext {
    /// The signed-in person, if their token grants `scope`: 401 without a person, 403 without the scope.
    func mastodonUser(_ scope: String) throws -> Identity {
        guard let identity else { throw MastodonError.signInRequired }
        guard identity.allows(scope) else { throw MastodonError.outsideScopes }
        return identity
    }

    /// Who reads a public resource: anyone, but a token must grant `scope`.
    func mastodonViewer(_ scope: String) throws -> Int64? {
        if let identity {
            guard identity.allows(scope) else { throw MastodonError.outsideScopes }
            return identity.userID
        }
        if let appCredential, !appCredential.scopes.allows(scope) { throw MastodonError.outsideScopes }
        return nil
    }
}
