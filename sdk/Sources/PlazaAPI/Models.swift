/// The objects of the HTTP API v1 (see API.md, "Objects").

public struct ErrorBody: Codable, Sendable, Hashable {
    public struct Detail: Codable, Sendable, Hashable {
        public var code: String
        public var message: String
        public var field: String?
        /// With `second_factor_required`: the token `POST /auth/login/second-factor` takes.
        public var challenge: String?
        public init(code: String, message: String, field: String? = nil, challenge: String? = nil) {
            self.code = code
            self.message = message
            self.field = field
            self.challenge = challenge
        }
    }
    public var error: Detail
    public init(code: String, message: String, field: String? = nil, challenge: String? = nil) {
        self.error = Detail(code: code, message: message, field: field, challenge: challenge)
    }
}

/// One page of a keyset-paginated list.
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    @Nullable public var nextCursor: String?
    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// Where an upload is: a photo is ready when its upload returns; a video is `processing` in
/// the background (its poster is ready, its `url` not yet), then `ready`, or `failed`.
public enum MediaState: String, Codable, Sendable, Hashable, CaseIterable {
    case ready, processing, failed
}

/// A photo or a video. For a video, `url` and `variants.original` are the MP4 (H.264/AAC,
/// at most 720p), `variants.medium` and `variants.thumbnail` its poster frame, and
/// `duration` its length in seconds.
public struct Media: Codable, Sendable, Hashable {
    public struct Variants: Codable, Sendable, Hashable {
        public var thumbnail: String
        public var medium: String
        public var original: String
        public init(thumbnail: String, medium: String, original: String) {
            self.thumbnail = thumbnail
            self.medium = medium
            self.original = original
        }
    }
    public var id: String
    public var contentType: String
    public var width: Int
    public var height: Int
    @Nullable public var blurhash: String?
    public var url: String
    public var variants: Variants
    /// `ready` unless a video is still being processed or could not be.
    public var state: MediaState
    /// A video's length in seconds.
    @Nullable public var duration: Double?
    /// While a video is processing, how far it is (0–100), as its uploader sees it.
    @Nullable public var progress: Int?
    /// What the picture shows, for people who cannot see it (alt text), as its uploader wrote it.
    @Nullable public var description: String?

    public var isVideo: Bool { contentType.hasPrefix("video/") }

    public init(
        id: String, contentType: String, width: Int, height: Int, blurhash: String?, url: String, variants: Variants,
        state: MediaState = .ready, duration: Double? = nil, progress: Int? = nil, description: String? = nil
    ) {
        self.id = id
        self.contentType = contentType
        self.width = width
        self.height = height
        self.blurhash = blurhash
        self.url = url
        self.variants = variants
        self.state = state
        self.duration = duration
        self.progress = progress
        self.description = description
    }

    private enum CodingKeys: String, CodingKey {
        case id, contentType, width, height, blurhash, url, variants, state, duration, progress, description
    }

    /// A server from before videos sends no `state`: its media are ready.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id), contentType: try c.decode(String.self, forKey: .contentType),
            width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height),
            blurhash: try c.decodeIfPresent(String.self, forKey: .blurhash),
            url: try c.decode(String.self, forKey: .url),
            variants: try c.decode(Variants.self, forKey: .variants),
            state: try c.decodeIfPresent(MediaState.self, forKey: .state) ?? .ready,
            duration: try c.decodeIfPresent(Double.self, forKey: .duration),
            progress: try c.decodeIfPresent(Int.self, forKey: .progress),
            description: try c.decodeIfPresent(String.self, forKey: .description))
    }
}

public struct UserStatus: Codable, Sendable, Hashable {
    public var kind: String
    public var text: String
    public var updatedAt: Timestamp
    public init(kind: String, text: String, updatedAt: Timestamp) {
        self.kind = kind
        self.text = text
        self.updatedAt = updatedAt
    }
}

/// A user as shown inside other objects (post author, comment author).
public struct UserSummary: Codable, Sendable, Hashable {
    public var id: String
    public var username: String
    public var displayName: String
    @Nullable public var avatar: Media?
    /// What the person says of themselves now ("safe", "busy", …), shown beside their name.
    @Nullable public var status: UserStatus?
    public init(id: String, username: String, displayName: String, avatar: Media?, status: UserStatus? = nil) {
        self.id = id
        self.username = username
        self.displayName = displayName
        self.avatar = avatar
        self.status = status
    }
}

public struct User: Codable, Sendable, Hashable {
    public struct Counts: Codable, Sendable, Hashable {
        public var posts: Int
        public var followers: Int
        public var following: Int
        public init(posts: Int, followers: Int, following: Int) {
            self.posts = posts
            self.followers = followers
            self.following = following
        }
    }
    /// How the signed-in viewer relates to this user; absent for anonymous requests.
    public struct Viewer: Codable, Sendable, Hashable {
        public var following: Bool
        public var followedBy: Bool
        public var blocking: Bool
        /// The viewer asked to follow this locked person and waits for their answer.
        public var requested: Bool
        public var muting: Bool
        public init(following: Bool, followedBy: Bool, blocking: Bool, requested: Bool = false, muting: Bool = false) {
            self.following = following
            self.followedBy = followedBy
            self.blocking = blocking
            self.requested = requested
            self.muting = muting
        }
    }
    public var id: String
    public var username: String
    public var displayName: String
    public var bio: String
    @Nullable public var avatar: Media?
    @Nullable public var status: UserStatus?
    /// Follows need this person's approval.
    public var locked: Bool
    public var createdAt: Timestamp
    public var counts: Counts
    public var viewer: Viewer?

    public init(
        id: String, username: String, displayName: String, bio: String, avatar: Media?, status: UserStatus?,
        createdAt: Timestamp, counts: Counts, viewer: Viewer?, locked: Bool = false
    ) {
        self.locked = locked
        self.id = id
        self.username = username
        self.displayName = displayName
        self.bio = bio
        self.avatar = avatar
        self.status = status
        self.createdAt = createdAt
        self.counts = counts
        self.viewer = viewer
    }

    public var summary: UserSummary {
        UserSummary(id: id, username: username, displayName: displayName, avatar: avatar)
    }
}

/// The signed-in user: a `User` plus private fields.
public struct Me: Codable, Sendable, Hashable {
    public var user: User
    public var email: String
    /// True once a link mailed to `email` was opened (or the account came verified from a provider).
    public var emailVerified: Bool
    /// An address asked for with `PUT /me/email` whose link was not opened yet.
    public var pendingEmail: String?
    public var preferences: JSONValue
    public var isAdmin: Bool
    /// Unread notifications (a group counts once).
    public var unreadNotifications: Int

    public init(
        user: User, email: String, emailVerified: Bool = false, pendingEmail: String? = nil, preferences: JSONValue,
        isAdmin: Bool, unreadNotifications: Int = 0
    ) {
        self.user = user
        self.email = email
        self.emailVerified = emailVerified
        self.pendingEmail = pendingEmail
        self.preferences = preferences
        self.isAdmin = isAdmin
        self.unreadNotifications = unreadNotifications
    }

    enum CodingKeys: String, CodingKey {
        case email, emailVerified, pendingEmail, preferences, isAdmin, unreadNotifications
    }

    public init(from decoder: any Decoder) throws {
        user = try User(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        email = try c.decode(String.self, forKey: .email)
        emailVerified = try c.decodeIfPresent(Bool.self, forKey: .emailVerified) ?? false
        pendingEmail = try c.decodeIfPresent(String.self, forKey: .pendingEmail)
        preferences = try c.decode(JSONValue.self, forKey: .preferences)
        isAdmin = try c.decodeIfPresent(Bool.self, forKey: .isAdmin) ?? false
        unreadNotifications = try c.decodeIfPresent(Int.self, forKey: .unreadNotifications) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(email, forKey: .email)
        try c.encode(emailVerified, forKey: .emailVerified)
        try c.encode(pendingEmail, forKey: .pendingEmail)
        try c.encode(preferences, forKey: .preferences)
        try c.encode(isAdmin, forKey: .isAdmin)
        try c.encode(unreadNotifications, forKey: .unreadNotifications)
    }
}

public struct SpaceSummary: Codable, Sendable, Hashable {
    public var id: String
    public var slug: String
    public var name: String
    public init(id: String, slug: String, name: String) {
        self.id = id
        self.slug = slug
        self.name = name
    }
}

public struct LinkPreview: Codable, Sendable, Hashable {
    public var url: String
    @Nullable public var title: String?
    @Nullable public var description: String?
    @Nullable public var imageURL: String?
    @Nullable public var siteName: String?
    @Nullable public var fetchedAt: Timestamp?
    /// A player for the link's video that a page may show in an `iframe` (YouTube's
    /// privacy-enhanced player or Vimeo's; `VideoEmbed`), read from `url`.
    @Nullable public var embedURL: String?
    public init(
        url: String, title: String? = nil, description: String? = nil, imageURL: String? = nil, siteName: String? = nil,
        fetchedAt: Timestamp? = nil
    ) {
        self.url = url
        self.title = title
        self.description = description
        self.imageURL = imageURL
        self.siteName = siteName
        self.fetchedAt = fetchedAt
        self.embedURL = VideoEmbed.playerURL(for: url)
    }
}

public struct Location: Codable, Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    @Nullable public var name: String?
    public init(latitude: Double, longitude: Double, name: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.name = name
    }
}

public struct Activity: Codable, Sendable, Hashable {
    public var type: String
    @Nullable public var emoji: String?
    @Nullable public var color: String?
    public var progress: Int
    @Nullable public var completedAt: Timestamp?
    public init(type: String, emoji: String?, color: String?, progress: Int, completedAt: Timestamp?) {
        self.type = type
        self.emoji = emoji
        self.color = color
        self.progress = progress
        self.completedAt = completedAt
    }
}

public enum PostKind: String, Codable, Sendable, Hashable, CaseIterable {
    case text, photo, link, activity
}

public struct Post: Codable, Sendable, Hashable {
    public struct Counts: Codable, Sendable, Hashable {
        public var likes: Int
        public var comments: Int
        public var boosts: Int
        public init(likes: Int, comments: Int, boosts: Int = 0) {
            self.likes = likes
            self.comments = comments
            self.boosts = boosts
        }
    }
    public struct Viewer: Codable, Sendable, Hashable {
        public var liked: Bool
        public var saved: Bool
        public var boosted: Bool
        public init(liked: Bool, saved: Bool, boosted: Bool = false) {
            self.liked = liked
            self.saved = saved
            self.boosted = boosted
        }
    }
    /// On a home feed's item that a boost brought: who boosted it, when.
    public struct Boost: Codable, Sendable, Hashable {
        /// The boost's own id (time-ordered, as a post's).
        public var id: String
        public var by: UserSummary
        public var at: Timestamp
        public init(id: String, by: UserSummary, at: Timestamp) {
            self.id = id
            self.by = by
            self.at = at
        }
    }
    public var id: String
    public var kind: PostKind
    public var author: UserSummary
    @Nullable public var title: String?
    @Nullable public var body: String?
    public var spaces: [SpaceSummary]
    /// Who may read it.
    public var audience: PostAudience
    public var media: [Media]
    @Nullable public var link: LinkPreview?
    @Nullable public var location: Location?
    @Nullable public var activity: Activity?
    @Nullable public var price: String?
    public var createdAt: Timestamp
    @Nullable public var editedAt: Timestamp?
    public var counts: Counts
    public var viewer: Viewer
    /// The hashtags of its title and text, each once, folded as search folds text (`PostText`).
    public var tags: [String]
    /// Shown instead of its text and media until the reader opens it.
    @Nullable public var contentWarning: String?
    /// Its photos and videos are blurred until the reader opens them.
    public var sensitive: Bool
    /// Pinned where it is shown: to its author's profile (on their profile, their pinned list and
    /// its own page), or to its space's top in that space's feed and pinned list.
    public var pinned: Bool
    /// Set on a home feed's item a boost brought there.
    @Nullable public var boost: Boost?
    @Nullable public var poll: Poll?
    /// The viewer's keyword filters that put this post behind a warning; absent when none did.
    public var filtered: [FilterMatch]?

    public init(
        id: String, kind: PostKind, author: UserSummary, title: String?, body: String?, spaces: [SpaceSummary],
        media: [Media], link: LinkPreview?, location: Location?, activity: Activity?, price: String?,
        createdAt: Timestamp, editedAt: Timestamp?, counts: Counts, viewer: Viewer, audience: PostAudience = .public,
        tags: [String] = [], contentWarning: String? = nil, sensitive: Bool = false, pinned: Bool = false,
        filtered: [FilterMatch]? = nil, poll: Poll? = nil
    ) {
        self.poll = poll
        self.tags = tags
        self.pinned = pinned
        self.contentWarning = contentWarning
        self.sensitive = sensitive
        self.filtered = filtered
        self.id = id
        self.kind = kind
        self.author = author
        self.title = title
        self.body = body
        self.spaces = spaces
        self.audience = audience
        self.media = media
        self.link = link
        self.location = location
        self.activity = activity
        self.price = price
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.counts = counts
        self.viewer = viewer
    }
}

public struct Comment: Codable, Sendable, Hashable {
    public var id: String
    public var postId: String
    public var author: UserSummary
    public var body: String
    public var createdAt: Timestamp
    /// The viewer's keyword filters for threads that put this comment behind a warning; absent when none did.
    public var filtered: [FilterMatch]?
    public init(
        id: String, postId: String, author: UserSummary, body: String, createdAt: Timestamp,
        filtered: [FilterMatch]? = nil
    ) {
        self.filtered = filtered
        self.id = id
        self.postId = postId
        self.author = author
        self.body = body
        self.createdAt = createdAt
    }
}

public struct LikeState: Codable, Sendable, Hashable {
    public var liked: Bool
    public var likes: Int
    public init(liked: Bool, likes: Int) {
        self.liked = liked
        self.likes = likes
    }
}

public struct Session: Codable, Sendable, Hashable {
    public var id: String
    public var createdAt: Timestamp
    public var lastUsedAt: Timestamp
    public var expiresAt: Timestamp
    @Nullable public var userAgent: String?
    @Nullable public var ip: String?
    public var current: Bool
    /// The app a person let in with OAuth (a Mastodon app), by the name it registered.
    @Nullable public var app: String?
    /// What that app may do: its OAuth scopes, space-separated (`read write`).
    @Nullable public var scopes: String?
    public init(
        id: String, createdAt: Timestamp, lastUsedAt: Timestamp, expiresAt: Timestamp, userAgent: String?, ip: String?,
        current: Bool, app: String? = nil, scopes: String? = nil
    ) {
        self.app = app
        self.scopes = scopes
        self.id = id
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.userAgent = userAgent
        self.ip = ip
        self.current = current
    }
}

public struct Health: Codable, Sendable, Hashable {
    public var status: String
    public init(status: String) { self.status = status }
}

/// People and spaces to follow (`GET /me/suggestions`), best first.
public struct Suggestions: Codable, Sendable, Hashable {
    public var people: [User]
    public var spaces: [Space]
    public init(people: [User], spaces: [Space]) {
        self.people = people
        self.spaces = spaces
    }
}

/// A version of a post's text as it read before an edit (or as it reads now, the first of
/// `GET /posts/{id}/history`).
public struct PostVersion: Codable, Sendable, Hashable {
    @Nullable public var title: String?
    @Nullable public var body: String?
    @Nullable public var contentWarning: String?
    public var sensitive: Bool
    public var media: [Media]
    @Nullable public var poll: PollVersion?
    /// When this version was written: the post's creation or the edit that made it.
    public var createdAt: Timestamp
    public init(
        title: String?, body: String?, contentWarning: String?, sensitive: Bool, media: [Media],
        poll: PollVersion? = nil, createdAt: Timestamp
    ) {
        self.poll = poll
        self.title = title
        self.body = body
        self.contentWarning = contentWarning
        self.sensitive = sensitive
        self.media = media
        self.createdAt = createdAt
    }
}
