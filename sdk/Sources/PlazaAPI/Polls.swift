/// Polls (API.md: Social features, step 22).

/// A post's poll. Its `id` is the post's.
public struct Poll: Codable, Sendable, Hashable {
    public struct Option: Codable, Sendable, Hashable {
        public var title: String
        /// Null until the reader may see the results: once they voted, to the poll's author, and
        /// to everyone once it ended.
        @Nullable public var votes: Int?
        public init(title: String, votes: Int?) {
            self.title = title
            self.votes = votes
        }
    }
    public struct Viewer: Codable, Sendable, Hashable {
        public var voted: Bool
        /// The options the reader chose, by index.
        public var choices: [Int]
        public init(voted: Bool, choices: [Int]) {
            self.voted = voted
            self.choices = choices
        }
    }
    public var id: String
    public var options: [Option]
    /// Several options may be chosen (each once).
    public var multiple: Bool
    public var expiresAt: Timestamp
    public var expired: Bool
    /// How many people voted.
    public var votersCount: Int
    /// How many votes were cast (more than voters in a multiple-choice poll); null while the
    /// options' counts are.
    @Nullable public var votesCount: Int?
    public var viewer: Viewer

    public init(
        id: String, options: [Option], multiple: Bool, expiresAt: Timestamp, expired: Bool, votersCount: Int,
        votesCount: Int?, viewer: Viewer
    ) {
        self.id = id
        self.options = options
        self.multiple = multiple
        self.expiresAt = expiresAt
        self.expired = expired
        self.votersCount = votersCount
        self.votesCount = votesCount
        self.viewer = viewer
    }
}

/// A poll to put on a post (`poll` on POST /posts, and on PATCH to replace it).
public struct PollInput: Codable, Sendable, Hashable {
    /// 2 to 10 different options, each at most 50 characters.
    public var options: [String]
    /// Several options may be chosen (single choice when left out).
    public var multiple: Bool?
    /// When it ends: from 5 minutes to a month from now.
    public var expiresInSeconds: Int
    public init(options: [String], multiple: Bool? = nil, expiresInSeconds: Int) {
        self.options = options
        self.multiple = multiple
        self.expiresInSeconds = expiresInSeconds
    }
}

/// POST /posts/{id}/poll/votes: the chosen options, by index (one in a single-choice poll).
public struct PollVoteRequest: Codable, Sendable {
    public var choices: [Int]
    public init(choices: [Int]) { self.choices = choices }
}

/// A version's poll in a post's edit history: what it asked, not its votes.
public struct PollVersion: Codable, Sendable, Hashable {
    public var options: [String]
    public var multiple: Bool
    public init(options: [String], multiple: Bool) {
        self.options = options
        self.multiple = multiple
    }
}
