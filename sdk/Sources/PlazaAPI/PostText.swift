/// A post's or a comment's plain text as the pieces every door links: web addresses,
/// `@username` mentions and `#hashtags`, with the plain text between them. The server stores and
/// links tags and mentions with these rules, and an app that shows a post can tap them the same
/// way (`PostText.segments(of:)`).
///
/// - A **link** starts at `http://` or `https://` not preceded by a letter or digit and runs to
///   the next space, `<`, `>` or quote; trailing punctuation (`.,;:!?'` and an unbalanced `)`)
///   stays text. Nothing inside a link is a tag or a mention (`https://example.com/#top`).
/// - A **mention** is `@` not preceded by a username character (`ana@example.com` is none) and
///   followed by 3–30 of them (ASCII letters, digits, `_`), then by anything else.
/// - A **hashtag** is `#` not preceded by a letter, digit, mark, `_`, `/`, `)` or `&` and followed
///   by 1–`Hashtag.maxLength` letters, marks, digits or `_` with at least one that is not a digit,
///   as Mastodon reads them (`#ramen`, `#東京`, `#café_2`; not `#1`, `a#b` or `&#38;`).
public enum PostText {
    public enum Segment: Sendable, Hashable {
        case text(String)
        /// The address as written.
        case link(String)
        /// The username as written, without `@`.
        case mention(String)
        /// The tag as written, without `#`.
        case hashtag(String)
    }

    /// The longest hashtag, in Unicode scalars: a longer run after `#` is no tag.
    public static let maxTagLength = 60

    public static func segments(of text: String) -> [Segment] {
        let scalars = Array(text.unicodeScalars)
        var segments: [Segment] = []
        var plainStart = 0
        var i = 0
        func flush(upTo end: Int) {
            if end > plainStart { segments.append(.text(string(scalars[plainStart..<end]))) }
        }
        while i < scalars.count {
            if let (segment, end) = piece(at: i, in: scalars) {
                flush(upTo: i)
                segments.append(segment)
                i = end
                plainStart = end
            } else {
                i += 1
            }
        }
        flush(upTo: scalars.count)
        return segments
    }

    /// The hashtags of `texts` as written, in order, each once (compared as written).
    public static func hashtags(in texts: String?...) -> [String] {
        var found: [String] = []
        for text in texts {
            guard let text, text.unicodeScalars.contains("#") else { continue }
            for case .hashtag(let tag) in segments(of: text) where !found.contains(tag) { found.append(tag) }
        }
        return found
    }

    /// The usernames mentioned in `texts`, lower-cased, in order, each once.
    public static func mentions(in texts: String?...) -> [String] {
        var found: [String] = []
        for text in texts {
            guard let text, text.unicodeScalars.contains("@") else { continue }
            for case .mention(let name) in segments(of: text) {
                let key = name.lowercased()
                if !found.contains(key) { found.append(key) }
            }
        }
        return found
    }

    private static func piece(at i: Int, in s: [Unicode.Scalar]) -> (Segment, Int)? {
        let before = i > 0 ? s[i - 1] : nil
        switch s[i] {
        case "h":
            guard before.map({ !isWordScalar($0) }) ?? true, let end = linkEnd(from: i, in: s) else { return nil }
            return (.link(string(s[i..<end])), end)
        case "@":
            guard before.map({ !isUsernameScalar($0) }) ?? true else { return nil }
            var end = i + 1
            while end < s.count, isUsernameScalar(s[end]) { end += 1 }
            guard (3...30).contains(end - i - 1) else { return nil }
            return (.mention(string(s[(i + 1)..<end])), end)
        case "#":
            if let before, isTagScalar(before) || before == "/" || before == ")" || before == "&" { return nil }
            var end = i + 1
            while end < s.count, isTagScalar(s[end]) { end += 1 }
            let tag = s[(i + 1)..<end]
            guard (1...maxTagLength).contains(tag.count), tag.contains(where: { !isDigit($0) }) else { return nil }
            return (.hashtag(string(tag)), end)
        default:
            return nil
        }
    }

    /// Where the link starting at `i` ends, or nil when none starts there.
    private static func linkEnd(from i: Int, in s: [Unicode.Scalar]) -> Int? {
        let scheme: Int
        if starts(s, at: i, with: "https://") {
            scheme = 8
        } else if starts(s, at: i, with: "http://") {
            scheme = 7
        } else {
            return nil
        }
        var end = i + scheme
        while end < s.count, !s[end].properties.isWhitespace, !"<>\"".unicodeScalars.contains(s[end]) { end += 1 }
        // Trailing punctuation ends the sentence, not the address; a `)` closes one the address opened.
        while end > i + scheme {
            let last = s[end - 1]
            if ".,;:!?'".unicodeScalars.contains(last) {
                end -= 1
            } else if last == ")", s[i..<end].filter({ $0 == "(" }).count < s[i..<end].filter({ $0 == ")" }).count {
                end -= 1
            } else {
                break
            }
        }
        return end > i + scheme ? end : nil
    }

    private static func starts(_ s: [Unicode.Scalar], at i: Int, with prefix: String) -> Bool {
        var j = i
        for p in prefix.unicodeScalars {
            guard j < s.count, s[j] == p else { return false }
            j += 1
        }
        return true
    }

    private static func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    private static func isDigit(_ s: Unicode.Scalar) -> Bool { s.properties.numericType == .decimal }

    private static func isWordScalar(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic || isDigit(s) }

    static func isTagScalar(_ s: Unicode.Scalar) -> Bool {
        if s == "_" || s.properties.isAlphabetic || isDigit(s) { return true }
        switch s.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }

    private static func isUsernameScalar(_ s: Unicode.Scalar) -> Bool {
        switch s {
        case "a"..."z", "A"..."Z", "0"..."9", "_": true
        default: false
        }
    }
}
