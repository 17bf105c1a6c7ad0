import Hummingbird
import PlazaAPI

/// Home, global, per-user and per-space feeds: newest first, keyset cursors, `since`/`until`, `kind`,
/// and for activities `activity=` (a type) and `progress=done|ongoing`.
struct FeedsController: FeatureRoutes {
    let posts: PostStore
    let people: PeopleStore
    let spaces: SpaceStore

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("feed/global", use: global)
        routes.get("users/{username}/posts", use: userPosts)
        routes.get("spaces/{slug}/feed", use: spaceFeed)
        signedIn.get("feed/home", use: home)
        return routes
    }

    private func query(_ source: PostStore.FeedQuery.Source, _ request: Request) throws -> PostStore.FeedQuery {
        let type = request.query("activity")?.trimmingCharacters(in: .whitespaces)
        if let type, type.isEmpty || type.count > 40 {
            throw PlazaError.invalid("activity", "An activity type is 1 to 40 characters.")
        }
        return PostStore.FeedQuery(
            source: source, kind: try request.enumParameter("kind", as: PostKind.self), activityType: type,
            progress: try request.enumParameter("progress", as: PostStore.ActivityProgressFilter.self),
            since: try request.timestampParameter("since"), until: try request.timestampParameter("until"),
            page: try request.pageRequest())
    }

    @Sendable func home(_ request: Request, context: SignedInContext) async throws -> Page<Post> {
        let me = context.user
        return try await posts.feed(query(.home(me.userID), request), viewer: me.userID)
    }

    /// My activity posts, with the feeds' filters (the web app's "My activities").
    func myActivities(_ request: Request, context: SignedInContext) async throws -> Page<Post> {
        let me = context.user
        var query = try query(.author(me.userID), request)
        query.kind = .activity
        return try await posts.feed(query, viewer: me.userID)
    }

    @Sendable func global(_ request: Request, context: PlazaContext) async throws -> Page<Post> {
        try await posts.feed(query(.global, request), viewer: context.viewerID)
    }

    @Sendable func userPosts(_ request: Request, context: PlazaContext) async throws -> Page<Post> {
        let author = try await people.userID(username: context.parameters.string("username"), viewer: context.viewerID)
        let query = try query(.author(author), request)
        return try await posts.feed(query, viewer: context.viewerID)
    }

    @Sendable func spaceFeed(_ request: Request, context: PlazaContext) async throws -> Page<Post> {
        let space = try await spaces.key(slug: context.parameters.string("slug"), viewer: context.viewerID)
        let query = try query(.space(space.id), request)
        // Every post of a closed or private space is for its members: no need to read them.
        guard space.visibility == .open || space.role != nil else { return Page(items: [], nextCursor: nil) }
        return try await posts.feed(query, viewer: context.viewerID)
    }
}
