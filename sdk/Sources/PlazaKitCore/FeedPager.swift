import Foundation
import PlazaAPI

/// One feed, page by page: older posts with `loadMore()` (keyset cursor), newer ones with
/// `refresh()` (`since`), realtime events with `apply(_:)`. Posts are kept newest first and
/// never twice. With a cache directory the feed is saved as a Codable file, so an app opens
/// on what it showed last time (`restore()`) before the network answers.
public actor FeedPager {
    public let client: PlazaClient
    public let source: FeedSource
    public let kind: PostKind?
    public let pageSize: Int
    /// Newest first, each post once.
    public private(set) var posts: [Post] = []
    /// True once the oldest post of the feed has been loaded.
    public private(set) var reachedEnd = false
    /// The person's keyword filters for this feed (`useFilters(_:)`): the server applies them to
    /// every page, and takes hidden posts out of streams, but a stream's post carries no warning
    /// and a cache may predate a filter, so this pager applies them to those too.
    public private(set) var filters: KeywordFilters?
    private var nextCursor: String?
    private var loadedFirstPage = false
    /// The `ETag` of the newest page as last loaded, for `revalidate()`.
    private var firstPageTag: String?
    /// The queued writes whose landing this feed took in (`apply(_:)`).
    private var appliedWrites: Set<String> = []
    private let cache: DiskCache?
    /// At most this many posts are written to the disk cache (the newest).
    static let cachedPosts = 200
    /// A refresh that finds more new posts than this starts the feed over instead of growing it.
    static let maxRefreshPages = 10

    public init(
        client: PlazaClient, source: FeedSource, kind: PostKind? = nil, pageSize: Int = 20, cacheDirectory: URL? = nil
    ) {
        self.client = client
        self.source = source
        self.kind = kind
        self.pageSize = pageSize
        self.cache = cacheDirectory.map { DiskCache(directory: $0, kind: "feed", name: Self.cacheName(source, kind)) }
    }

    static func cacheName(_ source: FeedSource, _ kind: PostKind?) -> String {
        let name: String
        switch source {
        case .home: name = "home"
        case .global: name = "global"
        case .user(let username): name = "user-\(username.lowercased())"
        case .space(let slug): name = "space-\(slug.lowercased())"
        case .tag(let tag): name = "tag-\(TextFolding.fold(tag))"
        }
        return name + (kind.map { "-\($0.rawValue)" } ?? "")
    }

    struct Snapshot: Codable {
        var posts: [Post]
        var nextCursor: String?
        var reachedEnd: Bool
        var firstPageTag: String?
    }

    /// The cached posts from disk (empty without a cache or on a first launch).
    @discardableResult
    public func restore() -> [Post] {
        guard let snapshot = cache?.load(Snapshot.self) else { return [] }
        posts = filtered(snapshot.posts)
        nextCursor = snapshot.nextCursor
        reachedEnd = snapshot.reachedEnd
        firstPageTag = snapshot.firstPageTag
        loadedFirstPage = !posts.isEmpty
        return posts
    }

    private func save() {
        guard let cache else { return }
        let kept = Array(posts.prefix(Self.cachedPosts))
        // A cut list cannot continue from the server's cursor: it restarts from its oldest kept post on the next load.
        let snapshot = Snapshot(
            posts: kept, nextCursor: kept.count == posts.count ? nextCursor : nil,
            reachedEnd: kept.count == posts.count && reachedEnd, firstPageTag: firstPageTag)
        cache.store(snapshot)
    }

    /// Loads the newest page, replacing what was there.
    @discardableResult
    public func reload() async throws -> [Post] {
        switch try await client.revalidateFeed(
            source, filter: FeedFilter(kind: kind), page: PageOptions(limit: pageSize), etag: nil)
        {
        case .modified(let page, let tag): replace(with: page, tag: tag)
        case .notModified: break
        }
        return posts
    }

    private func replace(with page: Page<Post>, tag: String?) {
        posts = []
        merge(filtered(page.items), newer: false)
        nextCursor = page.nextCursor
        reachedEnd = page.nextCursor == nil
        firstPageTag = tag
        loadedFirstPage = true
        save()
    }

    /// Checks the newest page with the server, cheaply: on launch and when the network comes back.
    /// Unchanged (a 304, no body): false, nothing to do. Changed: its posts replace theirs (counts,
    /// edits), posts newer than those shown come on top, and those it no longer has (deleted)
    /// go; when more are new than a page holds, the feed starts over from that page. True.
    @discardableResult
    public func revalidate() async throws -> Bool {
        guard loadedFirstPage else {
            try await reload()
            return true
        }
        let answer = try await client.revalidateFeed(
            source, filter: FeedFilter(kind: kind), page: PageOptions(limit: pageSize), etag: firstPageTag)
        guard case .modified(let page, let tag) = answer else { return false }
        let fresh = filtered(page.items)
        // No gap: the page reaches down to the newest post shown (or is the whole feed).
        guard let newest = posts.first, let oldestFresh = page.items.last,
            !Self.newestFirst(oldestFresh, newest) || page.nextCursor == nil
        else {
            replace(with: page, tag: tag)
            return true
        }
        // The page's span: everything shown from its oldest post up is what the page now says.
        let older = posts.filter { Self.newestFirst(oldestFresh, $0) }
        posts = page.nextCursor == nil ? fresh : fresh + older
        if page.nextCursor == nil { reachedEnd = true }
        firstPageTag = tag
        save()
        return true
    }

    /// Loads the next older page and returns its posts (empty at the end of the feed).
    @discardableResult
    public func loadMore() async throws -> [Post] {
        guard loadedFirstPage else { return try await reload() }
        guard !reachedEnd else { return [] }
        var filter = FeedFilter(kind: kind)
        var page = PageOptions(limit: pageSize, cursor: nextCursor)
        if nextCursor == nil, let oldest = posts.last {
            // Restored from a cut cache: continue below the oldest post kept.
            filter.until = oldest.createdAt
            page.cursor = nil
        }
        let result = try await client.feed(source, filter: filter, page: page)
        let added = merge(result.items, newer: false)
        nextCursor = result.nextCursor
        reachedEnd = result.nextCursor == nil
        save()
        return added
    }

    /// Fetches every post newer than the newest one shown (`since`), all pages of them, and
    /// returns them newest first.
    @discardableResult
    public func refresh() async throws -> [Post] {
        guard let newest = posts.first else { return try await reload() }
        // A millisecond earlier than the newest post, so one written in the same millisecond is not
        // missed (ids de-duplicate).
        let since = Timestamp(milliseconds: newest.createdAt.milliseconds - 1)
        var fresh: [Post] = []
        var cursor: String?
        for _ in 0..<Self.maxRefreshPages {
            let page = try await client.feed(
                source, filter: FeedFilter(kind: kind, since: since), page: PageOptions(limit: 100, cursor: cursor))
            fresh += page.items
            cursor = page.nextCursor
            if cursor == nil { break }
        }
        if cursor != nil { return try await reload() }  // too far behind: start over rather than leave a gap
        let added = merge(fresh, newer: true)
        save()
        return added
    }

    /// Applies a realtime event: new posts at the top (if this feed shows them), edits in place, deletions out.
    public func apply(_ event: PlazaEvent) {
        switch event {
        case .postCreated(let post):
            guard shows(post), let post = filtered([post]).first else { return }
            merge([post], newer: true)
        case .postUpdated(let post):
            guard let index = posts.firstIndex(where: { $0.id == post.id }) else { return }
            // An edit may bring in a hidden phrase, or take out a warned one.
            if let kept = filtered([post]).first { posts[index] = kept } else { posts.remove(at: index) }
        case .postDeleted(let id):
            posts.removeAll { $0.id == id }
        case .likeChanged(let change):
            if let index = posts.firstIndex(where: { $0.id == change.postId }) {
                posts[index].counts.likes = change.likes
            }
        default:
            return
        }
        save()
    }

    /// The feed as the person sees it with `queue`'s writes: their pending posts that this feed
    /// shows on top (`author`: the signed-in person), and pending likes, boosts, saves and
    /// comments counted in.
    public func displayed(with queue: WriteQueue, author: UserSummary) async -> [Post] {
        let pending = await queue.pendingPosts(for: source, author: author).filter { kind == nil || $0.kind == kind }
        return pending + (await queue.applyPending(to: posts))
    }

    /// Applies what became of a queued write: a post that landed comes in with its id (if this
    /// feed shows it), a like, boost or comment that landed is counted in the post.
    public func apply(_ event: WriteEvent) {
        // Each write once, however often its event is applied (a stream and a sync's result).
        guard case .sent(let write, let outcome) = event, appliedWrites.insert(write.id).inserted else { return }
        switch (write.intent, outcome) {
        case (.createPost, .post(let post)):
            guard shows(post), let post = filtered([post]).first else { return }
            merge([post], newer: true)
        case (.boost, .post(let post)):
            guard let index = posts.firstIndex(where: { $0.id == post.id }) else { return }
            posts[index].viewer.boosted = post.viewer.boosted
            posts[index].counts = post.counts
        case (.like(let id), .like(let state)), (.unlike(let id), .like(let state)):
            guard let index = posts.firstIndex(where: { $0.id == id }) else { return }
            posts[index].viewer.liked = state.liked
            posts[index].counts.likes = state.likes
        case (.comment, .comment(let comment)):
            guard let index = posts.firstIndex(where: { $0.id == comment.postId }) else { return }
            posts[index].counts.comments += 1
        case (.save(let id, _, _), .saved):
            guard let index = posts.firstIndex(where: { $0.id == id }) else { return }
            posts[index].viewer.saved = true
        default:
            return
        }
        save()
    }

    /// Applies `filters` (`PlazaClient.filterMatcher(for: source.filterContext, viewer:)`) from
    /// now on, and to the posts shown; nil stops.
    public func useFilters(_ filters: KeywordFilters?) {
        self.filters = filters
        posts = self.filtered(posts)
    }

    private func filtered(_ posts: [Post]) -> [Post] { filters?.apply(to: posts) ?? posts }

    private func shows(_ post: Post) -> Bool {
        if let kind, post.kind != kind { return false }
        switch source {
        case .home, .global: return true
        case .user(let username): return post.author.username.lowercased() == username.lowercased()
        case .space(let slug): return post.spaces.contains { $0.slug == slug.lowercased() }
        case .tag(let tag): return post.audience == .public && post.tags.contains(TextFolding.fold(tag))
        }
    }

    /// Adds the posts not already shown, keeping newest-first order; returns those added.
    @discardableResult
    private func merge(_ incoming: [Post], newer: Bool) -> [Post] {
        var seen = Set(posts.map(\.id))
        let added = incoming.filter { seen.insert($0.id).inserted }
        guard !added.isEmpty else { return [] }
        if newer {
            posts = added.sorted(by: Self.newestFirst) + posts
        } else {
            posts += added
        }
        return added
    }

    static func newestFirst(_ a: Post, _ b: Post) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt > b.createdAt : (UInt64(a.id) ?? 0) > (UInt64(b.id) ?? 0)
    }
}
