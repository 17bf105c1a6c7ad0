import PlazaAPI

/// `@username` mentions in text (`PostText` reads them, as every door links them).
enum Mentions {
    static let limit = 10

    /// The lower-cased usernames mentioned in `texts`, first mention first, at most `limit`.
    static func usernames(in texts: String?...) -> [String] {
        var found: [String] = []
        for text in texts where found.count < limit {
            for name in PostText.mentions(in: text) where !found.contains(name) && found.count < limit {
                found.append(name)
            }
        }
        return found
    }
}
