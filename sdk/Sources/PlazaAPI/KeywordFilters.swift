/// Keyword filters (`/me/filters`): a person's words or phrases that hide posts and comments,
/// or put them behind a warning, in the places they choose. Mastodon's filters v2, with one
/// phrase a filter.

/// Where a filter applies: the home feed, notifications, public feeds (the global feed,
/// spaces, search, hashtags), a post's page and its comments, and a person's profile.
public enum FilterContext: String, Codable, Sendable, Hashable, CaseIterable {
    case home, notifications, `public`, thread, profile
}

/// What a filter does to what it matches: takes it out, or shows it behind a warning.
public enum FilterAction: String, Codable, Sendable, Hashable, CaseIterable {
    case hide, warn
}

public struct KeywordFilter: Codable, Sendable, Hashable {
    public var id: String
    /// As its owner wrote it (trimmed); matched folded, as search folds text.
    public var phrase: String
    /// The phrase matches only where it is bounded by what is not a letter or digit.
    public var wholeWord: Bool
    public var contexts: [FilterContext]
    public var action: FilterAction
    /// When the filter stops applying; null for never.
    @Nullable public var expiresAt: Timestamp?
    public var createdAt: Timestamp

    public init(
        id: String, phrase: String, wholeWord: Bool, contexts: [FilterContext], action: FilterAction,
        expiresAt: Timestamp?, createdAt: Timestamp
    ) {
        self.id = id
        self.phrase = phrase
        self.wholeWord = wholeWord
        self.contexts = contexts
        self.action = action
        self.expiresAt = expiresAt
        self.createdAt = createdAt
    }

    /// Not expired at `now`.
    public func isActive(at now: Timestamp) -> Bool { expiresAt.map { $0 > now } ?? true }

    /// How a post this filter matched names it.
    public var match: FilterMatch { FilterMatch(id: id, phrase: phrase, action: action) }
}

/// A filter that matched a post (`Post.filtered`).
public struct FilterMatch: Codable, Sendable, Hashable {
    public var id: String
    public var phrase: String
    public var action: FilterAction
    public init(id: String, phrase: String, action: FilterAction) {
        self.id = id
        self.phrase = phrase
        self.action = action
    }
}

/// `POST /me/filters`. `contexts` and `action` are strings so that an unknown one is a 422 that
/// names the field, not a malformed body.
public struct CreateKeywordFilterRequest: Codable, Sendable {
    public var phrase: String
    /// Default true.
    public var wholeWord: Bool?
    public var contexts: [String]
    /// `hide` or `warn` (the default).
    public var action: String?
    public var expiresAt: Timestamp?
    public init(
        phrase: String, wholeWord: Bool? = nil, contexts: [String], action: String? = nil, expiresAt: Timestamp? = nil
    ) {
        self.phrase = phrase
        self.wholeWord = wholeWord
        self.contexts = contexts
        self.action = action
        self.expiresAt = expiresAt
    }
}

/// `PATCH /me/filters/{id}`: the fields given change; `expiresAt: null` makes it never expire.
public struct UpdateKeywordFilterRequest: Codable, Sendable {
    public var phrase: String?
    public var wholeWord: Bool?
    public var contexts: [String]?
    public var action: String?
    public var expiresAt: FieldUpdate<Timestamp>
    public init(
        phrase: String? = nil, wholeWord: Bool? = nil, contexts: [String]? = nil, action: String? = nil,
        expiresAt: FieldUpdate<Timestamp> = .keep
    ) {
        self.phrase = phrase
        self.wholeWord = wholeWord
        self.contexts = contexts
        self.action = action
        self.expiresAt = expiresAt
    }
}

/// What a person's filters make of a post or comment.
public enum FilterVerdict: Sendable, Hashable {
    /// Shown behind a warning naming these filters.
    case warn([KeywordFilter])
    /// Taken out.
    case hide
}
