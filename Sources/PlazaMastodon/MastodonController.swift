import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's client API over Plaza's stores (see `docs/mastodon.md` for what each endpoint
/// does here). Every handler reads its parameters with `MastodonParams` (query, form or JSON)
/// and answers Mastodon's entities (`MastodonMapper`).
struct MastodonController: FeatureRoutes {
    /// What it reads, from the core's stores' visibility-aware queries.
    let accounts: AccountStore
    let people: PeopleStore
    let posts: PostStore
    let tags: TagStore
    let comments: CommentStore
    let likes: LikeStore
    let notifications: NotificationStore
    let search: SearchStore
    let media: MediaStore
    /// A person's follows, blocks, mutes, likes and saves, keyset-paged.
    let personalLists: PersonalListStore
    /// The instance's name, description, rules, contact and registration mode, as its admins set them.
    let instance: InstanceStore
    /// Every change goes through the core's actions.
    let actions: Actions
    let mapper: MastodonMapper
    let config: InstanceSettings

    init(core: Doors, mapper: MastodonMapper, config: InstanceSettings) {
        let services = core.services
        accounts = services.accounts
        people = services.people
        posts = services.posts
        tags = services.tags
        comments = services.comments
        likes = services.likes
        notifications = services.notifications
        search = services.search
        media = services.media
        personalLists = services.personalLists
        instance = services.instance
        actions = core.actions
        self.mapper = mapper
        self.config = config
    }

    /// What the instance entity says of this server.
    struct InstanceSettings: Sendable {
        var baseURL: String
        /// The largest photo and video an upload may be, as on every door.
        var uploads: MultipartUpload.Limits
    }

    /// Runs a core action and says its refusals as Mastodon does: what is not the person's to
    /// change, like what they cannot see, is "Record not found".
    func asMastodon<T>(_ action: () async throws -> T) async throws -> T {
        do {
            return try await action()
        } catch let error as PlazaError where error.status == .notFound || error.status == .forbidden {
            throw MastodonError.notFound
        }
    }

    /// Its routes, under `/api`.
    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        let v1 = routes.group("v1")
        let v2 = routes.group("v2")
        // The router matches `instance/` (Mastodon.py asks for it) too.
        v1.get("instance", use: instanceV1)
        v2.get("instance", use: instanceV2)
        v1.get("instance/rules", use: instanceRules)
        registerAccounts(v1)
        registerStatuses(v1)
        v2.post("media", use: uploadMedia)
        v1.post("media", use: uploadMedia)
        v1.get("media/{id}", use: showMedia)
        v1.put("media/{id}", use: showMedia)
        v1.get("notifications", use: listNotifications)
        v1.get("notifications/{id}", use: notification)
        v2.get("notifications", use: groupedNotifications)
        v1.post("notifications/clear", use: clearNotifications)
        v1.post("notifications/{id}/dismiss", use: dismissNotification)
        v2.get("search", use: searchAll)
        v1.get("markers", use: markers)
        v1.post("markers", use: saveMarkers)
        v1.get("preferences", use: preferences)
        registerFilters(v1: v1, v2: v2)
        registerLists(v1)
        registerInbox(v1: v1, v2: v2)
        registerEmpty(v1: v1)
        return routes
    }

    private func registerAccounts(_ v1: RouterGroup<PlazaContext>) {
        v1.get("accounts/verify_credentials", use: verifyCredentials)
        v1.patch("accounts/update_credentials", use: updateCredentials)
        v1.get("accounts/lookup", use: lookup)
        v1.get("accounts/relationships", use: relationships)
        v1.get("accounts/search", use: searchAccounts)
        v1.get("accounts/{id}", use: account)
        v1.get("accounts/{id}/statuses", use: accountStatuses)
        let changes: [(String, PeopleActions.Change, scope: String)] = [
            ("follow", .follow, "write:follows"), ("unfollow", .unfollow, "write:follows"),
            ("block", .block, "write:blocks"), ("unblock", .unblock, "write:blocks"),
            ("mute", .mute, "write:mutes"), ("unmute", .unmute, "write:mutes"),
        ]
        for (path, change, scope) in changes {
            v1.post(RouterPath("accounts/{id}/\(path)")) { request, context in
                try await relate(change, scope: scope, context)
            }
        }
        registerPersonalLists(v1)
        v1.post("follow_requests/{id}/authorize") { request, context in
            try await answerFollowRequest(true, request, context)
        }
        v1.post("follow_requests/{id}/reject") { request, context in
            try await answerFollowRequest(false, request, context)
        }
    }

    private func registerStatuses(_ v1: RouterGroup<PlazaContext>) {
        v1.get("timelines/home", use: homeTimeline)
        v1.get("timelines/public", use: publicTimeline)
        v1.get("timelines/tag/{tag}", use: tagTimeline)
        v1.get("tags/{tag}", use: showTag)
        v1.post("tags/{tag}/follow") { request, context in try await followTag(true, request, context) }
        v1.post("tags/{tag}/unfollow") { request, context in try await followTag(false, request, context) }
        v1.get("followed_tags", use: followedTags)
        v1.get("trends", use: trendingTags)
        v1.get("trends/tags", use: trendingTags)
        v1.get("trends/statuses", use: trendingStatuses)
        v1.get("trends/links", use: trendingLinks)
        v1.post("statuses", use: createStatus)
        v1.get("statuses/{id}", use: status)
        v1.delete("statuses/{id}", use: deleteStatus)
        v1.put("statuses/{id}", use: editStatus)
        v1.get("statuses/{id}/context", use: context)
        v1.post("statuses/{id}/favourite") { request, context in try await favourite(true, request, context) }
        v1.post("statuses/{id}/unfavourite") { request, context in try await favourite(false, request, context) }
        v1.get("statuses/{id}/favourited_by", use: favouritedBy)
        v1.get("statuses/{id}/reblogged_by", use: rebloggedBy)
        v1.get("statuses/{id}/history", use: statusHistory)
        v1.get("statuses/{id}/source", use: statusSource)
        v1.post("statuses/{id}/reblog") { request, context in try await reblog(true, request, context) }
        v1.post("statuses/{id}/unreblog") { request, context in try await reblog(false, request, context) }
        v1.post("statuses/{id}/pin") { request, context in try await pin(true, request, context) }
        v1.post("statuses/{id}/unpin") { request, context in try await pin(false, request, context) }
        v1.get("polls/{id}", use: poll)
        v1.post("polls/{id}/votes", use: vote)
        v1.post("statuses/{id}/bookmark") { request, context in try await bookmark(true, request, context) }
        v1.post("statuses/{id}/unbookmark") { request, context in try await bookmark(false, request, context) }
    }

    /// Mastodon features Plaza has no counterpart for: valid, empty answers.
    private func registerEmpty(v1: RouterGroup<PlazaContext>) {
        let empty: [(String, String)] = [
            ("custom_emojis", ""),
            ("announcements", ""),
            ("conversations", "read:statuses"), ("scheduled_statuses", "read:statuses"),
            ("endorsements", "read:accounts"), ("featured_tags", "read:accounts"), ("domain_blocks", "read:blocks"),
            ("featured_tags/suggestions", "read:accounts"),
        ]
        for (path, scope) in empty {
            v1.get(RouterPath(path)) { _, context in
                if !scope.isEmpty { _ = try context.mastodonUser(scope) }
                return try MastodonJSON.response([String]())
            }
        }
    }

    // MARK: instance

    struct InstanceV1: Encodable {
        struct URLs: Encodable { var streamingApi: String }
        struct Stats: Encodable {
            var userCount: Int
            var statusCount: Int
            var domainCount = 1
        }
        var uri: String
        var title: String
        var shortDescription: String
        var description: String
        var email: String
        var version: String
        var urls: URLs
        var stats: Stats
        @Nullable var thumbnail: String?
        var languages = ["en"]
        var registrations: Bool
        var approvalRequired = false
        var invitesEnabled = false
        var configuration: Configuration
        @Nullable var contactAccount: Mastodon.Account?
        var rules: [Rule]
    }

    /// A server rule as Mastodon gives it.
    struct Rule: Encodable {
        var id: String
        var text: String
        var hint = ""
        var translations: [String: String] = [:]
    }

    struct Configuration: Encodable {
        struct URLs: Encodable {
            var streaming: String
            @Nullable var status: String?
            @Nullable var about: String?
            @Nullable var privacyPolicy: String?
            @Nullable var termsOfService: String?
        }
        struct Accounts: Encodable {
            var maxFeaturedTags = 0
            var maxPinnedStatuses = 0
        }
        struct Statuses: Encodable {
            /// A reply is a comment, which is shorter than a post: the shorter bound for both.
            var maxCharacters = PostRules.maxCommentLength
            var maxMediaAttachments = PostRules.maxMedia
            var charactersReservedPerUrl = 23
        }
        struct MediaAttachments: Encodable {
            var supportedMimeTypes: [String]
            var imageSizeLimit: Int
            var imageMatrixLimit = 40_000_000
            var videoSizeLimit: Int
            var videoFrameRateLimit = 60
            var videoMatrixLimit = 2_304_000
            var descriptionLimit = 0
        }
        struct Polls: Encodable {
            var maxOptions = PollRules.optionCount.upperBound
            var maxCharactersPerOption = PollRules.maxOptionLength
            var minExpiration = PollRules.expiresInSeconds.lowerBound
            var maxExpiration = PollRules.expiresInSeconds.upperBound
        }
        struct Translation: Encodable { var enabled = false }
        var urls: URLs?
        var accounts = Accounts()
        var statuses = Statuses()
        var mediaAttachments: MediaAttachments
        var polls = Polls()
        var translation = Translation()
    }

    /// Mastodon's version, as clients read it to decide what to use (v2 media, v2 search and filters).
    static let version = "4.3.0 (compatible; Plaza \(PlazaVersion.number))"

    private var streamingURL: String {
        config.baseURL.replacingOccurrences(of: "https://", with: "wss://").replacingOccurrences(
            of: "http://", with: "ws://")
    }

    private func configuration(urls: Bool) -> Configuration {
        var types = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/avif"]
        if config.uploads.maxVideoBytes != nil { types += ["video/mp4", "video/quicktime", "video/webm"] }
        return Configuration(
            urls: urls
                ? .init(streaming: streamingURL, status: nil, about: nil, privacyPolicy: nil, termsOfService: nil)
                : nil,
            mediaAttachments: .init(
                supportedMimeTypes: types, imageSizeLimit: config.uploads.maxFileBytes,
                videoSizeLimit: config.uploads.maxVideoBytes ?? 0))
    }

    @Sendable func instanceV1(_ request: Request, context: PlazaContext) async throws -> Response {
        let (users, statuses) = try await accounts.instanceCounts()
        let about = try await instance.info()
        let host = URLComponents(string: config.baseURL)?.host ?? "localhost"
        let description = about.description.isEmpty ? "A Plaza community." : about.description
        return try MastodonJSON.response(
            InstanceV1(
                uri: host, title: about.name, shortDescription: description, description: description,
                email: about.contact, version: Self.version, urls: .init(streamingApi: streamingURL),
                stats: .init(userCount: users, statusCount: statuses),
                thumbnail: mapper.links.asset("icon-512.png"), registrations: about.registrations != .closed,
                approvalRequired: about.registrations == .approval, invitesEnabled: about.membersMayInvite,
                configuration: configuration(urls: false), contactAccount: nil, rules: Self.rules(about)))
    }

    static func rules(_ about: InstanceInfo) -> [Rule] { about.rules.map { Rule(id: $0.id, text: $0.text) } }

    @Sendable func instanceRules(_ request: Request, context: PlazaContext) async throws -> Response {
        try MastodonJSON.response(Self.rules(try await instance.info()))
    }

    struct InstanceV2: Encodable {
        struct Usage: Encodable {
            struct Users: Encodable { var activeMonth: Int }
            var users: Users
        }
        struct Thumbnail: Encodable {
            var url: String
            var description: String
            @Nullable var blurhash: String?
            var versions: [String: String]
        }
        struct Registrations: Encodable {
            var enabled: Bool
            var approvalRequired = false
            var reasonRequired = false
            @Nullable var minAge: Int?
            @Nullable var message: String?
            @Nullable var url: String?
        }
        struct Contact: Encodable {
            var email: String
            @Nullable var account: Mastodon.Account?
        }
        struct APIVersions: Encodable { var mastodon = 2 }
        struct Icon: Encodable {
            var src: String
            var size: String
        }
        var domain: String
        var title: String
        var version: String
        var sourceUrl = "https://github.com/plaza-social/plaza"
        var description: String
        var usage: Usage
        var thumbnail: Thumbnail
        var icon: [Icon]
        var languages = ["en"]
        var configuration: Configuration
        var registrations: Registrations
        var apiVersions = APIVersions()
        var contact: Contact
        var rules: [Rule]
    }

    @Sendable func instanceV2(_ request: Request, context: PlazaContext) async throws -> Response {
        let (users, _) = try await accounts.instanceCounts()
        let about = try await instance.info()
        let host = URLComponents(string: config.baseURL)?.host ?? "localhost"
        let icon = mapper.links.asset("icon-512.png")
        return try MastodonJSON.response(
            InstanceV2(
                domain: host, title: about.name, version: Self.version,
                description: about.description.isEmpty ? "A Plaza community." : about.description,
                usage: .init(users: .init(activeMonth: users)),
                thumbnail: .init(
                    url: icon, description: "\(about.name)'s icon", blurhash: nil,
                    versions: ["@1x": icon, "@2x": icon]),
                icon: [
                    .init(src: mapper.links.asset("icon-192.png"), size: "192x192"),
                    .init(src: icon, size: "512x512"),
                ],
                configuration: configuration(urls: true),
                registrations: .init(
                    enabled: about.registrations != .closed, approvalRequired: about.registrations == .approval,
                    reasonRequired: false, minAge: nil, message: nil, url: nil),
                contact: .init(email: about.contact, account: nil), rules: Self.rules(about)))
    }

    // MARK: accounts

    func id(_ context: PlazaContext) throws -> Int64 {
        guard let id = Int64(try context.parameters.require("id")), id > 0 else { throw MastodonError.notFound }
        return id
    }

    /// A profile the viewer may see, or Mastodon's 404.
    func profile(_ id: Int64, viewer: Int64?, hiding: Visibility.ProfileHiding = .eitherWay) async throws -> User {
        do {
            return try await people.profile(userID: id, viewer: viewer, hiding: hiding)
        } catch let error as PlazaError where error.status == .notFound {
            throw MastodonError.notFound
        }
    }

    @Sendable func verifyCredentials(_ request: Request, context: PlazaContext) async throws -> Response {
        guard let me = context.identity else { throw MastodonError.unauthorized }
        guard me.allows("read:accounts") || me.allows("profile") else { throw MastodonError.outsideScopes }
        return try MastodonJSON.response(try await credentialAccount(me))
    }

    func credentialAccount(_ me: Identity) async throws -> Mastodon.Account {
        let user = try await people.profile(userID: me.userID, viewer: me.userID)
        let requests = try await people.followRequestCount(to: me.userID)
        return mapper.account(
            user,
            source: .init(
                privacy: "public", sensitive: false, language: nil, note: user.bio, fields: [],
                followRequestsCount: requests, discoverable: true, hideCollections: false, indexable: true))
    }

    /// Changes the profile from a form, JSON, or — as the apps send a new avatar — a multipart
    /// form whose `avatar` file becomes the avatar (an upload like any other). Plaza profiles
    /// have no header picture: a `header` file is a 422, before anything changes. Profile
    /// `fields_attributes` and `source[…]` are not kept (Plaza has a status line instead).
    @Sendable func updateCredentials(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:accounts")
        guard request.headers[.contentType].flatMap(MultipartUpload.boundary(of:)) != nil else {
            try await updateProfile(me, try ProfileChange(try await MastodonParams.read(request, context: context)))
            return try MastodonJSON.response(try await credentialAccount(me))
        }
        var limits = config.uploads
        limits.maxVideoBytes = nil
        try await actions.media.withScratchFile { path in
            let form = try await MultipartUpload.receiveForm(
                request, into: path, limits: limits, fileFields: ["avatar", "header"],
                isTextField: { Self.credentialFields.contains($0) })
            if form.fileFields.contains("header") {
                throw MastodonError.validation("header: Plaza profiles have no header picture")
            }
            var params = try MastodonParams(query: request.uri.query ?? "")
            for (key, value) in form.texts { try params.add(key, value) }
            // Everything is checked, and the avatar made, before anything changes.
            let change = try ProfileChange(params)
            if form.file == "avatar" {
                try await actions.media.setAvatar(of: me.userID, fromFile: path, logger: context.logger)
            }
            try await updateProfile(me, change)
        }
        return try MastodonJSON.response(try await credentialAccount(me))
    }

    /// The text fields of `update_credentials` that Plaza keeps.
    static let credentialFields: Set<String> = ["display_name", "note", "locked"]

    /// The profile's changes a request asks for, checked before anything is written.
    struct ProfileChange {
        var displayName: String?
        var note: String?
        var locked: Bool?

        init(_ params: MastodonParams) throws {
            displayName = try params.string("display_name").map {
                try Validate.displayName($0, field: "display_name", required: true) ?? ""
            }
            note = try params.string("note").map { try Validate.bio($0, field: "note") ?? "" }
            locked = params.bool("locked")
        }
    }

    private func updateProfile(_ me: Identity, _ change: ProfileChange) async throws {
        if change.displayName != nil || change.note != nil {
            try await accounts.updateProfile(
                userID: me.userID, displayName: change.displayName, bio: change.note, status: .keep)
        }
        if let locked = change.locked { try await actions.people.setLocked(me.userID, locked) }
    }

    @Sendable func account(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        return try MastodonJSON.response(mapper.account(try await profile(try id(context), viewer: viewer)))
    }

    @Sendable func lookup(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        var acct = request.uri.queryParameters.get("acct") ?? ""
        if acct.hasPrefix("@") { acct.removeFirst() }
        // `name@this.host` is the same person; another host's is not here.
        if let at = acct.firstIndex(of: "@") {
            let host = URLComponents(string: config.baseURL)?.host ?? ""
            guard acct[acct.index(after: at)...].lowercased() == host.lowercased() else { throw MastodonError.notFound }
            acct = String(acct[..<at])
        }
        guard !acct.isEmpty, acct.count <= 30 else { throw MastodonError.notFound }
        let id: Int64
        do {
            id = try await people.userID(username: acct, viewer: viewer)
        } catch let error as PlazaError where error.status == .notFound {
            throw MastodonError.notFound
        }
        return try MastodonJSON.response(mapper.account(try await profile(id, viewer: viewer)))
    }

    /// The viewer's relationship with `user`, with `note`, the viewer's note on them.
    static func relationship(_ user: User, note: String = "") -> Mastodon.Relationship {
        let viewer = user.viewer
        return Mastodon.Relationship(
            id: user.id, following: viewer?.following ?? false, showingReblogs: viewer?.following ?? false,
            notifying: false, languages: nil, followedBy: viewer?.followedBy ?? false,
            blocking: viewer?.blocking ?? false, blockedBy: false, muting: viewer?.muting ?? false,
            mutingExpiresAt: nil, mutingNotifications: viewer?.muting ?? false, requested: viewer?.requested ?? false,
            requestedBy: false,
            domainBlocking: false, endorsed: false, note: note)
    }

    @Sendable func relationships(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:follows")
        let params = try await MastodonParams.read(request, context: context)
        let ids = params.strings("id").prefix(40).compactMap { Int64($0) }
        // In the order asked; someone hidden by their block is left out.
        let users = Dictionary(
            try await people.profiles(ids: Array(ids), viewer: me.userID, hiding: .theirBlock).map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
        let notes = try await actions.notes.notes(by: me.userID, on: Array(ids))
        return try MastodonJSON.response(
            ids.compactMap { id in users[String(id)].map { Self.relationship($0, note: notes[id] ?? "") } })
    }

    func relate(_ change: PeopleActions.Change, scope: String, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser(scope).userID
        let target = try id(context)
        guard target != me else { throw MastodonError.validation("You cannot do that to yourself") }
        let profile = try await asMastodon { try await actions.people.relate(me, change, target) }
        return try MastodonJSON.response(try await relationship(with: profile, me: me))
    }

    @Sendable func searchAccounts(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        let params = try await MastodonParams.read(request, context: context)
        guard let q = params.string("q"), let text = SearchText(String(q.prefix(200))) else {
            return try MastodonJSON.response([Mastodon.Account]())
        }
        let users = try await search.users(
            text, page: .init(limit: try params.limit(default: 40, max: 80)), viewer: viewer)
        return try MastodonJSON.response(users.items.map { mapper.account($0) })
    }

    func answerFollowRequest(_ approve: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:follows").userID
        let requester = try id(context)
        try await asMastodon { try await actions.people.answerRequest(from: requester, to: me, approve: approve) }
        return try MastodonJSON.response(try await relationship(with: try await profile(requester, viewer: me), me: me))
    }
}
