import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The pages people read: feeds, spaces, posts, profiles, collections, search, history,
/// notifications and settings. Each calls the API handler of the same data with its own
/// request, so query parameters (`cursor`, `kind`, `q`, `sort` …) mean the same on both.
struct WebPages: FeatureRoutes {
    let web: WebController
    var api: WebController.APIControllers { web.api }
    var stores: WebController.Stores { web.stores }

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("/", use: home)
        routes.get("explore", use: explore)
        routes.get("spaces", use: spaces)
        routes.get("spaces/last", use: lastSpace)
        routes.get("s/{slug}", use: space)
        routes.get("p/{id}", use: post)
        routes.get("p/{id}/likes", use: likers)
        routes.get("p/{id}/history", use: postHistory)
        routes.get("p/{id}/comments", use: comments)
        routes.get("fragments/post/{id}", use: postFragment)
        routes.get("u/{username}", use: profile)
        routes.get("u/{username}/followers", use: followers)
        routes.get("u/{username}/following", use: following)
        routes.get("u/{username}/friends", use: friends)
        // The same pages at the addresses Mastodon clients and the API hand out (`PublicLinks`):
        // the sub-pages before `{id}`, which would match them too.
        routes.get("@{username}", use: personPage)
        routes.get("@{username}/followers", use: followers)
        routes.get("@{username}/following", use: following)
        routes.get("@{username}/friends", use: friends)
        routes.get("@{username}/{id}", use: post)
        routes.get("posts/{id}", use: oldPostLink)
        routes.get("search", use: search)
        routes.get("tags/{tag}", use: tag)
        signedIn.get("compose", use: compose)
        signedIn.get("p/{id}/edit", use: edit)
        signedIn.get("collections", use: collections)
        signedIn.get("collections/{id}", use: collection)
        signedIn.get("history", use: history)
        signedIn.get("activities", use: activities)
        signedIn.get("recommended", use: recommended)
        signedIn.get("notifications", use: notifications)
        signedIn.get("follow-requests", use: followRequests)
        signedIn.get("settings", use: settings)
        signedIn.get("s/{slug}/manage", use: manageSpace)
        signedIn.get("join/{code}", use: invitation)
        return routes
    }

    /// The same page with `cursor` set: the link to the next page.
    static func next(_ request: Request, cursor: String?) -> String? {
        guard let cursor else { return nil }
        var items = request.uri.queryParameters.filter { $0.key != "cursor" && $0.key != "fragment" }.map {
            "\(PublicLinks.queryValue(String($0.key)))=\(PublicLinks.queryValue(String($0.value)))"
        }
        items.append("cursor=\(cursor)")
        return request.uri.path + "?" + items.joined(separator: "&")
    }

    /// `?fragment=1`: only the list part of the page, for infinite scroll and live updates.
    static func wantsFragment(_ request: Request) -> Bool { request.uri.queryParameters.get("fragment") != nil }

    /// A page of posts as cards, with the link to the next page.
    static func postList(_ page: Page<Post>, request: Request, context: PlazaContext, t: Localizer) -> PostList {
        PostList(
            posts: page.items.map { PostView($0, viewer: context.viewerID, t: t) },
            next: next(request, cursor: page.nextCursor))
    }

    @Sendable func home(_ request: Request, context: PlazaContext) async throws -> Response {
        guard context.identity != nil else { return try await landing(request, context: context) }
        let t = web.localizer(context)
        let signedIn = try SignedInContext(context: context)
        let page = try await api.feeds.home(request, context: signedIn)
        let list = Self.postList(page, request: request, context: context, t: t)
        if Self.wantsFragment(request) { return web.fragment("post-list", list, context: context) }
        var body = FeedPage(heading: t("Home"), live: "home", list)
        // A new person's home: whom to follow, and what is new everywhere until theirs fills.
        if page.items.count < 3, request.uri.queryParameters.get("cursor") == nil {
            let suggestions = try await api.people.suggest(request, context: signedIn)
            let newest = try await stores.posts.feed(
                .init(source: .global, page: PageRequest(limit: 10)), viewer: context.viewerID
            ).items
                .filter { post in !page.items.contains { $0.id == post.id } }
            body.welcome = WelcomeView(
                suggestions, newest: newest.map { PostView($0, viewer: context.viewerID, t: t) },
                viewer: context.viewerID, t: t)
        } else {
            body.side = try await side(request, context: context, photos: true, t: t)
        }
        return try await web.page("feed", title: t("Home"), nav: .home, body, request: request, context: context)
    }

    /// `/` for a visitor: what Plaza is, the newest posts, photos and spaces.
    func landing(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        let posts = try await stores.posts.feed(.init(source: .global, page: PageRequest(limit: 10)), viewer: nil)
        let photos = try await newPhotos(viewer: nil, t: t)
        let spaces = try await stores.spaces.list(.init(page: PageRequest(limit: 5)), viewer: nil).items
        let body = LandingPage(
            posts: posts.items.map { PostView($0, viewer: nil, t: t) },
            communitySpaces: spaces.map { SpaceView($0, t: t) }, hasCommunitySpaces: !spaces.isEmpty, photos: photos,
            hasPhotos: !photos.isEmpty)
        return try await web.page("landing", title: t("Welcome"), body, request: request, context: context)
    }

    /// The column beside a feed: for a signed-in person whom to follow and which spaces to
    /// join (their suggestions, step 15), for a visitor the newest spaces; and the newest photos.
    func side(_ request: Request, context: PlazaContext, photos: Bool, t: Localizer) async throws -> SideView {
        let viewer = context.viewerID
        var people: [UserView] = []
        var spaces: [Space]
        if context.identity != nil {
            let suggestions = try await api.people.suggest(request, context: try SignedInContext(context: context))
            people = suggestions.people.prefix(3).map { UserView($0, viewer: viewer, t: t) }
            spaces = Array(suggestions.spaces.prefix(3))
        } else {
            spaces = try await stores.spaces.list(.init(page: PageRequest(limit: 4)), viewer: nil).items
        }
        var side = SideView(
            people: people, spaces: spaces.map { SpaceView($0, t: t) },
            photos: photos ? try await newPhotos(viewer: viewer, t: t) : [])
        side.trending = try await api.tags.trends.tags(limit: 8, viewer: viewer)
        side.hasTrending = !side.trending.isEmpty
        return side
    }

    /// The six newest photo and video posts on Explore, as the viewer may see them.
    private func newPhotos(viewer: Int64?, t: Localizer) async throws -> [PostView] {
        try await stores.posts.feed(.init(source: .global, kind: .photo, page: PageRequest(limit: 6)), viewer: viewer)
            .items.map { PostView($0, viewer: viewer, t: t) }
    }

    @Sendable func explore(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        let page = try await api.feeds.global(request, context: context)
        let list = Self.postList(page, request: request, context: context, t: t)
        // `?kind=photo`: the photos and videos alone, as a grid (the meme feed's explore).
        let photos = request.uri.queryParameters.get("kind") == PostKind.photo.rawValue
        if Self.wantsFragment(request) {
            return web.fragment(photos ? "photo-tiles" : "post-list", list, context: context)
        }
        var body = FeedPage(
            heading: photos ? t("Photos") : t("Everyone"), live: "global", list, tabs: request.uri.path == "/explore",
            photos: photos)
        body.side = try await side(request, context: context, photos: !photos, t: t)
        return try await web.page(
            "feed", title: t("Explore"), nav: .explore, body, request: request, context: context)
    }

    /// A hashtag's public posts, newest first, with its last week's use and a button to follow it.
    @Sendable func tag(_ request: Request, context: PlazaContext) async throws -> Response {
        if let feed = try await web.syndication.tag(context.parameters.string("tag"), request: request) {
            return feed
        }
        let t = web.localizer(context)
        let tag = try TagActions.tag(named: try context.parameters.require("tag"))
        let page = try await api.tags.tagPosts(request, context: context)
        let list = Self.postList(page, request: request, context: context, t: t)
        if Self.wantsFragment(request) { return web.fragment("post-list", list, context: context) }
        let summary = try await api.tags.tags.summary(tag, viewer: context.viewerID)
        let posts = try await api.tags.tags.history(of: tag).reduce(0) { $0 + $1.posts }
        let body = TagPage(
            tag: summary, usage: t.plural(posts, one: "{count} post this week", other: "{count} posts this week"),
            followLabel: summary.following ? t("Unfollow") : t("Follow"), list)
        return try await web.page(
            "tag", title: "#" + summary.name, nav: .explore, body, request: request, context: context,
            alternates: Layout.Alternate.feeds(PublicLinks.paths.tag(summary.name), of: "#" + summary.name, t: t))
    }

    @Sendable func spaces(_ request: Request, context: PlazaContext) async throws -> Response {
        let page = try await api.spaces.list(request, context: context)
        let t = web.localizer(context)
        let body = SpacesPage(
            spaces: page.items.map { SpaceView($0, t: t) }, next: Self.next(request, cursor: page.nextCursor),
            q: request.uri.queryParameters.get("q") ?? "", searched: request.uri.queryParameters.get("q")?.nonEmpty)
        return try await web.page("spaces", title: t("Spaces"), nav: .spaces, body, request: request, context: context)
    }

    /// Reopens the space the signed-in person last opened (their `lastSpace` preference).
    @Sendable func lastSpace(_ request: Request, context: PlazaContext) async throws -> Response {
        guard let me = context.identity else { return WebController.redirect(to: "/spaces") }
        let preferences = try await stores.accounts.me(userID: me.userID).preferences
        return WebController.redirect(to: await web.lastSpacePath(preferences, viewer: me.userID) ?? "/spaces")
    }

    /// `/s/{slug}`, or the space's feed at `/s/{slug}.rss|.atom` (the route's capture takes the suffix too).
    @Sendable func space(_ request: Request, context: PlazaContext) async throws -> Response {
        if let feed = try await web.syndication.space(context.parameters.string("slug"), request: request) {
            return feed
        }
        let t = web.localizer(context)
        let space = try await api.spaces.get(request, context: context)
        let page = try await api.feeds.spaceFeed(request, context: context)
        let list = Self.postList(page, request: request, context: context, t: t)
        if Self.wantsFragment(request) { return web.fragment("post-list", list, context: context) }
        var body = SpacePage(space, list, t: t)
        if request.uri.queryParameters.get("cursor") == nil {
            body.pinned = PinnedView(
                try await web.actions.pins.spacePins(slug: space.slug, viewer: context.viewerID),
                viewer: context.viewerID, t: t)
        }
        let feeds =
            SyndicationController.hasFeeds(space)
            ? Layout.Alternate.feeds(PublicLinks.paths.space(space.slug), of: space.name, t: t) : []
        return try await web.page(
            "space", title: space.name, nav: .spaces, body, request: request, context: context, alternates: feeds)
    }

    @Sendable func compose(_ request: Request, context: SignedInContext) async throws -> Response {
        let kind = request.uri.queryParameters.get("kind").flatMap(PostKind.init(rawValue:)) ?? .text
        let t = web.localizer(context.base)
        let body = ComposePage(kind: kind, space: request.uri.queryParameters.get("space") ?? "", t: t)
        return try await web.page(
            "compose", title: t("New post"), nav: .compose, body, request: request, context: context.base)
    }

    @Sendable func post(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        let post = try await api.posts.get(request, context: context)
        try Self.expectAuthor(of: post, context: context)
        let comments = try await api.posts.listComments(request, context: context)
        var mine: [SavedCollection] = []
        if let me = context.identity {
            mine = try await stores.collections.list(owner: me.userID, page: .init(limit: 100)).items
        }
        let last = comments.items.last
        let after =
            last.flatMap { c in Int64(c.id).map { Cursor(time: c.createdAt.milliseconds, id: $0).encoded } } ?? ""
        // Only people signed in report, citing the rules.
        let rules = context.viewerID == nil ? [] : try await api.accounts.instance.info().rules
        let body = PostPage(
            post: PostView(post, viewer: context.viewerID, t: t),
            comments: comments.items.map {
                CommentView($0, viewer: context.viewerID, postAuthor: post.author.id, t: t)
            },
            moreComments: Self.next(request, cursor: comments.nextCursor), after: after, myCollections: mine,
            hasCollections: !mine.isEmpty,
            reportPost: ReportFormView.post(post, viewer: context.viewerID, rules: rules, t: t),
            reportComments: context.viewerID == nil ? nil : ReportFormView(.comment, id: "", rules: rules, t: t),
            savePostId: post.id,
            // Without a tile server a lone pin on a blank map says nothing the place card does not.
            map: web.map.tiles == nil ? nil : MapView(post: post, settings: web.map, t: t))
        let title = post.title ?? t("Post by {name}", ["name": post.author.displayName])
        return try await web.page(
            "post", title: title, body, request: request, context: context,
            frameSources: post.link?.embedURL == nil ? [] : VideoEmbed.origins)
    }

    /// `/posts/{id}`, where Mastodon entities pointed before the post pages had that address: on
    /// to the post's page, which decides who may read it.
    @Sendable func oldPostLink(_ request: Request, context: PlazaContext) throws -> Response {
        let id = try context.parameters.id("id", "Post")
        return Response(status: .movedPermanently, headers: [.location: PublicLinks.paths.postPage(String(id))])
    }

    /// `/@{username}/{id}` names the post's author: under anyone else's name the page does not
    /// exist (404, as Mastodon answers a local status under another account).
    static func expectAuthor(of post: Post, context: PlazaContext) throws {
        guard let username = context.parameters.get("username") else { return }
        guard username.lowercased() == post.author.username.lowercased() else { throw PlazaError.notFound("Post") }
    }

    @Sendable func edit(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let post = try await api.posts.get(request, context: context.base)
        guard post.author.id == String(me.userID) else {
            throw PlazaError(.forbidden, "forbidden", "Only the author can edit this post.")
        }
        let t = web.localizer(context.base)
        let body = EditPage(post: PostView(post, viewer: me.userID, t: t))
        return try await web.page("edit", title: t("Edit post"), body, request: request, context: context.base)
    }

    @Sendable func likers(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let page = try await api.posts.likers(request, context: context)
        let t = web.localizer(context)
        return try await people(
            page, heading: t("Liked by"), back: PublicLinks.paths.postPage(post.id), request: request, context: context)
    }

    /// A post's versions, newest first (the card's "edited" links here).
    @Sendable func postHistory(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let versions = try await api.posts.history(request, context: context).items
        let t = web.localizer(context)
        let body = PostHistoryPage(
            back: PublicLinks.paths.postPage(post.id),
            versions: versions.enumerated().map { index, version in
                PostHistoryPage.Version(
                    version, t: t, current: index == 0, first: index == versions.count - 1 && versions.count > 1)
            })
        return try await web.page("post-history", title: t("Edit history"), body, request: request, context: context)
    }

    /// Comments after `cursor`, as list items: what the post page appends when new ones arrive.
    @Sendable func comments(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let page = try await api.posts.listComments(request, context: context)
        let t = web.localizer(context)
        let items = page.items.map { CommentView($0, viewer: context.viewerID, postAuthor: post.author.id, t: t) }
        var response = web.fragment("comment-list", CommentList(comments: items), context: context)
        if let last = page.items.last, let id = Int64(last.id) {
            response.headers[HTTPField.Name("X-Next-After")!] =
                Cursor(time: last.createdAt.milliseconds, id: id).encoded
        }
        return response
    }

    @Sendable func postFragment(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let card = PostView(post, viewer: context.viewerID, t: web.localizer(context))
        return web.fragment("post-list", PostList(posts: [card], next: nil), context: context)
    }

    /// `/@{username}`, or the person's feed at `/@{username}.rss|.atom` (the route's capture takes the suffix too).
    @Sendable func personPage(_ request: Request, context: PlazaContext) async throws -> Response {
        if let feed = try await web.syndication.person(context.parameters.string("username"), request: request) {
            return feed
        }
        return try await profile(request, context: context)
    }

    @Sendable func profile(_ request: Request, context: PlazaContext) async throws -> Response {
        let user = try await api.people.profile(request, context: context)
        let posts = try await api.feeds.userPosts(request, context: context)
        let heatmap = try await api.people.activity(request, context: context)
        let t = web.localizer(context)
        let list = Self.postList(posts, request: request, context: context, t: t)
        let grid = request.uri.queryParameters.get("kind") == PostKind.photo.rawValue
        if Self.wantsFragment(request) {
            return web.fragment(grid ? "photo-tiles" : "post-list", list, context: context)
        }
        // Someone who tracks no activity shows none; one's own card stays, to fill as one posts.
        let own = user.id == context.viewerID.map(String.init)
        let tracks = heatmap.days.contains { $0.posted + $0.completed + $0.unfinished > 0 }
        var body = ProfilePage(
            user: UserView(user, viewer: context.viewerID, t: t),
            heatmap: own || tracks ? HeatmapView(heatmap, t: t) : nil,
            grid: grid, list,
            reportUser: context.viewerID == nil || own
                ? nil : ReportFormView(.user, id: user.id, rules: try await api.accounts.instance.info().rules, t: t))
        if !grid, request.uri.queryParameters.get("cursor") == nil {
            body.pinned = PinnedView(
                try await web.actions.pins.profilePins(username: user.username, viewer: context.viewerID),
                viewer: context.viewerID, t: t)
        }
        let nav: Layout.Nav? = own ? .profile : nil
        let title = "\(user.displayName) (@\(user.username))"
        return try await web.page(
            "profile", title: title, nav: nav, body, request: request, context: context,
            alternates: Layout.Alternate.feeds(PublicLinks.paths.person(user.username), of: title, t: t))
    }

    @Sendable func followers(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await profileList(request, context: context, api.people.followers) {
            t("People following {name}", ["name": $0])
        }
    }

    @Sendable func following(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await profileList(request, context: context, api.people.following) {
            t("{name} follows", ["name": $0])
        }
    }

    @Sendable func friends(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        return try await profileList(request, context: context, api.people.friends) {
            t("Friends of {name}", ["name": $0])
        }
    }

    /// A list of people under a profile (`list`, the API's handler), headed by `heading` of the
    /// profile's display name.
    private func profileList(
        _ request: Request, context: PlazaContext,
        _ list: (Request, PlazaContext) async throws -> Page<User>, heading: (String) -> String
    ) async throws -> Response {
        let user = try await api.people.profile(request, context: context)
        let page = try await list(request, context)
        return try await people(
            page, heading: heading(user.displayName), back: PublicLinks.paths.profilePage(user.username),
            request: request, context: context)
    }

    func people(_ page: Page<User>, heading: String, back: String, request: Request, context: PlazaContext) async throws
        -> Response
    {
        let t = web.localizer(context)
        let body = PeoplePage(
            heading: heading, back: back, users: page.items.map { UserView($0, viewer: context.viewerID, t: t) },
            next: Self.next(request, cursor: page.nextCursor))
        return try await web.page("people", title: heading, body, request: request, context: context)
    }
}
