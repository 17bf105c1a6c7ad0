import Foundation
import PlazaAPI

/// Optimistic state: what the app shows while writes wait in the queue. A pending like fills
/// the heart and adds one to the count at once, a pending post is at the top of home with a
/// `pending:` id; when the write lands, the server's answer (`WriteEvent.sent`: ids, counts, a
/// moderated text) replaces the guess, and when it is refused the guess simply goes, since it
/// is computed from the queue and the write has left it.
extension WriteQueue {
    /// `posts` as they will read once the pending writes land: the viewer's likes, boosts and
    /// saves and the counts they change, and the comments waiting.
    public func applyPending(to posts: [Post]) -> [Post] { posts.map { applyPending(to: $0) } }

    public func applyPending(to post: Post) -> Post {
        var post = post
        for write in pending {
            switch write.intent {
            case .like(let id) where id == post.id && !post.viewer.liked:
                post.viewer.liked = true
                post.counts.likes += 1
            case .unlike(let id) where id == post.id && post.viewer.liked:
                post.viewer.liked = false
                post.counts.likes = max(0, post.counts.likes - 1)
            case .boost(let id) where id == post.id && !post.viewer.boosted:
                post.viewer.boosted = true
                post.counts.boosts += 1
            case .save(let id, _, _) where id == post.id:
                post.viewer.saved = true
            case .comment(let id, _) where id == post.id:
                post.counts.comments += 1
            default:
                continue
            }
        }
        return post
    }

    /// The posts `author` (the signed-in person) has queued that `source` shows, newest first,
    /// each with its write's `reference` as id and the time it was queued.
    public func pendingPosts(for source: FeedSource, author: UserSummary) -> [Post] {
        pending.reversed().compactMap { write -> Post? in
            guard case .createPost(let request) = write.intent, Self.shows(source, request, author: author) else {
                return nil
            }
            let post = Post(
                id: write.reference, kind: request.kind, author: author, title: request.title, body: request.body,
                spaces: [], media: [], link: nil, location: request.location, activity: nil, price: request.price,
                createdAt: Timestamp(write.queuedAt), editedAt: nil, counts: .init(likes: 0, comments: 0),
                viewer: .init(liked: false, saved: false), audience: request.audience ?? .public,
                contentWarning: request.contentWarning, sensitive: request.sensitive ?? false)
            return applyPending(to: post)
        }
    }

    /// The comments `author` has queued on `postID` (a post's id or a pending post's
    /// `reference`), oldest first, each with its write's `reference` as id.
    public func pendingComments(on postID: String, author: UserSummary) -> [Comment] {
        pending.compactMap { write in
            guard case .comment(let target, let body) = write.intent, target == postID else { return nil }
            return Comment(
                id: write.reference, postId: postID, author: author, body: body, createdAt: Timestamp(write.queuedAt))
        }
    }

    /// The files of the uploads a pending post names, for the app to show its own photos until
    /// the server's variants exist.
    public func files(of post: PendingWrite) -> [URL] {
        guard case .createPost(let request) = post.intent else { return [] }
        let uploads = Set((request.mediaIds ?? []).compactMap(PendingWrite.pendingID))
        return pending.compactMap { write in
            guard uploads.contains(write.id), case .upload(let file, _, _, _) = write.intent else { return nil }
            return directory.appendingPathComponent(file)
        }
    }

    static func shows(_ source: FeedSource, _ request: CreatePostRequest, author: UserSummary) -> Bool {
        switch source {
        case .home: true
        case .global: (request.audience ?? .public) == .public && (request.spaces ?? []).isEmpty
        case .user(let username): username.lowercased() == author.username.lowercased()
        case .space(let slug): (request.spaces ?? []).contains { $0.lowercased() == slug.lowercased() }
        case .tag: false
        }
    }
}
