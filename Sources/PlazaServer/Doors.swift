import Hummingbird
import Logging

/// Builds the router: the middleware every request passes, the health check, then the three
/// doors to the one core — Plaza's JSON API, Mastodon's client API and the web app.
func buildRouter(_ services: AppServices, hub: EventHub, web: WebRenderer, config: PlazaConfig) -> Router<PlazaContext>
{
    let router = Router(context: PlazaContext.self)
    let doors = Doors(services: services, hub: hub, config: config)
    doors.addMiddleware(to: router, renderer: web)
    HealthController(db: services.db).register(to: router)
    let api = doors.api(on: router)
    doors.mastodon(on: router)
    doors.web(on: router, renderer: web, api: api)
    return router
}

/// What the doors are built from. One rate limiter serves every door, so a client cannot
/// double its budget by changing doors; on PostgreSQL its buckets are shared by every app server.
struct Doors {
    let services: AppServices
    let hub: EventHub
    let config: PlazaConfig
    let rateLimiter: RateLimiter?
    let actions: Actions

    init(services: AppServices, hub: EventHub, config: PlazaConfig) {
        self.services = services
        self.hub = hub
        self.config = config
        rateLimiter = config.http.rateLimits ? services.rateLimiter(policy: config.http.rateLimitPolicy) : nil
        actions = services.actions
    }

    /// The largest photo and video an upload may be, whichever door it comes through.
    var uploadLimits: MultipartUpload.Limits {
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
    func api(on router: Router<PlazaContext>) -> WebController.APIControllers {
        let api = router.group("api/v1")
            .authenticated(by: AuthMiddleware(accounts: services.accounts), limiter: rateLimiter)
        let controllers = apiControllers()
        OpenAPIController().register(to: api)
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

    /// Mastodon's client API at Mastodon's paths, with its own errors and tokens
    /// (`Features/Mastodon`), and its OAuth.
    func mastodon(on router: Router<PlazaContext>) {
        let mastodon = router.group("api")
            .authenticated(
                by: MastodonAuthMiddleware(accounts: services.accounts, oauth: services.oauth), limiter: rateLimiter)
        let v1 = mastodon.group("v1")
        let mapper = MastodonMapper(baseURL: config.baseURL)
        OAuthController(oauth: services.oauth, accounts: services.accounts, baseURL: config.baseURL)
            .register(mastodon: v1, router: router)
        MastodonController(
            services: services, mapper: mapper,
            config: .init(
                name: config.instanceName, baseURL: config.baseURL, registrations: true,
                maxMediaBytes: config.media.maxBytes, maxVideoBytes: uploadLimits.maxVideoBytes,
                contactEmail: config.mailSender.address)
        ).register(v1: v1, v2: mastodon.group("v2"))
        MastodonStreaming(hub: hub, mapper: mapper).register(v1: v1)
        MastodonPushController(devices: services.pushDevices, vapid: services.vapid, policy: config.push.allowed)
            .register(v1: v1)
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
