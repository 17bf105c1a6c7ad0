import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import ServiceLifecycle

/// Everything the routes need, built once from the configuration.
package struct AppServices: Sendable {
    let db: Database
    let ids: IDGenerator
    package let accounts: AccountStore
    package let people: PeopleStore
    package let posts: PostStore
    /// Wakes the home timelines' fan-out (`HomeFanOutService`) when a post is made.
    let homeQueue = WorkSignal()
    package let tags: TagStore
    package let comments: CommentStore
    package let likes: LikeStore
    package let boosts: BoostStore
    package let polls: PollStore
    /// Wakes the poll announcer (`PollService`) once the migrations have run.
    let pollSignal = WorkSignal()
    package let spaces: SpaceStore
    let spaceMembers: SpaceMembersStore
    let collections: CollectionStore
    let linkPreviews: LinkPreviewStore
    let linkPreviewQueue = WorkSignal()
    let events: EventLog
    let searchWindows = SearchWindowCache()
    package let notifications: NotificationStore
    let moderation: ModerationStore
    let eventFeed: EventFeed
    let passwords: PasswordHasher
    package let media: MediaStore
    let mediaStorage: any MediaStorage
    /// Signs and checks the capability URLs of media that are not public.
    package let mediaCapabilities: MediaCapabilities
    let ingest: MediaIngest
    let videoQueue = WorkSignal()
    let videos: VideoStore
    let uploadDirectory: String
    let quotas: Quotas
    let mailSignal = WorkSignal()
    let outbox: MailOutbox
    let emails: EmailStore
    let pushSignal = WorkSignal()
    let pushes: PushOutbox
    package let pushDevices: PushDeviceStore
    package let vapid: VAPID.Source
    package let oauth: OAuthStore
    package let search: SearchStore
    let deletions: AccountDeletion
    let export: AccountExport
    /// The instance's settings, registrations and invites.
    package let instance: InstanceStore
    /// Its name as admins set it, for titles, mails and pushes.
    let instanceName: InstanceName

    init(config: PlazaConfig, db: Database) throws {
        self.db = db
        instanceName = InstanceName(config.instanceName, db: db)
        ids = IDGenerator(node: config.nodeID)
        accounts = AccountStore(
            db: db, ids: ids, sessionIdleMillis: Int64(config.accounts.sessionIdleDays) * 86_400_000,
            sessionMaxMillis: Int64(config.accounts.sessionMaxDays) * 86_400_000, searchWindows: searchWindows)
        events = EventLog(db: db, signal: EventSignal(), pushes: pushSignal)
        people = PeopleStore(
            db: db, ids: ids, events: events, home: HomeTimeline(fanOutLimit: config.homeFanOutLimit))
        posts = PostStore(
            db: db, ids: ids, events: events, searchWindows: searchWindows,
            linkPreviewsPerDay: config.media.quotas.linkPreviewsPerDay, homeQueue: homeQueue)
        tags = TagStore(db: db)
        comments = CommentStore(db: db, ids: ids, events: events)
        likes = LikeStore(db: db, ids: ids, events: events)
        boosts = BoostStore(db: db, ids: ids, events: events, homeQueue: homeQueue)
        polls = PollStore(db: db, ids: ids, events: events)
        notifications = NotificationStore(db: db, people: people, posts: posts)
        eventFeed = EventFeed(db: db, posts: posts, notifications: notifications)
        moderation = ModerationStore(
            db: db, ids: ids, events: events, accounts: accounts, searchWindows: searchWindows)
        spaces = SpaceStore(db: db, ids: ids, searchWindows: searchWindows)
        spaceMembers = SpaceMembersStore(db: db, ids: ids)
        collections = CollectionStore(db: db, ids: ids, linkPreviewsPerDay: config.media.quotas.linkPreviewsPerDay)
        linkPreviews = LinkPreviewStore(db: db)
        passwords = PasswordHasher(cost: config.accounts.bcryptCost)
        media = MediaStore(db: db)
        mediaStorage = Self.mediaStorage(config: config)
        mediaCapabilities = MediaCapabilities(keys: ServerKeyStore(db: db))
        ingest = MediaIngest(
            media: media, storage: mediaStorage,
            pipeline: ImagePipeline(limits: .init(maxPixels: config.media.maxPixels)),
            video: VideoPipeline.make(config.video, logger: Logger(label: "PlazaServer.media")), videoQueue: videoQueue)
        videos = VideoStore(db: db, events: events, ids: ids, searchWindows: searchWindows)
        uploadDirectory = (config.dataDir as NSString).appendingPathComponent("uploads")
        quotas = config.media.quotas
        outbox = MailOutbox(db: db, ids: ids)
        emails = EmailStore(
            db: db, outbox: outbox,
            templates: MailTemplates(name: instanceName, baseURL: config.baseURL),
            signal: mailSignal)
        pushes = PushOutbox(db: db)
        pushDevices = PushDeviceStore(
            db: db, ids: ids, tokens: AppPushTokens(keys: ServerKeyStore(db: db), secrets: config.accounts.secrets))
        vapid = VAPID.Source(keys: ServerKeyStore(db: db), subject: config.vapidSubject)
        oauth = OAuthStore(db: db, ids: ids)
        search = SearchStore(db: db, cache: searchWindows, postStore: posts, people: people)
        deletions = AccountDeletion(
            db: db, events: events, emails: emails, storage: mediaStorage, accounts: accounts,
            searchWindows: searchWindows, graceMillis: Int64(config.accounts.deletionGraceDays) * 86_400_000)
        export = AccountExport(
            db: db, accounts: accounts, posts: posts, collections: collections, storage: mediaStorage)
        instance = InstanceStore(
            db: db, ids: ids, emails: emails,
            defaults: .init(
                name: config.instanceName, registrations: config.registrations, contact: config.mailSender.address),
            baseURL: config.baseURL, name: instanceName)
    }

    /// Makes the folder uploads and fetched preview images wait in, when serving starts (building
    /// the services has no side effects).
    func makeFolders() throws {
        try FileManager.default.createDirectory(atPath: uploadDirectory, withIntermediateDirectories: true)
    }
}

extension AppServices {
    /// Rate limits and sign-in throttles: shared through the database on PostgreSQL, in memory on SQLite.
    var sharedLimits: PostgresLimitStore? { db.kind == .postgres ? PostgresLimitStore(db: db) : nil }

    func rateLimiter(policy: RateLimiter.Policy) -> RateLimiter {
        sharedLimits.map { RateLimiter(policy: policy, store: $0) } ?? RateLimiter(policy: policy)
    }

    func loginThrottle(policy: LoginThrottle.Policy) -> LoginThrottle {
        sharedLimits.map { LoginThrottle(policy: policy, store: $0) } ?? LoginThrottle(policy: policy)
    }

    func eventHub(config: PlazaConfig, logger: Logger) -> EventHub {
        EventHub(
            feed: eventFeed, signal: events.signal, sessions: accounts, limits: config.streams.limits, logger: logger)
    }

    func mailService(config: PlazaConfig, logger: Logger) throws -> MailService {
        let sender = config.mailSender
        let transport: MailTransport
        if let smtp = config.mail.smtp {
            let domain = sender.address.split(separator: "@").last.map(String.init) ?? "localhost"
            transport = .smtp(try SMTPClient(settings: smtp, heloName: domain))
        } else {
            transport = .folder((config.dataDir as NSString).appendingPathComponent("outbox"))
        }
        let lease = (config.mail.smtp?.timeout ?? .seconds(60)).components.seconds + 60
        return MailService(
            outbox: outbox, transport: transport, sender: sender, signal: mailSignal, name: instanceName,
            pollInterval: config.mail.pollInterval, leaseMillis: lease * 1000, logger: logger)
    }

    func pushService(config: PlazaConfig, appPushes: (any AppPushFormat)?, logger: Logger) async throws -> PushService {
        let fetcher = SafeFetcher(
            policy: config.push.allowed, publicAddresses: config.push.publicAddresses, timeout: config.push.timeout,
            maxRedirects: 0, plainHTTPOnlyToAllowed: true, clients: PinnedClients())
        var apns: APNsSender?
        if let settings = config.push.apns { apns = try await APNsSender(settings: settings) }
        return PushService(
            outbox: pushes, notifications: notifications, webPush: WebPushSender(vapid: vapid, fetcher: fetcher),
            apns: apns, appPushes: appPushes, appTokens: pushDevices.tokens, signal: pushSignal,
            instanceName: instanceName, pollInterval: config.push.pollInterval,
            leaseMillis: (config.push.timeout.components.seconds + 60) * 1000, logger: logger)
    }

    /// nil when this server has no ffmpeg (it takes no videos).
    func videoService(logger: Logger) -> VideoService? {
        ingest.video.map {
            VideoService(
                store: videos, pipeline: $0, storage: mediaStorage, signal: videoQueue,
                workDirectory: uploadDirectory, logger: logger)
        }
    }

    /// Where media files are kept: the S3 bucket when one is configured, else `<data dir>/media`.
    static func mediaStorage(config: PlazaConfig) -> any MediaStorage {
        if let s3 = config.media.s3 { return S3MediaStorage(settings: s3, client: .shared) }
        return LocalMediaStorage(root: (config.dataDir as NSString).appendingPathComponent("media"))
    }

    func metricsEndpoint(hub: EventHub, metrics: PlazaMetrics) -> MetricsEndpoint {
        MetricsEndpoint(metrics: metrics, db: db, hub: hub, mail: outbox, pushes: pushes, logger: hub.logger)
    }

    func linkPreviewService(config: PlazaConfig, logger: Logger) throws -> LinkPreviewService {
        let settings = config.linkPreviews
        let fetcher = SafeFetcher(
            policy: settings.allowed, publicAddresses: settings.publicAddresses,
            timeout: settings.timeout,
            maxRedirects: settings.maxRedirects)
        return LinkPreviewService(
            store: linkPreviews, fetcher: fetcher, ingest: ingest, ids: ids, queue: linkPreviewQueue,
            settings: settings,
            uploadDirectory: uploadDirectory, maxImageBytes: config.media.maxBytes,
            storageQuota: config.media.quotas.storageBytes, logger: logger)
    }
}

/// Opens the database, runs pending migrations and returns the application with the core's own
/// doors and `doors` (Mastodon's, from its target), ready to run.
package func buildApplication(config: PlazaConfig, logger: Logger? = nil, doors extra: [any Door]) async throws
    -> some ApplicationProtocol
{
    ProcessStart.mark()
    var logger = logger ?? Logger(label: "plaza")
    logger.logLevel = config.logLevel
    // Nothing is counted when nobody can read it: no metrics port, no cost on any request.
    let metrics = config.metrics.port == nil ? nil : PlazaMetrics()
    let db = try await Database.open(config.database, logger: logger, metrics: metrics)
    let services = try AppServices(config: config, db: db)
    let hub = services.eventHub(config: config, logger: logger)
    let doors = Doors(services: services, hub: hub, config: config)
    let router = buildRouter(doors, web: try await WebRenderer.load(map: config.map), extra: extra)
    router.answerUnservedMethodsNotAllowed()
    var app = Application(
        responder: DoorDispatch(
            router: router.buildResponder(), doors: extra, bodyTimeout: .seconds(config.http.bodyTimeoutSeconds),
            maxBodyBytes: config.http.maxBodyBytes),
        // Slow clients cannot hold connections: one that sends nothing for the idle timeout, in
        // its headers and body too, is closed; headers are capped. A door's WebSocket (Mastodon's
        // streaming) upgrades on the same port (pinged every 30 s). The upgradable channel sets its
        // idle timeout only after a request's head: `HeadDeadlineChannel` guards the first head.
        server: httpServer(config: config.http, webSockets: extra.compactMap { $0.webSocket(core: doors) }),
        configuration: .init(address: .hostname(config.host, port: config.port), serverName: "Plaza"),
        logger: logger
    )
    app.addServices(
        db,
        services.maintenanceService(config: config, logger: logger),
        try services.linkPreviewService(config: config, logger: logger),
        PollService(polls: services.polls, signal: services.pollSignal, logger: logger),
        HomeFanOutService(db: db, signal: services.homeQueue, logger: logger),
        try services.mailService(config: config, logger: logger),
        try await services.pushService(
            config: config, appPushes: extra.lazy.compactMap { $0.pushFormat() }.first, logger: logger),
        hub)
    if let port = config.metrics.port, let metrics, !config.metricsOnPublicPort {
        let router = Router(options: .autoGenerateHeadEndpoints)
        services.metricsEndpoint(hub: hub, metrics: metrics).register(on: router)
        app.addServices(
            Application(
                router: router, configuration: .init(address: .hostname(config.metrics.host, port: port)),
                logger: logger))
    }
    if config.video.worker, let videos = services.videoService(logger: logger) { app.addServices(videos) }
    if db.kind == .postgres {
        app.addServices(SessionRevocations(db: db, cache: services.accounts.sessionCache, logger: logger))
    }
    // Runs once the database service is up (a PostgreSQL pool must be running to be used).
    let migrationLogger = logger
    app.beforeServerStarts {
        try services.makeFolders()
        try await Migrations.run(on: db, logger: migrationLogger)
        // Mails and pushes are signed with the name admins set from the first one on.
        _ = await services.instanceName.fresh()
        services.openWorkers()
        hub.open()
    }
    return app
}

/// HTTP/1.1 with the doors' WebSockets upgrading on the same port (pinged every 30 s); the first
/// door that takes a request upgrades it. Slow clients cannot hold connections: one that sends
/// nothing for the idle timeout, in its headers and body too, is closed; headers are capped. The
/// upgradable channel sets its idle timeout only after a request's head: `HeadDeadlineChannel`
/// guards the first head.
func httpServer(config: HTTPSettings, webSockets: [WebSocketUpgrade]) -> HTTPServerBuilder {
    let http1 = HTTP1Channel.Configuration(
        idleTimeout: .seconds(Int64(config.idleTimeoutSeconds)),
        httpDecoderConfiguration: .init(
            maxHeaderFieldSize: config.maxHeaderBytes, maxHeaderListSize: config.maxHeaderBytes,
            maxHeaderFieldCount: 100))
    return HTTPServerBuilder { responder in
        HeadDeadlineChannel(
            inner: HTTP1WebSocketUpgradeChannel(
                responder: responder,
                configuration: .init(
                    http1: http1, ws: .init(maxFrameSize: 1 << 16, autoPing: .enabled(timePeriod: .seconds(30)))),
                shouldUpgrade: { request, _, _ in
                    for upgrade in webSockets {
                        if case .upgrade(let headers, let handler) = await upgrade(request) {
                            return .upgrade(headers, handler)
                        }
                    }
                    return .dontUpgrade
                }),
            timeout: .seconds(Int64(config.idleTimeoutSeconds)))
    }
}

extension AppServices {
    /// Lets the background workers start, once the migrations have run.
    func openWorkers() {
        for signal in [linkPreviewQueue, mailSignal, pushSignal, videoQueue, pollSignal, homeQueue] { signal.open() }
    }

    /// The periodic clean-up (`MaintenanceService`), with this configuration's ages.
    func maintenanceService(config: PlazaConfig, logger: Logger) -> MaintenanceService {
        MaintenanceService(
            accounts: accounts, media: media, mediaStorage: mediaStorage, events: eventFeed, outbox: outbox,
            pushes: pushes, eventRetentionMillis: Int64(config.streams.eventRetentionDays) * 86_400_000,
            limits: sharedLimits,
            limitAges: (
                buckets: config.http.rateLimitPolicy.longestRefillMillis,
                throttle: config.accounts.loginThrottle.staleAfterMillis
            ),
            // Past the longest a transcode or an upload's body may run, twice over, and at least an hour.
            scratch: (
                uploadDirectory,
                max(.seconds(3600), config.video.timeout * 2, .seconds(config.http.bodyTimeoutSeconds * 2))
            ), deletions: deletions, filters: KeywordFilterStore(db: db, ids: ids),
            idempotency: IdempotencyStore(db: db), logger: logger)
    }
}

/// Applies the configured JSON body limit to the request context.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let limit: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        context.bodyLimit = limit
        return try await next(request, context)
    }
}
