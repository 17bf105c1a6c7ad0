/// Spaces, collections and the activity heatmap (API.md: Spaces, Collections, People).

public struct Space: Codable, Sendable, Hashable {
    public struct Counts: Codable, Sendable, Hashable {
        public var members: Int
        public var posts: Int
        public init(members: Int, posts: Int) {
            self.members = members
            self.posts = posts
        }
    }
    /// The caller's relation to the space; false and null for anonymous requests.
    public struct Viewer: Codable, Sendable, Hashable {
        public var member: Bool
        public var owner: Bool
        /// The caller's role when a member.
        @Nullable public var role: SpaceRole?
        /// The caller asked to join and waits for a moderator.
        public var requested: Bool
        public init(member: Bool, owner: Bool, role: SpaceRole? = nil, requested: Bool = false) {
            self.member = member
            self.owner = owner
            self.role = role
            self.requested = requested
        }
    }
    public var id: String
    public var slug: String
    public var name: String
    public var description: String
    public var visibility: SpaceVisibility
    @Nullable public var image: Media?
    public var owner: UserSummary
    public var counts: Counts
    public var viewer: Viewer
    public var createdAt: Timestamp
    public init(
        id: String, slug: String, name: String, description: String, image: Media?, owner: UserSummary, counts: Counts,
        viewer: Viewer,
        createdAt: Timestamp, visibility: SpaceVisibility = .open
    ) {
        self.visibility = visibility
        self.id = id
        self.slug = slug
        self.name = name
        self.description = description
        self.image = image
        self.owner = owner
        self.counts = counts
        self.viewer = viewer
        self.createdAt = createdAt
    }
}

public struct CreateSpaceRequest: Codable, Sendable {
    public var slug: String
    public var name: String
    public var description: String?
    /// One of the caller's unused uploads, shown as the space's image.
    public var imageId: String?
    /// `open` when left out.
    public var visibility: SpaceVisibility?
    public init(
        slug: String, name: String, description: String? = nil, imageId: String? = nil,
        visibility: SpaceVisibility? = nil
    ) {
        self.visibility = visibility
        self.slug = slug
        self.name = name
        self.description = description
        self.imageId = imageId
    }
}

/// PATCH /spaces/{slug}: left-out fields stay; `imageId: null` removes the image. The slug
/// never changes: it is in links and in people's preferences.
public struct UpdateSpaceRequest: Codable, Sendable {
    public var name: String?
    public var description: String?
    public var imageId: FieldUpdate<String>
    public var visibility: SpaceVisibility?
    public init(
        name: String? = nil, description: String? = nil, imageId: FieldUpdate<String> = .keep,
        visibility: SpaceVisibility? = nil
    ) {
        self.visibility = visibility
        self.name = name
        self.description = description
        self.imageId = imageId
    }
}

public struct SavedCollection: Codable, Sendable, Hashable {
    public struct Counts: Codable, Sendable, Hashable {
        public var items: Int
        public init(items: Int) { self.items = items }
    }
    public var id: String
    public var name: String
    public var counts: Counts
    public var createdAt: Timestamp
    public init(id: String, name: String, counts: Counts, createdAt: Timestamp) {
        self.id = id
        self.name = name
        self.counts = counts
        self.createdAt = createdAt
    }
}

public struct CollectionItem: Codable, Sendable, Hashable {
    /// `ready`: the post, or the link with its preview. `pending`: the preview is being
    /// fetched. `failed`: no preview could be made (the link shows its domain and URL).
    /// `unavailable`: the saved post was deleted or may no longer be seen.
    public enum State: String, Codable, Sendable, Hashable {
        case ready, pending, failed, unavailable
    }
    public var id: String
    public var collectionId: String
    @Nullable public var post: Post?
    @Nullable public var link: LinkPreview?
    public var note: String
    public var state: State
    public var savedAt: Timestamp
    public init(
        id: String, collectionId: String, post: Post?, link: LinkPreview?, note: String, state: State,
        savedAt: Timestamp
    ) {
        self.id = id
        self.collectionId = collectionId
        self.post = post
        self.link = link
        self.note = note
        self.state = state
        self.savedAt = savedAt
    }
}

public struct CollectionRequest: Codable, Sendable {
    public var name: String
    public init(name: String) { self.name = name }
}

/// Saves a post (`postId`) or an external link (`url`), with an optional note.
public struct SaveItemRequest: Codable, Sendable {
    public var postId: String?
    public var url: String?
    public var note: String?
    public init(postId: String? = nil, url: String? = nil, note: String? = nil) {
        self.postId = postId
        self.url = url
        self.note = note
    }
}

/// PATCH /collections/items/{id}: move to another of the caller's collections and/or edit the note.
public struct UpdateItemRequest: Codable, Sendable {
    public var collectionId: String?
    public var note: String?
    public init(collectionId: String? = nil, note: String? = nil) {
        self.collectionId = collectionId
        self.note = note
    }
}

/// `GET /users/{username}/activity`: one entry per UTC day, oldest first, ending today.
public struct ActivityHeatmap: Codable, Sendable, Hashable {
    public struct Day: Codable, Sendable, Hashable {
        /// `YYYY-MM-DD`, a day of the heatmap's time zone.
        public var date: String
        /// Activities that reached 100% that day.
        public var completed: Int
        /// Activity posts made that day.
        public var posted: Int
        /// Activity posts made that day that have not reached 100% yet.
        public var unfinished: Int
        public init(date: String, completed: Int, posted: Int, unfinished: Int = 0) {
            self.date = date
            self.completed = completed
            self.posted = posted
            self.unfinished = unfinished
        }

        private enum CodingKeys: String, CodingKey { case date, completed, posted, unfinished }

        /// A server from before `unfinished` sends none: 0.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                date: try c.decode(String.self, forKey: .date), completed: try c.decode(Int.self, forKey: .completed),
                posted: try c.decode(Int.self, forKey: .posted),
                unfinished: try c.decodeIfPresent(Int.self, forKey: .unfinished) ?? 0)
        }
    }
    /// Days in a row with an activity completed.
    public struct Streak: Codable, Sendable, Hashable {
        /// The run that reaches today, or yesterday while today has none yet.
        public var current: Int
        /// The longest run in the window.
        public var longest: Int
        public init(current: Int, longest: Int) {
            self.current = current
            self.longest = longest
        }
    }
    public var days: [Day]
    /// The IANA time zone the days are counted in (the owner's, or the `tz` asked for).
    public var timeZone: String
    public var streak: Streak
    public init(days: [Day], timeZone: String = "UTC", streak: Streak = Streak(current: 0, longest: 0)) {
        self.days = days
        self.timeZone = timeZone
        self.streak = streak
    }

    private enum CodingKeys: String, CodingKey { case days, timeZone, streak }

    /// A server from before time zones sends neither zone nor streak: UTC, and none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            days: try c.decode([Day].self, forKey: .days),
            timeZone: try c.decodeIfPresent(String.self, forKey: .timeZone) ?? "UTC",
            streak: try c.decodeIfPresent(Streak.self, forKey: .streak) ?? Streak(current: 0, longest: 0))
    }
}

/// A post in the caller's reading history.
public struct HistoryItem: Codable, Sendable, Hashable {
    public var post: Post
    public var firstViewedAt: Timestamp
    /// The last time.
    public var viewedAt: Timestamp
    public var views: Int
    /// Times picked from search results.
    public var clicks: Int
    public init(post: Post, firstViewedAt: Timestamp, viewedAt: Timestamp, views: Int, clicks: Int) {
        self.post = post
        self.firstViewedAt = firstViewedAt
        self.viewedAt = viewedAt
        self.views = views
        self.clicks = clicks
    }
}
