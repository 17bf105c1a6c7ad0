import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The feeds to subscribe to: `/@{username}.rss|.atom`, `/s/{slug}.rss|.atom` and
/// `/tags/{tag}.rss|.atom`, the newest public posts of a person, an open space or a hashtag. They are read as an anonymous visitor through the
/// feeds' own queries, so `Visibility` decides what is in them as it does on the pages. The web
/// app's routes `@{username}`, `s/{slug}` and `tags/{tag}` capture the suffix too, so those pages hand their
/// names here first (`WebPages`).
struct SyndicationController: Sendable {
    let posts: PostStore
    let people: PeopleStore
    let spaces: SpaceStore
    let instance: InstanceStore
    /// Feeds are read outside the browser: every link in them is absolute.
    let links: PublicLinks

    /// How many posts a feed holds: the newest.
    static let itemCount = 20

    /// The feed of a person named `name` (`ana.rss`); nil when `name` has no feed suffix.
    func person(_ name: String, request: Request) async throws -> Response? {
        guard let (username, format) = SubscriptionFeed.Format.split(name) else { return nil }
        let id = try await people.userID(username: username, viewer: nil)
        let user = try await people.profile(userID: id, viewer: nil)
        let site = try await instance.currentName()
        return try await feed(
            .author(id), title: "Posts by \(user.displayName) (@\(user.username))",
            description: user.bio.isEmpty ? "Public posts by @\(user.username) on \(site)" : user.bio,
            address: links.person(user.username), since: user.createdAt, format, request: request)
    }

    /// The feed of an open space named `name` (`ramen.atom`); nil when `name` has no feed suffix.
    /// A space without feeds (`hasFeeds`) answers 404.
    func space(_ name: String, request: Request) async throws -> Response? {
        guard let (slug, format) = SubscriptionFeed.Format.split(name) else { return nil }
        let space = try await spaces.space(slug: slug, viewer: nil)
        guard Self.hasFeeds(space), let id = Int64(space.id) else { throw PlazaError.notFound("Space") }
        let site = try await instance.currentName()
        return try await feed(
            .space(id), title: "\(space.name) · \(site)",
            description: space.description.isEmpty ? "Public posts in \(space.name) on \(site)" : space.description,
            address: links.space(space.slug), since: space.createdAt, format, request: request)
    }

    /// The feed of the hashtag named `name` (`ramen.rss`); nil when `name` has no feed suffix.
    func tag(_ name: String, request: Request) async throws -> Response? {
        guard let (written, format) = SubscriptionFeed.Format.split(name) else { return nil }
        let tag = try TagActions.tag(named: written)
        let site = try await instance.currentName()
        return try await feed(
            .tag(tag.key), title: "#\(tag.name) · \(site)", description: "Public posts with #\(tag.name) on \(site)",
            address: links.tag(tag.name), since: Timestamp(milliseconds: 0), format, request: request)
    }

    /// Whether `space` has feeds: an open one; a closed or private one's posts are for its members.
    static func hasFeeds(_ space: Space) -> Bool { space.visibility == .open }

    /// The newest posts of `source` an anonymous visitor may read, as a feed whose page is at `address`.
    private func feed(
        _ source: PostStore.FeedQuery.Source, title: String, description: String, address: String, since: Timestamp,
        _ format: SubscriptionFeed.Format, request: Request
    ) async throws -> Response {
        let page = try await posts.feed(.init(source: source, page: PageRequest(limit: Self.itemCount)), viewer: nil)
        let feed = SubscriptionFeed(
            title: title, description: description, page: address, address: address, since: since, posts: page.items,
            links: links)
        return Self.response(feed, format, request: request)
    }

    /// The feed with a strong ETag of its bytes; 304 and no body when `If-None-Match` has it.
    static func response(_ feed: SubscriptionFeed, _ format: SubscriptionFeed.Format, request: Request) -> Response {
        let text = feed.rendered(format)
        let etag = ETag.strong(text.utf8)
        let headers: HTTPFields = [
            .contentType: format.contentType, .eTag: etag,
            // Public posts alone, the same for every reader: any cache may keep a copy a while.
            .cacheControl: "public, max-age=300",
            .xContentTypeOptions: "nosniff",
        ]
        if ETag.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
