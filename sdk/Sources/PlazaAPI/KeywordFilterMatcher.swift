/// A person's active filters for one context, ready to match: each phrase folded once. The
/// server applies it to every page it answers, and PlazaKit to what it caches and streams, so
/// both decide alike. Pure and total: any text and any phrase, never a trap.
///
/// Text is folded as search folds it (`TextFolding`). A phrase that is not whole-word matches
/// anywhere in the folded text; a whole-word one only where nothing that is part of a word (a
/// letter, mark, digit or connector such as `_`, Unicode's `\w`) touches it, on a side where the
/// phrase itself begins or ends with such a character, as Mastodon's `\b` does.
public struct KeywordFilters: Sendable {
    struct Compiled: Sendable {
        let filter: KeywordFilter
        let phrase: PhrasePattern
    }

    let compiled: [Compiled]
    /// The viewer's own posts are never filtered (as Mastodon).
    let viewer: String?

    /// The filters of `filters` active at `now` in `context`.
    public init(_ filters: [KeywordFilter], context: FilterContext, viewer: String? = nil, now: Timestamp = .now) {
        compiled = filters.compactMap { filter in
            guard filter.contexts.contains(context), filter.isActive(at: now) else { return nil }
            let phrase = PhrasePattern(filter.phrase, wholeWord: filter.wholeWord)
            return phrase.isEmpty ? nil : Compiled(filter: filter, phrase: phrase)
        }
        self.viewer = viewer
    }

    /// No filter applies.
    public var isEmpty: Bool { compiled.isEmpty }

    /// The filters that match a text made of `parts` (each matched on its own).
    public func matching(_ parts: [String]) -> [KeywordFilter] {
        guard !compiled.isEmpty else { return [] }
        let texts = parts.filter { !$0.isEmpty }.map { Array(TextFolding.fold($0).unicodeScalars) }
        return compiled.filter { entry in texts.contains(where: entry.phrase.matches) }.map(\.filter)
    }

    /// What the filters make of a text made of `parts`: hide when a hiding filter matches, else
    /// warn with every warning filter that matches, else nil.
    public func verdict(for parts: [String]) -> FilterVerdict? {
        let matched = matching(parts)
        if matched.contains(where: { $0.action == .hide }) { return .hide }
        return matched.isEmpty ? nil : .warn(matched)
    }

    /// The filters that match a post: in its content warning, title, body, link title or media descriptions;
    /// none for the viewer's own.
    public func matching(_ post: Post) -> [KeywordFilter] {
        guard !compiled.isEmpty, post.author.id != viewer else { return [] }
        var parts = [post.contentWarning ?? "", post.title ?? "", post.body ?? "", post.link?.title ?? ""]
        parts += post.media.compactMap(\.description)
        return matching(parts)
    }

    /// A post's verdict (see `matching(_:)`).
    public func verdict(for post: Post) -> FilterVerdict? {
        let matched = matching(post)
        if matched.contains(where: { $0.action == .hide }) { return .hide }
        return matched.isEmpty ? nil : .warn(matched)
    }

    /// A post asked for on its own (its page), which is never taken out: it names every filter
    /// that matched in `filtered`, hiding ones too, for the reader to decide.
    public func marked(_ post: Post) -> Post {
        let matched = matching(post)
        guard !matched.isEmpty else { return post }
        var post = post
        post.filtered = matched.map(\.match)
        return post
    }

    /// A comment's verdict, from its body; nil for the viewer's own.
    public func verdict(for comment: Comment) -> FilterVerdict? {
        guard !compiled.isEmpty, comment.author.id != viewer else { return nil }
        return verdict(for: [comment.body])
    }

    /// `posts` without those a filter hides, each warned one with `filtered` set (others as they were).
    public func apply(to posts: [Post]) -> [Post] {
        guard !compiled.isEmpty else { return posts }
        return posts.compactMap { post in
            switch verdict(for: post) {
            case nil: return post
            case .hide: return nil
            case .warn(let filters):
                var post = post
                post.filtered = filters.map(\.match)
                return post
            }
        }
    }

    /// A page with `apply(to:)` applied; its cursor stays the unfiltered page's, so a page may
    /// come back shorter and the next one starts where the unfiltered one would (as Mastodon).
    public func apply(to page: Page<Post>) -> Page<Post> {
        Page(items: apply(to: page.items), nextCursor: page.nextCursor)
    }

    /// `comments` without those a filter hides, each warned one with `filtered` set.
    public func apply(to comments: [Comment]) -> [Comment] {
        guard !compiled.isEmpty else { return comments }
        return comments.compactMap { comment in
            switch verdict(for: comment) {
            case nil: return comment
            case .hide: return nil
            case .warn(let filters):
                var comment = comment
                comment.filtered = filters.map(\.match)
                return comment
            }
        }
    }

    /// Whether `phrase` matches `text`, both folded here (the matcher's rule on its own).
    public static func matches(_ phrase: String, in text: String, wholeWord: Bool) -> Bool {
        let pattern = PhrasePattern(phrase, wholeWord: wholeWord)
        return !pattern.isEmpty && pattern.matches(Array(TextFolding.fold(text).unicodeScalars))
    }
}

/// A folded phrase and its Knuth–Morris–Pratt table: a search costs the text's length plus the
/// phrase's, whatever the text repeats.
struct PhrasePattern: Sendable {
    let scalars: [Unicode.Scalar]
    let failure: [Int]
    /// Where the match must not touch a word character: before it, after it.
    let boundedStart: Bool
    let boundedEnd: Bool

    init(_ phrase: String, wholeWord: Bool) {
        let scalars = Array(TextFolding.fold(phrase).unicodeScalars)
        self.scalars = scalars
        var failure = [Int](repeating: 0, count: scalars.count)
        var k = 0
        for i in scalars.indices.dropFirst() {
            while k > 0, scalars[i] != scalars[k] { k = failure[k - 1] }
            if scalars[i] == scalars[k] { k += 1 }
            failure[i] = k
        }
        self.failure = failure
        boundedStart = wholeWord && scalars.first.map(Self.isWordPart) == true
        boundedEnd = wholeWord && scalars.last.map(Self.isWordPart) == true
    }

    var isEmpty: Bool { scalars.isEmpty }

    /// Found in `text` (folded scalars), at word boundaries where the phrase asks for them.
    func matches(_ text: [Unicode.Scalar]) -> Bool {
        guard !scalars.isEmpty, scalars.count <= text.count else { return false }
        var k = 0
        for i in text.indices {
            while k > 0, text[i] != scalars[k] { k = failure[k - 1] }
            if text[i] == scalars[k] { k += 1 }
            if k == scalars.count {
                if isBounded(start: i + 1 - k, end: i + 1, in: text) { return true }
                k = failure[k - 1]
            }
        }
        return false
    }

    private func isBounded(start: Int, end: Int, in text: [Unicode.Scalar]) -> Bool {
        if boundedStart, start > 0, Self.isWordPart(text[start - 1]) { return false }
        if boundedEnd, end < text.count, Self.isWordPart(text[end]) { return false }
        return true
    }

    /// A letter, mark, digit or connector punctuation: what `\w` matches.
    static func isWordPart(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber, .connectorPunctuation:
            true
        default: false
        }
    }
}
