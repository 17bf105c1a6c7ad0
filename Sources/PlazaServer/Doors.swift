import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging

/// Builds the router: the middleware every request passes, the health check, then the doors to
/// the one core — Plaza's JSON API, the web app, and the doors kept in targets of their own
/// (`extra`: Mastodon's client API).
func buildRouter(_ doors: Doors, web: WebRenderer, extra: [any Door]) -> Router<PlazaContext> {
    let router = Router(context: PlazaContext.self)
    doors.addMiddleware(to: router, renderer: web)
    HealthController(db: doors.services.db).register(to: router)
    let api = doors.api(on: router, openAPI: extra.map(\.openAPI))
    for door in extra { door.register(on: router, core: doors) }
    doors.web(on: router, renderer: web, api: api)
    return router
}

/// A door to the core kept in a target of its own, which sees only what the core declares
/// `package`: its actions, read queries and API types. Mastodon's client API is one.
package protocol Door: Sendable {
    /// Adds the door's routes; `core` is what every door is built from.
    func register(on router: Router<PlazaContext>, core: Doors)
    /// The WebSocket upgrade the door serves on the HTTP port, if any.
    func webSocket(core: Doors) -> WebSocketUpgrade?
    /// How the push subscriptions made through this door want their pushes, if it takes any.
    func pushFormat() -> (any AppPushFormat)?
    /// The door's operations and schemas in the served OpenAPI document.
    var openAPI: OpenAPIDocument.Part { get }
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

    func addMiddleware(to router: Router<PlazaContext>, renderer: WebRenderer) {
        // First, so limits, throttles, sessions and the request log see the client behind any trusted proxy.
        router.add(
            middleware: ClientAddressMiddleware(proxies: config.http.trustedProxies, alwaysHTTPS: config.servesHTTPS))
        router.add(middleware: RequestIDMiddleware(proxies: config.http.trustedProxies))
        if let metrics = services.db.metrics {
            router.add(middleware: MetricsMiddleware(metrics: metrics))
            if config.metricsOnPublicPort { services.metricsEndpoint(hub: hub, metrics: metrics).register(on: router) }
        }
        router.add(middleware: LogRequestsMiddleware(.debug))
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: WebErrorMiddleware(renderer: renderer))
        router.add(middleware: BodyLimitMiddleware(limit: config.http.maxBodyBytes))
        router.add(middleware: BodyDeadlineMiddleware(timeout: .seconds(config.http.bodyTimeoutSeconds)))
    }

    /// Plaza's JSON API under `/api/v1`, and the media files under `/media`; returns the API's
    /// controllers, whose reads the web app's pages share.
    func api(on router: Router<PlazaContext>, openAPI: [OpenAPIDocument.Part]) -> WebController.APIControllers {
        let api = router.group("api/v1")
            .authenticated(by: AuthMiddleware(accounts: services.accounts), limiter: rateLimiter)
        let controllers = apiControllers()
        OpenAPIController(parts: openAPI).register(to: api)
        controllers.accounts.register(to: api)
        controllers.identity.register(to: api)
        controllers.people.register(to: api)
        controllers.posts.register(to: api)
        // Media files: rate limited like the API, and authenticated (an unused upload is its owner's).
        let mediaFiles = router.group("media")
            .authenticated(by: AuthMiddleware(accounts: services.accounts), limiter: rateLimiter)
        MediaController(
            media: services.media, storage: services.mediaStorage, actions: actions.media, limits: uploadLimits
        )
        .register(api: api, files: mediaFiles)
        controllers.feeds.register(to: api)
        controllers.spaces.register(to: api)
        SpaceMembersController(
            spaces: services.spaces, members: services.spaceMembers, people: services.people,
            links: PublicLinks(base: config.publicURL ?? "")
        ).register(to: api)
        controllers.search.register(to: api)
        controllers.history.register(to: api)
        controllers.collections.register(to: api)
        controllers.notifications.register(to: api)
        PushController(
            devices: services.pushDevices, vapid: services.vapid, policy: config.push.allowed,
            apnsConfigured: config.push.apns != nil
        ).register(to: api)
        controllers.moderation.register(to: api)
        StreamController(hub: hub, feed: services.eventFeed).register(to: api)
        return controllers
    }

    private func apiControllers() -> WebController.APIControllers {
        let accounts = AccountsController(
            accounts: services.accounts, people: services.people, passwords: services.passwords,
            throttle: services.loginThrottle(policy: config.accounts.loginThrottle),
            devices: DeviceTokens(keys: ServerKeyStore(db: services.db)), media: actions.media,
            twoFactor: TwoFactorStore(db: services.db), emails: services.emails,
            outbox: services.outbox, deletions: services.deletions, export: services.export,
            scratch: services.uploadDirectory)
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
            moderation: ModerationController(moderation: services.moderation, actions: actions.moderation),
            identity: IdentityController(
                signIn: SignInProviders(config.authProviders), identities: IdentityStore(db: services.db),
                accounts: accounts, emails: services.emails, baseURL: config.baseURL))
    }

    /// The web app's pages and forms.
    func web(on router: Router<PlazaContext>, renderer: WebRenderer, api: WebController.APIControllers) {
        WebController(
            renderer: renderer, api: api, actions: actions,
            stores: .init(
                accounts: services.accounts, posts: services.posts, spaces: services.spaces,
                members: services.spaceMembers, collections: services.collections, moderation: services.moderation,
                linkPreviews: services.linkPreviews, pushDevices: services.pushDevices, oauth: services.oauth),
            instanceName: config.instanceName,
            map: config.map,
            sessionDays: config.accounts.sessionIdleDays,
            rateLimiter: rateLimiter
        ).register(to: router)
    }
}
