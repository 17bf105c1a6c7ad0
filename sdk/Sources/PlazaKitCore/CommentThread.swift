import Foundation
import PlazaAPI

/// One post and its comments, oldest comment first, as a post's screen shows them: later
/// comments with `loadMore()` (keyset cursor), my own with `add(_:)`, others' live with
/// `apply(_:)`. Comments are kept once each. With a cache directory the post and the comments
/// loaded so far are saved as a Codable file, so the screen opens on them (`restore()`) before
/// the network answers, and offline. The file is named by the post alone: give each signed-in
/// account (and server) a cache directory of its own, and delete it at sign-out, as for `FeedPager`.
public actor CommentThread {
    public let client: PlazaClient
    public let postID: String
    public let pageSize: Int
    /// The post, once loaded or restored; nil after it was deleted.
    public private(set) var post: Post?
    /// Oldest first, each comment once.
    public private(set) var comments: [Comment] = []
    /// True once the newest comment has been loaded: new ones then arrive by `apply(_:)`.
    public private(set) var reachedEnd = false
    private var nextCursor: String?
    private var loaded = false
    /// The post's `ETag` as last loaded, for `revalidate()`.
    private var postTag: String?
    private let cache: DiskCache?
    /// At most this many comments are written to the disk cache (the oldest, as shown first).
    static let cachedComments = 500

    public init(client: PlazaClient, postID: String, pageSize: Int = 50, cacheDirectory: URL? = nil) {
        self.client = client
        self.postID = postID
        self.pageSize = pageSize
        self.cache = cacheDirectory.map { DiskCache(directory: $0, kind: "comments", name: postID) }
    }

    struct Snapshot: Codable {
        var post: Post
        var comments: [Comment]
        var nextCursor: String?
        var reachedEnd: Bool
        var postTag: String?
    }

    /// The cached post and comments from disk (nil without a cache or before a first load).
    @discardableResult
    public func restore() -> (post: Post, comments: [Comment])? {
        guard let snapshot = cache?.load(Snapshot.self) else { return nil }
        post = snapshot.post
        comments = snapshot.comments
        nextCursor = snapshot.nextCursor
        reachedEnd = snapshot.reachedEnd
        postTag = snapshot.postTag
        loaded = true
        return (snapshot.post, snapshot.comments)
    }

    /// Loads the post and its first page of comments, replacing what was there.
    @discardableResult
    public func reload() async throws -> [Comment] {
        async let fresh = client.revalidate("/posts/\(PlazaClient.segment(postID))", etag: nil, as: Post.self)
        let page = try await client.comments(on: postID, page: PageOptions(limit: pageSize))
        if case .modified(let value, let tag) = try await fresh { (post, postTag) = (value, tag) }
        comments = []
        merge(page.items)
        nextCursor = page.nextCursor
        reachedEnd = page.nextCursor == nil
        loaded = true
        save()
        return comments
    }

    /// Checks the post with the server, cheaply (on launch, when the network comes back): false
    /// when it is unchanged (a 304); else its new counts and text are taken in, and comments
    /// written since are loaded when the thread was read to its end. A deleted post is a
    /// `PlazaClientError` 404.
    @discardableResult
    public func revalidate() async throws -> Bool {
        guard loaded, post != nil else {
            try await reload()
            return true
        }
        let answer = try await client.revalidate(
            "/posts/\(PlazaClient.segment(postID))", etag: postTag, as: Post.self)
        guard case .modified(let fresh, let tag) = answer else { return false }
        (post, postTag) = (fresh, tag)
        if reachedEnd, fresh.counts.comments > comments.count {
            reachedEnd = false
            try await loadMore()
        }
        save()
        return true
    }

    /// Loads the next page of later comments and returns those not shown yet (empty at the end).
    @discardableResult
    public func loadMore() async throws -> [Comment] {
        guard loaded else { return try await reload() }
        guard !reachedEnd else { return [] }
        var added: [Comment] = []
        // Restored from a cut cache there is no cursor: page again from the start, keeping each comment once.
        var cursor = nextCursor
        repeat {
            let page = try await client.comments(on: postID, page: PageOptions(limit: pageSize, cursor: cursor))
            added += merge(page.items)
            cursor = page.nextCursor
            nextCursor = cursor
            reachedEnd = cursor == nil
        } while added.isEmpty && cursor != nil
        // Comments written since the post was read: its count is at least what the thread holds.
        if let count = post?.counts.comments, count < comments.count { post?.counts.comments = comments.count }
        save()
        return added
    }

    /// Posts my comment and shows it at once.
    @discardableResult
    public func add(_ body: String) async throws -> Comment {
        let comment = try await client.comment(on: postID, body)
        if merge([comment]).count == 1 { post?.counts.comments += 1 }
        save()
        return comment
    }

    /// Deletes a comment (mine, or any on my post) and takes it out; the post counts one fewer,
    /// loaded or not.
    public func delete(_ commentID: String) async throws {
        try await client.deleteComment(commentID)
        comments.removeAll { $0.id == commentID }
        if let count = post?.counts.comments { post?.counts.comments = max(0, count - 1) }
        save()
    }

    /// The post and its comments as the person sees them with `queue`'s writes: their pending
    /// comments after the last loaded one (`author`: the signed-in person), and pending likes
    /// and comments counted in the post.
    public func displayed(with queue: WriteQueue, author: UserSummary) async -> (post: Post?, comments: [Comment]) {
        let pending = reachedEnd || comments.isEmpty ? await queue.pendingComments(on: postID, author: author) : []
        var shown = post
        if let post { shown = await queue.applyPending(to: post) }
        return (shown, comments + pending)
    }

    /// Applies what became of a queued write: a comment on this post that landed comes in with
    /// its id, a like that landed sets the heart and count.
    public func apply(_ event: WriteEvent) {
        guard case .sent(let write, let outcome) = event else { return }
        switch (write.intent, outcome) {
        case (.comment, .comment(let comment)) where comment.postId == postID:
            if merge([comment]).count == 1 { post?.counts.comments += 1 }
        case (.like(let id), .like(let state)) where id == postID,
            (.unlike(let id), .like(let state)) where id == postID:
            post?.viewer.liked = state.liked
            post?.counts.likes = state.likes
        default:
            return
        }
        save()
    }

    /// Applies a realtime event about this post: a new comment (shown once the thread is read to
    /// its end, else `loadMore()` brings it), an edit, a like count, the post's deletion.
    public func apply(_ event: PlazaEvent) {
        switch event {
        case .commentCreated(let comment) where comment.postId == postID:
            guard reachedEnd, merge([comment]).count == 1 else { return }
            post?.counts.comments += 1
        case .postUpdated(let updated) where updated.id == postID:
            post = updated
        case .likeChanged(let change) where change.postId == postID:
            post?.counts.likes = change.likes
        case .postDeleted(let id) where id == postID:
            post = nil
            comments = []
            cache?.remove()
            return
        default:
            return
        }
        save()
    }

    private func save() {
        guard let cache, let post else { return }
        let kept = Array(comments.prefix(Self.cachedComments))
        let whole = kept.count == comments.count
        cache.store(
            Snapshot(
                post: post, comments: kept, nextCursor: whole ? nextCursor : nil, reachedEnd: whole && reachedEnd,
                postTag: postTag))
    }

    /// Adds the comments not already shown, oldest first; returns those added.
    @discardableResult
    private func merge(_ incoming: [Comment]) -> [Comment] {
        var seen = Set(comments.map(\.id))
        let added = incoming.filter { seen.insert($0.id).inserted }
        guard !added.isEmpty else { return [] }
        comments = (comments + added).sorted(by: Self.oldestFirst)
        return added
    }

    static func oldestFirst(_ a: Comment, _ b: Comment) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt < b.createdAt : (UInt64(a.id) ?? 0) < (UInt64(b.id) ?? 0)
    }
}
