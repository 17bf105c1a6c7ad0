/// What an OAuth token may do, in Mastodon's scopes: `read`, `write`, `follow`, `push` and
/// `profile`, and the granular `read:statuses`, `write:media`, … A top-level scope grants each
/// of its sub-scopes; `follow` (deprecated by Mastodon, still asked for by many apps) grants
/// reading and changing follows, blocks and mutes.
package struct OAuthScopes: Sendable, Hashable, CustomStringConvertible {
    /// The scopes as granted, in the order asked.
    package let names: [String]

    package static let topLevel = ["read", "write", "follow", "push", "profile"]
    package static let granular: [String: [String]] = [
        "read": [
            "accounts", "blocks", "bookmarks", "favourites", "filters", "follows", "lists", "mutes",
            "notifications", "search", "statuses",
        ],
        "write": [
            "accounts", "blocks", "bookmarks", "conversations", "favourites", "filters", "follows", "lists",
            "media", "mutes", "notifications", "reports", "statuses",
        ],
    ]
    static let followGrants: Set<String> = [
        "read:blocks", "read:follows", "read:mutes", "write:blocks", "write:follows", "write:mutes",
    ]
    /// What an app gets when it names no scopes (Mastodon's default).
    static let defaultScopes = OAuthScopes(validated: ["read"])

    private init(validated names: [String]) { self.names = names }

    /// Parses a space-separated list (`+` also separates, as some apps send it unencoded); nil
    /// when a name is not a scope. Empty means the default, `read`.
    package init?(_ text: String?) {
        let words = (text ?? "").split(whereSeparator: { $0 == " " || $0 == "+" }).map(String.init)
        guard words.count <= 40 else { return nil }
        var names: [String] = []
        for word in words where !names.contains(word) {
            guard Self.isScope(word) else { return nil }
            names.append(word)
        }
        self.names = names.isEmpty ? ["read"] : names
    }

    static func isScope(_ word: String) -> Bool {
        if topLevel.contains(word) { return true }
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let subs = granular[String(parts[0])] else { return false }
        return subs.contains(String(parts[1]))
    }

    /// True when these scopes grant `scope` (a top-level or granular name).
    package func allows(_ scope: String) -> Bool {
        if names.contains(scope) { return true }
        if let colon = scope.firstIndex(of: ":"), names.contains(String(scope[..<colon])) { return true }
        return names.contains("follow") && Self.followGrants.contains(scope)
    }

    /// True when every scope of `other` is granted by these (an app asks only for what it registered).
    package func covers(_ other: OAuthScopes) -> Bool { other.names.allSatisfy(allows) }

    package var description: String { names.joined(separator: " ") }
}
