import Hummingbird
import PlazaAPI

/// Hashtags: a tag's public posts, following tags, and the composer's suggestions.
struct TagsController: FeatureRoutes {
    let actions: TagActions
    let posts: PostStore
    var tags: TagStore { actions.tags }
    var trends: Trends { tags.trends }

    /// The longest prefix the suggestions take.
    static let maxPrefixLength = 100

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("hashtags", use: suggest)
        routes.get("hashtags/{tag}", use: get)
        routes.get("hashtags/{tag}/posts", use: tagPosts)
        signedIn.put("hashtags/{tag}/follow", use: follow)
        signedIn.delete("hashtags/{tag}/follow", use: unfollow)
        signedIn.get("me/followed-hashtags", use: followed)
        routes.get("trending/hashtags", use: trending)
        routes.get("trending/posts") { request, context in
            Page(
                items: try await posts.trending(limit: try Self.limit(request), viewer: context.viewerID),
                nextCursor: nil)
        }
        routes.get("trending/links") { request, context in
            Page(items: try await trends.links(limit: try Self.limit(request)), nextCursor: nil)
        }
        signedIn.put("admin/hashtags/{tag}/trendable") { request, context in
            try await trends.setTrendable(try tag(context), true, by: context.user.userID)
            return HTTPResponse.Status.noContent
        }
        signedIn.delete("admin/hashtags/{tag}/trendable") { request, context in
            try await trends.setTrendable(try tag(context), false, by: context.user.userID)
            return HTTPResponse.Status.noContent
        }
        return routes
    }

    private func tag(_ context: some RequestContext) throws -> Hashtag {
        try TagActions.tag(named: try context.parameters.require("tag"))
    }

    @Sendable func get(_ request: Request, context: PlazaContext) async throws -> HashtagSummary {
        try await tags.summary(try tag(context), viewer: context.viewerID)
    }

    /// Public posts with the tag, newest first (the feeds' filters and cursors).
    @Sendable func tagPosts(_ request: Request, context: PlazaContext) async throws -> Page<Post> {
        let tag = try tag(context)
        let query = PostStore.FeedQuery(
            source: .tag(tag.key), kind: try request.enumParameter("kind", as: PostKind.self),
            since: try request.timestampParameter("since"), until: try request.timestampParameter("until"),
            page: try request.pageRequest())
        return try await posts.feed(query, viewer: context.viewerID)
    }

    @Sendable func follow(_ request: Request, context: SignedInContext) async throws -> HTTPResponse.Status {
        _ = try await actions.follow(try context.parameters.require("tag"), by: context.user.userID, true)
        return .noContent
    }

    @Sendable func unfollow(_ request: Request, context: SignedInContext) async throws -> HTTPResponse.Status {
        _ = try await actions.follow(try context.parameters.require("tag"), by: context.user.userID, false)
        return .noContent
    }

    @Sendable func followed(_ request: Request, context: SignedInContext) async throws -> Page<HashtagSummary> {
        Page(items: try await tags.followed(by: context.user.userID), nextCursor: nil)
    }

    /// A trend list's length: `limit`, else 10.
    static func limit(_ request: Request) throws -> Int {
        request.query("limit") == nil ? 10 : try request.pageRequest().limit
    }

    /// The tags the most people used lately.
    @Sendable func trending(_ request: Request, context: PlazaContext) async throws -> Page<HashtagSummary> {
        Page(items: try await trends.tags(limit: try Self.limit(request), viewer: context.viewerID), nextCursor: nil)
    }

    /// Tags that start as `q` does (`#` left out or not), for the composer.
    @Sendable func suggest(_ request: Request, context: PlazaContext) async throws -> Page<HashtagSummary> {
        var prefix = request.query("q") ?? ""
        if prefix.hasPrefix("#") { prefix.removeFirst() }
        guard prefix.count <= Self.maxPrefixLength else {
            throw PlazaError.invalid("q", "A prefix is at most \(Self.maxPrefixLength) characters.")
        }
        let limit = request.query("limit") == nil ? 10 : try request.pageRequest().limit
        return Page(items: try await tags.complete(prefix, viewer: context.viewerID, limit: limit), nextCursor: nil)
    }
}
