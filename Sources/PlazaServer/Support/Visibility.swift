import SQLKit

/// Who may see what, as SQL fragments that every read path composes: the one place these rules
/// live, so no store writes its own. Today the rule is blocks: a block either way hides each
/// person, and everything they made, from the other. Audiences (who a post is for) go here too.
enum Visibility {
    /// True when the people in `a` and `b` (columns or binds) have a block either way.
    static func blocked(between a: SQLQueryString, and b: SQLQueryString) -> SQLQueryString {
        """
        (EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(a) AND b.blocked_id = \(b)) \
        OR EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(b) AND b.blocked_id = \(a)))
        """
    }

    /// True when the person in `column` (a user id column or bind) is shown to `viewer`:
    /// anyone to an anonymous viewer, else anyone without a block either way.
    static func person(_ column: SQLQueryString, seenBy viewer: Int64?) -> SQLQueryString {
        guard let viewer else { return "TRUE" }
        return "NOT \(blocked(between: "\(bind: viewer)", and: column))"
    }

    /// True when `viewer` may read the post row `alias` (a row of `posts`), and so what hangs
    /// off it: its comments' thread, its likes, its media, the text of saves of it.
    static func post(_ alias: String = "p", readableBy viewer: Int64?) -> SQLQueryString {
        person("\(unsafeRaw: alias).author_id", seenBy: viewer)
    }

    /// True when post `id` exists and `viewer` may read it.
    static func post(id: Int64, readableBy viewer: Int64?) -> SQLQueryString {
        "EXISTS (SELECT 1 FROM posts vp WHERE vp.id = \(bind: id) AND \(post("vp", readableBy: viewer)))"
    }

    /// True when `viewer` may read the comment row `alias` (on a post they may read).
    static func comment(_ alias: String = "c", seenBy viewer: Int64?) -> SQLQueryString {
        person("\(unsafeRaw: alias).author_id", seenBy: viewer)
    }

    /// Which blocks hide a profile from its viewer.
    enum ProfileHiding: Sendable {
        /// A block either way, as for everything else the two people would see of each other.
        case eitherWay
        /// Only the profile owner's block of the viewer: for the viewer's own block or unblock
        /// of someone they may have blocked.
        case theirBlock
    }

    /// True when the profile of the user row `alias` is shown to `viewer` under `hiding`.
    static func profile(_ alias: String = "u", seenBy viewer: Int64?, hiding: ProfileHiding = .eitherWay)
        -> SQLQueryString
    {
        guard let viewer else { return "TRUE" }
        switch hiding {
        case .eitherWay:
            return person("\(unsafeRaw: alias).id", seenBy: viewer)
        case .theirBlock:
            return
                "NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(unsafeRaw: alias).id AND b.blocked_id = \(bind: viewer))"
        }
    }
}
