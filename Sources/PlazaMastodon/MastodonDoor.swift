import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's client API as a door to the core: its routes at Mastodon's paths, with its own
/// errors and tokens, its OAuth, its streaming WebSocket, the pushes of its subscriptions and its
/// part of the OpenAPI document. It translates; the core decides.
package struct MastodonDoor: Door {
    package init() {}

    package func routes(core: Doors) -> RouteCollection<PlazaContext> {
        let services = core.services
        let routes = RouteCollection(context: PlazaContext.self)
        let mastodon = routes.group("api")
            .authenticated(
                by: MastodonAuthMiddleware(accounts: services.accounts, oauth: services.oauth),
                limiter: core.rateLimiter)
        _ = mastodon.add(middleware: MastodonMediaReader(capabilities: services.mediaCapabilities))
        // Mastodon's `Idempotency-Key` on statuses (and any other write) shares Plaza's store;
        // Mastodon takes keys of any shape, so the door does too.
        _ = mastodon.add(middleware: core.idempotency(acceptsAnyKey: true))
        let mapper = MastodonMapper(baseURL: core.config.baseURL)
        let oauth = OAuthController(oauth: services.oauth, accounts: services.accounts, baseURL: core.config.baseURL)
        mastodon.addRoutes(
            MastodonController(
                core: core, mapper: mapper,
                config: .init(baseURL: core.config.baseURL, uploads: core.uploadLimits)
            ).routes)
        mastodon.addRoutes(oauth.apps, atPath: "v1")
        mastodon.addRoutes(
            MastodonStreaming(hub: core.hub, mapper: mapper, capabilities: services.mediaCapabilities).routes,
            atPath: "v1")
        let push = MastodonPushController(
            devices: services.pushDevices, vapid: services.vapid, policy: core.config.push.allowed)
        mastodon.addRoutes(push.routes, atPath: "v1")
        routes.addRoutes(oauth.routes)
        return routes
    }

    package func webSocket(core: Doors) -> WebSocketUpgrade? {
        let socket = MastodonWebSocket(
            streaming: MastodonStreaming(
                hub: core.hub, mapper: MastodonMapper(baseURL: core.config.baseURL),
                capabilities: core.services.mediaCapabilities),
            accounts: core.services.accounts)
        return { request in await socket.shouldUpgrade(request) }
    }

    package func pushFormat() -> (any AppPushFormat)? { MastodonPushFormat() }

    package func ownsErrors(onPath path: String) -> Bool { MastodonError.owns(path: path) }

    package func errorResponse(_ error: PlazaError, request: Request) -> Response {
        MastodonError.response(error, identified: request.headers[.authorization] != nil)
    }

    /// Mastodon's `POST /api/v1/reports` shares its path with Plaza's own report: a request
    /// naming an `account_id` (every Mastodon report does; Plaza's names a `targetId`) is
    /// Mastodon's, served by the door's route at `reportsPath`. Only a body of a known, small
    /// length is read to tell.
    package func claim(_ request: inout Request, body: ClaimedBody) async throws -> Bool {
        // The router takes the path with a trailing slash too (Mastodon.py sends one).
        guard request.method == .post, ["/api/v1/reports", "/api/v1/reports/"].contains(request.uri.path) else {
            return false
        }
        var params = (try? MastodonParams(query: request.uri.query ?? "")) ?? MastodonParams()
        // Only a signed-in app's request is read (anyone else's report is refused either way),
        // and only a body of a known length.
        if params.string("account_id") == nil, request.headers[.authorization] != nil,
            let length = request.headers[.contentLength].flatMap(Int.init), length <= Self.maxClaimedBody
        {
            try? params.add(
                body: try await body.collect(&request, upTo: Self.maxClaimedBody),
                contentType: request.headers[.contentType])
        }
        guard params.string("account_id") != nil else { return false }
        var head = request.head
        head.path = Self.reportsPath + (request.uri.query.map { "?" + $0 } ?? "")
        request = Request(head: head, body: request.body)
        return true
    }

    /// Where the door serves Mastodon's reports (`claim`).
    static let reportsPath = "/api/v1/mastodon/reports"
    static let maxClaimedBody = 64 * 1024

    package var openAPI: OpenAPIDocument.Part {
        OpenAPIDocument.Part(
            operations: { OpenAPIDocument.mastodonOperations }, schemas: { OpenAPIDocument.mastodonSchemas })
    }
}
