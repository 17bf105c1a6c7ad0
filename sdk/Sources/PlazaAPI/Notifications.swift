/// Notifications and the realtime stream's payloads (API.md: Notifications and realtime).

public enum NotificationKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// Someone liked my post (grouped per post while unread).
    case like
    /// Someone commented on my post.
    case comment
    /// Someone commented on a post whose thread I commented in.
    case reply
    /// Someone followed me (grouped while unread).
    case follow
    /// Someone wrote `@me` in a post or a comment.
    case mention
    /// Someone asks to follow me (I am locked).
    case followRequest = "follow_request"
    /// A moderator resolved a report I made; `actor` is the moderator.
    case reportResolved = "report_resolved"
    /// Someone I follow recommended a post to me (grouped per post while unread).
    case recommendation
    /// Someone boosted my post to their followers (grouped per post while unread).
    case boost
    /// A post I boosted or commented on was edited (grouped per post while unread).
    case edited
    /// A poll I made or voted in has ended (`actor` is its author).
    case poll
}

public struct Notification: Codable, Sendable, Hashable {
    public var id: String
    public var kind: NotificationKind
    /// Who acted most recently.
    public var actor: User
    /// The most recent actors, newest first (up to 3; the first is `actor`), for "Ana and 3 others".
    public var actors: [UserSummary]
    /// How many people acted (1 unless grouped).
    public var actorCount: Int
    @Nullable public var post: Post?
    /// The comment that mentions me, comments on my post, or replies in my thread.
    @Nullable public var comment: Comment?
    /// When the latest actor acted.
    public var createdAt: Timestamp
    public var read: Bool

    public init(
        id: String, kind: NotificationKind, actor: User, actors: [UserSummary], actorCount: Int, post: Post?,
        comment: Comment?,
        createdAt: Timestamp, read: Bool
    ) {
        self.id = id
        self.kind = kind
        self.actor = actor
        self.actors = actors
        self.actorCount = actorCount
        self.post = post
        self.comment = comment
        self.createdAt = createdAt
        self.read = read
    }
}

/// POST /me/notifications/read: the given notifications, or all when `ids` is absent.
public struct MarkNotificationsReadRequest: Codable, Sendable {
    public var ids: [String]?
    public init(ids: [String]? = nil) { self.ids = ids }
}

/// The names of the stream's events (the SSE `event:` field).
public enum StreamEventKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// `data` is a `Post`, for the home feed.
    case postCreated = "post.created"
    /// `data` is the `Post` as it is now.
    case postUpdated = "post.updated"
    /// `data` is a `DeletedPost`.
    case postDeleted = "post.deleted"
    /// `data` is a `Comment` on one of my posts.
    case commentCreated = "comment.created"
    /// `data` is a `LikeChange` on one of my posts.
    case likeChanged = "like.changed"
    /// `data` is a `Notification` (new, or a group with a new actor).
    case notification
    /// Sent first on every connection: `data` is a `StreamReady`; its `id` is where to resume.
    case ready
    /// The events since the client's `Last-Event-ID` are no longer kept: reload, then go on from here.
    case reset
}

public struct DeletedPost: Codable, Sendable, Hashable {
    public var id: String
    public init(id: String) { self.id = id }
}

public struct LikeChange: Codable, Sendable, Hashable {
    public var postId: String
    public var userId: String
    public var liked: Bool
    /// The post's like count after the change.
    public var likes: Int
    public init(postId: String, userId: String, liked: Bool, likes: Int) {
        self.postId = postId
        self.userId = userId
        self.liked = liked
        self.likes = likes
    }
}

public struct StreamReady: Codable, Sendable, Hashable {
    /// Events replayed from the log before going live (0 without `Last-Event-ID`).
    public var replayed: Int
    public init(replayed: Int) { self.replayed = replayed }
}
