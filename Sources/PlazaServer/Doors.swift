import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// Builds the router: the middleware every request passes, the health check, then the doors to
/// the one core — Plaza's JSON API and its media files, the doors kept in targets of their own
/// (`extra`: Mastodon's client API), and the web app, whose pages answer every other path.
func buildRouter(_ doors: Doors, web: WebRenderer, extra: [any Door]) -> Router<PlazaContext> {
    // HEAD wherever GET is: the GET's answer without its body (RFC 9110 asks every server for both).
    let router = Router(context: PlazaContext.self, options: .autoGenerateHeadEndpoints)
    doors.addMiddleware(to: router, extra: extra)
    router.addRoutes(HealthController(db: doors.services.db).routes)
    let api = doors.apiControllers()
    let media = doors.mediaController
    router.group("api/v1").authenticated(by: doors.apiAuthentication, limiter: doors.rateLimiter)
        .add(middleware: doors.idempotency()).add(middleware: ConditionalGetMiddleware())
        .addRoutes(of: doors.apiFeatures(api, media: media, openAPI: extra.map(\.openAPI)))
    // Media files: rate limited like the API, and authenticated (an unused upload is its owner's).
    router.group("media").authenticated(by: doors.apiAuthentication, limiter: doors.rateLimiter)
        .addRoutes(media.files)
    for door in extra { router.addRoutes(door.routes(core: doors)) }
    router.addRoutes(doors.webController(renderer: web, api: api).routes)
    return router
}

/// A door to the core kept in a target of its own, which sees only what the core declares
/// `package`: its actions, read queries and API types. Mastodon's client API is one.
package protocol Door: Sendable {
    /// The door's routes, from the root; `core` is what every door is built from.
    func routes(core: Doors) -> RouteCollection<PlazaContext>
    /// The WebSocket upgrade the door serves on the HTTP port, if any.
    func webSocket(core: Doors) -> WebSocketUpgrade?
    /// How the push subscriptions made through this door want their pushes, if it takes any.
    func pushFormat() -> (any AppPushFormat)?
    /// The door's operations and schemas in the served OpenAPI document.
    var openAPI: OpenAPIDocument.Part { get }
    /// Whether errors on `path` are the door's to answer, in its own shape (`errorResponse`):
    /// its paths, those of its API that no route takes here too, and not Plaza's own.
    func ownsErrors(onPath path: String) -> Bool
    /// An error on one of the door's paths, in the door's shape.
    func errorResponse(_ error: PlazaError, request: Request) -> Response
    /// Whether `request`, on a path Plaza's own API shares with the door (Mastodon's
    /// `POST /api/v1/reports`), is the door's: then the door rewrites it to its own route's path.
    /// It may read a small body to tell, through `body` (the server's body deadline and size cap
    /// apply), and leaves it in `request`; a body that cannot be read is an error in the door's shape.
    func claim(_ request: inout Request, body: ClaimedBody) async throws -> Bool
}

/// How a door reads a body before the router (`Door.claim`): with the server's deadline for a
/// body's arrival and its size cap, as the routes' middleware would apply them.
package struct ClaimedBody: Sendable {
    let timeout: Duration
    let maxBytes: Int
    let channel: any Channel

    /// The body, at most `limit` bytes (413 past it, 408 when it arrives too slowly); it stays in `request`.
    package func collect(_ request: inout Request, upTo limit: Int) async throws -> ByteBuffer {
        let channel = channel
        request.body = RequestBody(
            asyncSequence: DeadlineBody(base: request.body, deadline: .now + timeout) {
                channel.close(mode: .input, promise: nil)
            })
        return try await request.collectBody(upTo: min(limit, maxBytes))
    }
}

/// Before the router: a request that a door claims (`Door.claim`) goes to the door's route,
/// every other to the route its path names. Plaza's API and a door may then share a path.
struct DoorDispatch<Router: HTTPResponder>: HTTPResponder where Router.Context == PlazaContext {
    let router: Router
    let doors: [any Door]
    let bodyTimeout: Duration
    let maxBodyBytes: Int

    /// A request that may become a stream is answered in a child task (`StreamMemory`).
    func respond(to request: Request, context: PlazaContext) async throws -> Response {
        guard StreamMemory.mayStream(path: request.uri.path) else {
            return try await dispatch(request, context: context)
        }
        let dispatch = self
        return try await StreamMemory.separately { try await dispatch.dispatch(request, context: context) }
    }

    @inline(never)
    private func dispatch(_ request: Request, context: PlazaContext) async throws -> Response {
        var request = request
        let body = ClaimedBody(timeout: bodyTimeout, maxBytes: maxBodyBytes, channel: context.channel)
        for door in doors {
            do {
                if try await door.claim(&request, body: body) { break }
            } catch {
                return door.errorResponse(
                    ErrorMiddleware<PlazaContext>.plazaError(error, request: request, logger: context.logger),
                    request: request)
            }
        }
        return try await router.respond(to: request, context: context)
    }
}

/// Decides whether a request on the HTTP port becomes a WebSocket, and what runs on it.
package typealias WebSocketUpgrade =
    @Sendable (HTTPRequest) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>

/// What the doors are built from. One rate limiter serves every door, so a client cannot
/// double its budget by changing doors; on PostgreSQL its buckets are shared by every app server.
package struct Doors: Sendable {
    package let services: AppServices
    package let hub: EventHub
    package let config: PlazaConfig
    package let rateLimiter: RateLimiter?
    package let actions: Actions

    init(services: AppServices, hub: EventHub, config: PlazaConfig) {
        self.services = services
        self.hub = hub
        self.config = config
        rateLimiter = config.http.rateLimits ? services.rateLimiter(policy: config.http.rateLimitPolicy) : nil
        actions = services.actions
    }

    /// The largest photo and video an upload may be, whichever door it comes through.
    package var uploadLimits: MultipartUpload.Limits {
        MultipartUpload.Limits(
            maxFileBytes: config.media.maxBytes,
            maxVideoBytes: services.ingest.video == nil ? nil : config.video.maxBytes)
    }

    func addMiddleware(to router: Router<PlazaContext>, extra: [any Door]) {
        // First, so limits, throttles, sessions and the request log see the client behind any trusted proxy.
        router.add(
            middleware: ClientAddressMiddleware(proxies: config.http.trustedProxies, alwaysHTTPS: config.servesHTTPS))
        router.add(middleware: RequestIDMiddleware(proxies: config.http.trustedProxies))
        if let metrics = services.db.metrics {
            router.add(middleware: MetricsMiddleware(metrics: metrics))
            if config.metricsOnPublicPort { services.metricsEndpoint(hub: hub, metrics: metrics).register(on: router) }
        }
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ErrorMiddleware(doors: extra))
        router.add(middleware: BodyLimitMiddleware(limit: config.http.maxBodyBytes))
        router.add(middleware: BodyDeadlineMiddleware(timeout: .seconds(config.http.bodyTimeoutSeconds)))
    }

    /// `Idempotency-Key` on the creating and toggling requests of every door, one store for all;
    /// `acceptsAnyKey` for a door whose clients send keys of any shape (Mastodon's).
    package func idempotency(acceptsAnyKey: Bool = false) -> IdempotencyMiddleware {
        // A first request unanswered for twice the time its body may take, and at least two
        // minutes, died with its server: a retry may take its key.
        IdempotencyMiddleware(
            store: IdempotencyStore(db: services.db),
            leaseMillis: max(120_000, Int64(config.http.bodyTimeoutSeconds) * 2000), acceptsAnyKey: acceptsAnyKey)
    }

    /// How Plaza's API and its media files know who asks: a bearer token or the web app's cookie.
    var apiAuthentication: AuthMiddleware { AuthMiddleware(accounts: services.accounts) }

    var mediaController: MediaController {
        MediaController(
            media: services.media, storage: services.mediaStorage, actions: actions.media,
            capabilities: services.mediaCapabilities, limits: uploadLimits)
    }

    /// The features of Plaza's JSON API, served under `/api/v1`.
    func apiFeatures(_ api: WebController.APIControllers, media: MediaController, openAPI: [OpenAPIDocument.Part])
        -> [any FeatureRoutes]
    {
        [
            OpenAPIController(parts: openAPI), api.accounts, api.identity, api.people, api.posts, media, api.feeds,
            api.tags,
            api.spaces,
            SpaceMembersController(
                spaces: services.spaces, members: services.spaceMembers, people: services.people,
                links: PublicLinks(base: config.publicURL ?? "")),
            api.search, api.history, api.collections, api.notifications,
            PushController(
                devices: services.pushDevices, vapid: services.vapid, policy: config.push.allowed,
                apnsConfigured: config.push.apns != nil),
            api.moderation, InstanceController(instance: services.instance),
            StreamController(hub: hub, feed: services.eventFeed),
            KeywordFiltersController(actions: actions.filters), PinsController(actions: actions.pins),
            PollsController(actions: actions.posts),
        ]
    }

    /// The API's controllers, whose reads the web app's pages share.
    func apiControllers() -> WebController.APIControllers {
        let accounts = AccountsController(
            accounts: services.accounts, people: services.people, passwords: services.passwords,
            throttle: services.loginThrottle(policy: config.accounts.loginThrottle),
            devices: DeviceTokens(keys: ServerKeyStore(db: services.db)), media: actions.media,
            twoFactor: TwoFactorStore(db: services.db, secrets: config.accounts.secrets), emails: services.emails,
            outbox: services.outbox, deletions: services.deletions, export: services.export,
            scratch: services.uploadDirectory, instance: services.instance)
        return WebController.APIControllers(
            accounts: accounts,
            people: PeopleController(people: services.people, actions: actions.people),
            posts: PostsController(actions: actions.posts, people: services.people),
            feeds: FeedsController(posts: services.posts, people: services.people, spaces: services.spaces),
            spaces: SpacesController(spaces: services.spaces, accounts: services.accounts, actions: actions.spaces),
            search: SearchController(
                search: services.search, spaces: services.spaces, collections: services.collections),
            history: HistoryController(history: HistoryStore(db: services.db)),
            collections: CollectionsController(
                collections: services.collections, posts: services.posts, actions: actions.collections),
            notifications: NotificationsController(notifications: services.notifications),
            tags: TagsController(actions: actions.tags, posts: services.posts),
            moderation: ModerationController(moderation: services.moderation, actions: actions.moderation),
            identity: IdentityController(
                signIn: SignInProviders(config.authProviders), identities: IdentityStore(db: services.db),
                accounts: accounts, emails: services.emails, baseURL: config.baseURL))
    }

    /// The web app's pages and forms.
    func webController(renderer: WebRenderer, api: WebController.APIControllers) -> WebController {
        WebController(
            renderer: renderer, api: api, actions: actions,
            stores: .init(
                accounts: services.accounts, posts: services.posts, spaces: services.spaces,
                members: services.spaceMembers, collections: services.collections, moderation: services.moderation,
                linkPreviews: services.linkPreviews, pushDevices: services.pushDevices, oauth: services.oauth),
            map: config.map,
            sessionDays: config.accounts.sessionIdleDays,
            rateLimiter: rateLimiter,
            syndication: SyndicationController(
                posts: services.posts, people: services.people, spaces: services.spaces, instance: services.instance,
                links: PublicLinks(base: config.baseURL))
        )
    }
}
