/// `@username` mentions in text.
enum Mentions {
    static let limit = 10

    /// The lower-cased usernames mentioned in `texts`, first mention first, at most `limit`.
    /// A mention is `@` not preceded by a username character (so `ana@example.com` is none)
    /// followed by 3–30 username characters and then a non-username character or the end.
    static func usernames(in texts: String?...) -> [String] {
        var found: [String] = []
        for text in texts {
            guard let text else { continue }
            let scalars = Array(text.unicodeScalars)
            var i = 0
            while i < scalars.count, found.count < limit {
                defer { i += 1 }
                guard scalars[i] == "@", i == 0 || !isUsernameScalar(scalars[i - 1]) else { continue }
                var end = i + 1
                while end < scalars.count, isUsernameScalar(scalars[end]) { end += 1 }
                let length = end - i - 1
                guard (3...30).contains(length) else { continue }
                let name = String(String.UnicodeScalarView(scalars[(i + 1)..<end])).lowercased()
                if !found.contains(name) { found.append(name) }
                i = end - 1
            }
        }
        return found
    }

    private static func isUsernameScalar(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "a"..."z", "A"..."Z", "0"..."9", "_": true
        default: false
        }
    }
}
