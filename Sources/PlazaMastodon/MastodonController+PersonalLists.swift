import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

/// A person's lists as Mastodon's apps show them: followers and following, follow requests,
/// blocks, mutes, favourites and bookmarks, each paged by a numeric key (`MastodonPaging.key`).
extension MastodonController {
    func registerPersonalLists(_ v1: RouterGroup<PlazaContext>) {
        v1.get("accounts/{id}/followers") { request, context in try await follows(.followers, request, context) }
        v1.get("accounts/{id}/following") { request, context in try await follows(.following, request, context) }
        v1.get("follow_requests", use: followRequests)
        v1.get("blocks") { request, context in
            try await ownPeople("read:blocks", request, context, list: PersonalListStore.List.blocks)
        }
        v1.get("mutes") { request, context in
            try await ownPeople("read:mutes", request, context, list: PersonalListStore.List.mutes)
        }
        v1.get("favourites", use: favourites)
        v1.get("bookmarks", use: bookmarks)
        v1.get("accounts/{id}/featured_tags", use: featuredTags)
        // `POST /api/v1/reports` is Plaza's own report route too: the door claims the requests
        // that name an `account_id` (`MastodonDoor.claim`) and serves them here.
        v1.post(RouterPath(String(MastodonDoor.reportsPath.dropFirst("/api/v1/".count))), use: report)
    }

    /// A page of `list` as `viewer` sees it, placed by the request's `max_id`, `since_id` or
    /// `min_id` (keys of the list's rows); its rows and the `Link` header over their keys.
    func listPage(_ list: PersonalListStore.List, viewer: Int64?, _ request: Request, _ context: PlazaContext)
        async throws -> (rows: [PersonalListStore.Row], headers: HTTPFields)
    {
        let params = try await MastodonParams.read(request, context: context)
        let paging = try MastodonPaging(params, defaultLimit: 40, maxLimit: 80)
        let lists = personalLists
        func place(_ key: Int64, below: Bool) async throws -> Cursor {
            try await MastodonPaging.cursor(forKey: key, below: below) { try await lists.ids(at: $0, in: list) }
        }
        var window = PersonalListStore.Window(limit: paging.limit)
        if let maxID = paging.maxID { window.before = try await place(maxID, below: true) }
        if let newer = paging.newerThan { window.after = try await place(newer, below: false) }
        let (rows, more) = try await lists.rows(list, window: window, viewer: viewer)
        let headers = MastodonPaging.link(
            request, baseURL: config.baseURL, ids: rows.map { String(MastodonPaging.key(time: $0.time, id: $0.id)) },
            hasMore: more)
        return (rows, headers)
    }

    /// The accounts of a page of people's rows, in the rows' order.
    func accounts(_ rows: [PersonalListStore.Row], viewer: Int64?, hiding: Visibility.ProfileHiding = .eitherWay)
        async throws -> [Mastodon.Account]
    {
        let users = Dictionary(
            try await people.profiles(ids: rows.map(\.item), viewer: viewer, hiding: hiding).map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
        return rows.compactMap { users[String($0.item)].map { mapper.account($0) } }
    }

    /// The statuses of a page of posts' rows, in the rows' order.
    func statuses(_ rows: [PersonalListStore.Row], viewer: Int64) async throws -> [Mastodon.Status] {
        let found = try await posts.posts(ids: rows.map(\.item), viewer: viewer)
        return try await withMentions(rows.compactMap { found[$0.item].map(mapper.status) }, viewer: viewer)
    }

    func follows(_ direction: PeopleStore.Direction, _ request: Request, _ context: PlazaContext) async throws
        -> Response
    {
        let viewer = try context.mastodonViewer("read:accounts")
        let target = Int64(try await profile(try id(context), viewer: viewer).id) ?? 0
        let list: PersonalListStore.List = direction == .followers ? .followers(target) : .following(target)
        let (rows, headers) = try await listPage(list, viewer: viewer, request, context)
        return try MastodonJSON.response(try await accounts(rows, viewer: viewer), headers: headers)
    }

    @Sendable func followRequests(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:follows").userID
        let (rows, headers) = try await listPage(.followRequests(me), viewer: me, request, context)
        return try MastodonJSON.response(try await accounts(rows, viewer: me), headers: headers)
    }

    /// The people I block or mute, listed until I undo it (unless they block me).
    func ownPeople(
        _ scope: String, _ request: Request, _ context: PlazaContext, list: (Int64) -> PersonalListStore.List
    ) async throws -> Response {
        let me = try context.mastodonUser(scope).userID
        let (rows, headers) = try await listPage(list(me), viewer: me, request, context)
        return try MastodonJSON.response(try await accounts(rows, viewer: me, hiding: .theirBlock), headers: headers)
    }

    /// The posts I liked that I may still read, newest like first.
    @Sendable func favourites(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:favourites").userID
        let (rows, headers) = try await listPage(.likes(me), viewer: me, request, context)
        return try MastodonJSON.response(try await statuses(rows, viewer: me), headers: headers)
    }

    /// The posts in my Bookmarks collection that I may still read, newest save first.
    @Sendable func bookmarks(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:bookmarks").userID
        guard let collection = try await actions.collections.bookmarksCollection(of: me) else {
            return try MastodonJSON.response([Mastodon.Status]())
        }
        let (rows, headers) = try await listPage(.saves(collection: collection), viewer: me, request, context)
        return try MastodonJSON.response(try await statuses(rows, viewer: me), headers: headers)
    }

    /// Plaza has no featured tags: none, for an account the viewer may see.
    @Sendable func featuredTags(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        _ = try await profile(try id(context), viewer: viewer)
        return try MastodonJSON.response([Mastodon.Tag]())
    }
}
