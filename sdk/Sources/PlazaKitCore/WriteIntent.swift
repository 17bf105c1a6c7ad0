import Foundation
import PlazaAPI

/// What a queued write does: the creating and toggling requests an app makes offline. A post or
/// comment id may name a write still in the queue, as `"pending:<its id>"`
/// (`PendingWrite.reference`): a comment on a post made on the plane, a post with the photos
/// queued before it. It is replaced by the server's id once that write has landed.
public enum WriteIntent: Codable, Sendable {
    case createPost(CreatePostRequest)
    case comment(postID: String, body: String)
    case like(postID: String)
    case unlike(postID: String)
    case boost(postID: String)
    case follow(username: String)
    case unfollow(username: String)
    case save(postID: String, collectionID: String, note: String?)
    case vote(postID: String, choices: [Int])
    /// A photo or video; `file` is the copy kept in the queue's folder.
    case upload(file: String, filename: String, contentType: String, description: String?)

    /// The request: method, path and body (built when the write is first sent, then kept byte
    /// for byte, so a replay is recognised as the same request).
    func request(resolving id: (String) throws -> String) throws -> (method: String, path: String, body: Data?) {
        let json = { (value: any Encodable) in try PlazaClient.encoder.encode(value) }
        func post(_ postID: String) throws -> String { "/posts/\(PlazaClient.segment(try id(postID)))" }
        switch self {
        case .createPost(var request):
            request.mediaIds = try request.mediaIds?.map(id)
            return ("POST", "/posts", try json(request))
        case .comment(let postID, let body):
            return ("POST", try post(postID) + "/comments", try json(CreateCommentRequest(body: body)))
        case .like(let postID): return ("PUT", try post(postID) + "/like", nil)
        case .unlike(let postID): return ("DELETE", try post(postID) + "/like", nil)
        case .boost(let postID): return ("PUT", try post(postID) + "/boost", nil)
        case .follow(let username): return ("PUT", "/users/\(PlazaClient.segment(username))/follow", nil)
        case .unfollow(let username): return ("DELETE", "/users/\(PlazaClient.segment(username))/follow", nil)
        case .save(let postID, let collectionID, let note):
            return (
                "POST", "/collections/\(PlazaClient.segment(collectionID))/items",
                try json(SaveItemRequest(postId: try id(postID), url: nil, note: note))
            )
        case .vote(let postID, let choices):
            return ("POST", try post(postID) + "/poll/votes", try json(PollVoteRequest(choices: choices)))
        case .upload: return ("POST", "/me/media", nil)
        }
    }

    /// The ids of queued writes this one waits for (`pending:` references).
    var references: [String] {
        let ids: [String]
        switch self {
        case .createPost(let request): ids = request.mediaIds ?? []
        case .comment(let postID, _), .like(let postID), .unlike(let postID), .boost(let postID),
            .save(let postID, _, _), .vote(let postID, _):
            ids = [postID]
        case .follow, .unfollow, .upload: ids = []
        }
        return ids.compactMap(PendingWrite.pendingID)
    }

    /// The answer's value, decoded as the request's kind of answer.
    func outcome(from body: Data) -> WriteOutcome {
        let decoder = PlazaClient.decoder
        switch self {
        case .createPost, .boost: return (try? decoder.decode(Post.self, from: body)).map(WriteOutcome.post) ?? .none
        case .comment: return (try? decoder.decode(Comment.self, from: body)).map(WriteOutcome.comment) ?? .none
        case .like, .unlike: return (try? decoder.decode(LikeState.self, from: body)).map(WriteOutcome.like) ?? .none
        case .follow, .unfollow: return (try? decoder.decode(User.self, from: body)).map(WriteOutcome.user) ?? .none
        case .save: return (try? decoder.decode(CollectionItem.self, from: body)).map(WriteOutcome.saved) ?? .none
        case .vote: return (try? decoder.decode(Poll.self, from: body)).map(WriteOutcome.poll) ?? .none
        case .upload: return (try? decoder.decode(Media.self, from: body)).map(WriteOutcome.media) ?? .none
        }
    }
}

/// What the server answered a write that landed.
public enum WriteOutcome: Sendable, Hashable {
    case post(Post)
    case comment(Comment)
    case like(LikeState)
    case user(User)
    case saved(CollectionItem)
    case poll(Poll)
    case media(Media)
    /// An answer PlazaKit could not read (a newer server's): the write landed all the same.
    case none

    /// The id the server gave what the write made (a post, comment, upload, saved item).
    var createdID: String? {
        switch self {
        case .post(let post): post.id
        case .comment(let comment): comment.id
        case .media(let media): media.id
        case .saved(let item): item.id
        case .like, .user, .poll, .none: nil
        }
    }
}

/// A write kept on disk until the server has it.
public struct PendingWrite: Codable, Sendable, Identifiable {
    /// Also its `Idempotency-Key`: however often it is sent, the server does it once.
    public let id: String
    public let intent: WriteIntent
    public let queuedAt: Date
    /// How many times sending it failed on the network or the server (not a refusal).
    public internal(set) var attempts = 0
    /// Why the last attempt did not land, if one did not.
    public internal(set) var lastError: String?
    /// The request as first sent, kept so that every retry sends the same bytes.
    var sent: SentRequest?

    struct SentRequest: Codable {
        var method: String
        var path: String
        var contentType: String?
        /// The body's file in the queue's folder, if it has a body.
        var bodyFile: String?
    }

    /// How other writes and the app name what this write makes before it has an id: `pending:<id>`.
    public var reference: String { "pending:" + id }

    static func pendingID(_ reference: String) -> String? {
        reference.hasPrefix("pending:") ? String(reference.dropFirst(8)) : nil
    }
}

/// What happened to a queued write, for the app to show.
public enum WriteEvent: Sendable {
    /// It was queued (shown at once through the optimistic state).
    case queued(PendingWrite)
    /// The server has it; `outcome` is its answer (the new post with its id and counts).
    case sent(PendingWrite, WriteOutcome)
    /// The server refused it (a 4xx): it is dropped, and its optimistic state goes with it.
    case refused(PendingWrite, PlazaClientError)
    /// It could not be sent now (offline, the server down or busy); it is kept and tried again.
    case waiting(PendingWrite, reason: String)
    /// The share of an upload's bytes sent, 0 to 1.
    case progress(PendingWrite, Double)
    /// The app cancelled it before it was sent.
    case cancelled(PendingWrite)
}
