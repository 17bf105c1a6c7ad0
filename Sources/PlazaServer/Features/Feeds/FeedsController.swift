import Hummingbird
import PlazaAPI

/// Home, global, per-user and per-space feeds: newest first, keyset cursors, `since`/`until`, `kind`.
struct FeedsController {
    let posts: PostStore
    let people: PeopleStore
    let spaces: SpaceStore

    func register(to api: RouterGroup<PlazaContext>) {
        api.get("feed/global", use: global)
        api.get("users/{username}/posts", use: userPosts)
        api.get("spaces/{slug}/feed", use: spaceFeed)
        let signedIn = api.signedIn
        signedIn.get("feed/home", use: home)
    }

    private func query(_ source: PostStore.FeedQuery.Source, _ request: Request) throws -> PostStore.FeedQuery {
        PostStore.FeedQuery(
            source: source, kind: try request.enumParameter("kind", as: PostKind.self),
            since: try request.timestampParameter("since"), until: try request.timestampParameter("until"),
            page: try request.pageRequest())
    }

    @Sendable func home(_ request: Request, context: SignedInContext) async throws -> Page<Post> {
        let me = context.user
        return try await posts.feed(query(.home(me.userID), request), viewer: me.userID)
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
