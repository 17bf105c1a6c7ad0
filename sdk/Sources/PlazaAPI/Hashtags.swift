/// A hashtag as pages and lists show it.
public struct HashtagSummary: Codable, Sendable, Hashable {
    /// A form people wrote it in (the first), without `#`.
    public var name: String
    /// Its key, folded as search folds text: the same for `#Café` and `#cafe`.
    public var key: String
    /// Whether the viewer follows it (false when signed out).
    public var following: Bool
    public init(name: String, key: String, following: Bool) {
        self.name = name
        self.key = key
        self.following = following
    }
}
