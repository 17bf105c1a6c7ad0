/// Who may see what, as SQL fragments that every read path composes: the one place these rules
/// live, so no store writes its own.
///
/// - A block either way hides each person, and everything they made, from the other.
/// - A suspended person, and everything they made, is hidden from everyone.
/// - A post is read by its audience: anyone (`public`), the author's followers (`followers`) or
///   the members of its spaces (`members`); its author always reads it, and only its author
///   while one of its videos is processing.
/// - A mute hides the muted person's posts from the muter's feeds (not from their profile).
///
/// A viewer is given as a bind (`Int64?`, nil for anonymous) or, where one query serves many
/// people (the event stream), as a column (`SQL`).
package enum Visibility {
    /// True when the people in `a` and `b` (columns or binds) have a block either way.
    static func blocked(between a: SQL, and b: SQL) -> SQL {
        """
        (EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(a) AND b.blocked_id = \(b)) \
        OR EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(b) AND b.blocked_id = \(a)))
        """
    }

    /// True when the person in `column` is not suspended.
    static func active(_ column: SQL) -> SQL {
        "NOT EXISTS (SELECT 1 FROM users sx WHERE sx.id = \(column) AND sx.suspended_at IS NOT NULL)"
    }

    /// True when the person in `column` (a user id column or bind) is shown to `viewer`:
    /// anyone not suspended, less (for a signed-in viewer) anyone with a block either way.
    static func person(_ column: SQL, seenBy viewer: Int64?) -> SQL {
        person(column, seenBy: bind(viewer))
    }

    static func person(_ column: SQL, seenBy viewer: SQL?) -> SQL {
        guard let viewer else { return active(column) }
        return "(\(active(column)) AND NOT \(blocked(between: viewer, and: column)))"
    }

    /// True when `viewer` may read the post row `alias` (a row of `posts`), and so what hangs
    /// off it: its comments' thread, its likes, its media, the text of saves of it.
    static func post(_ alias: String = "p", readableBy viewer: Int64?) -> SQL {
        post(alias, readableBy: bind(viewer))
    }

    static func post(_ alias: String, readableBy viewer: SQL?) -> SQL {
        let audience: SQL = "\(unsafeRaw: alias).audience"
        let author: SQL = "\(unsafeRaw: alias).author_id"
        let processing: SQL = "\(unsafeRaw: alias).processing"
        guard let viewer else { return "(\(audience) = 'public' AND NOT \(processing) AND \(active(author)))" }
        return """
            (\(person(author, seenBy: viewer)) AND (\(author) = \(viewer) OR NOT \(processing)) \
            AND (\(audience) = 'public' OR \(author) = \(viewer) \
            OR (\(audience) = 'followers' AND EXISTS (SELECT 1 FROM follows vf WHERE vf.follower_id = \(viewer) AND vf.followee_id = \(author))) \
            OR (\(audience) = 'members' AND EXISTS (SELECT 1 FROM post_spaces vs JOIN space_members vm ON vm.space_id = vs.space_id \
            WHERE vs.post_id = \(unsafeRaw: alias).id AND vm.user_id = \(viewer)))))
            """
    }

    /// True when post `id` exists and `viewer` may read it, for a write that then adds rows
    /// referring to it: on PostgreSQL the post is also kept from being deleted until the
    /// transaction ends (a delete under way is waited for, and then the post is gone), so those
    /// rows cannot fail their foreign key on a post deleted meanwhile.
    static func post(id: Int64, readableBy viewer: Int64?, on dialect: Dialect) -> SQL {
        let lock = dialect.rowLock(.keyShare) ?? ""
        return "EXISTS (SELECT 1 FROM posts vp WHERE vp.id = \(bind: id) AND \(post("vp", readableBy: viewer))\(lock))"
    }

    /// True when `viewer` may read the comment row `alias` (on a post they may read).
    static func comment(_ alias: String = "c", seenBy viewer: Int64?) -> SQL {
        person("\(unsafeRaw: alias).author_id", seenBy: viewer)
    }

    /// True unless `viewer` muted the person in `column`: for feeds, not for profiles.
    static func unmuted(_ column: SQL, by viewer: Int64?) -> SQL {
        unmuted(column, by: bind(viewer))
    }

    static func unmuted(_ column: SQL, by viewer: SQL?) -> SQL {
        guard let viewer else { return "TRUE" }
        return "NOT EXISTS (SELECT 1 FROM mutes mu WHERE mu.muter_id = \(viewer) AND mu.muted_id = \(column))"
    }

    /// Which blocks hide a profile from its viewer.
    package enum ProfileHiding: Sendable {
        /// A block either way, as for everything else the two people would see of each other.
        case eitherWay
        /// Only the profile owner's block of the viewer: for the viewer's own block or unblock
        /// of someone they may have blocked.
        case theirBlock
    }

    /// True when the profile of the user row `alias` is shown to `viewer` under `hiding`.
    static func profile(_ alias: String = "u", seenBy viewer: Int64?, hiding: ProfileHiding = .eitherWay)
        -> SQL
    {
        let suspendedHidden: SQL = "\(unsafeRaw: alias).suspended_at IS NULL"
        guard let viewer else { return suspendedHidden }
        switch hiding {
        case .eitherWay:
            return "(\(suspendedHidden) AND NOT \(blocked(between: "\(bind: viewer)", and: "\(unsafeRaw: alias).id")))"
        case .theirBlock:
            return """
                (\(suspendedHidden) AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(unsafeRaw: alias).id \
                AND b.blocked_id = \(bind: viewer)))
                """
        }
    }

    private static func bind(_ viewer: Int64?) -> SQL? {
        viewer.map { "\(bind: $0)" }
    }
}
