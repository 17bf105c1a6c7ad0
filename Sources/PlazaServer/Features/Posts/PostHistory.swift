import PlazaAPI

/// A post's edit history: each edit of its title, text, warning or sensitivity keeps the
/// version before (`post_versions`), and tells the people who boosted it or commented on it,
/// as Mastodon tells those who boosted a status. Readable by whoever may read the post.
package struct PostHistory: Sendable {
    let db: Database

    /// Keeps post `id` as it reads now, dated when it was written, before an edit changes it.
    static func keepVersion(of id: Int64, on db: Connection) async throws {
        try await db.exec(
            """
            INSERT INTO post_versions (post_id, created_at, title, body, content_warning, sensitive, media, poll)
            SELECT id, COALESCE(edited_at, created_at), title, body, content_warning, sensitive, media, \(pollVersion)
            FROM posts p WHERE id = \(bind: id) ON CONFLICT DO NOTHING
            """)
    }

    /// The poll of post `p` as a version keeps it: `m|s` and its options' JSON.
    private static let pollVersion: SQL = """
        (SELECT CASE WHEN pl.multiple THEN 'm' ELSE 's' END || pl.options FROM polls pl WHERE pl.post_id = p.id) AS poll
        """

    /// Tells the people who boosted post `id`, commented on it or voted in its poll (not its
    /// author) that it changed.
    static func notifyReaders(of id: Int64, author: Int64, ids: IDGenerator, on db: Connection) async throws {
        let readers = try await db.rows(
            """
            SELECT user_id FROM boosts WHERE post_id = \(bind: id)
            UNION SELECT author_id AS user_id FROM comments WHERE post_id = \(bind: id)
            UNION SELECT user_id FROM poll_votes WHERE post_id = \(bind: id)
            """
        ).map { try $0.decode(column: "user_id", as: Int64.self) }.filter { $0 != author }
        try await NotificationStore.notify(
            readers.map { .edited(post: id, reader: $0, by: author) }, ids: ids, on: db)
    }

    /// The versions of a post `viewer` may read, newest first: as it reads now, then each one
    /// an edit replaced. Nil when they may not read it.
    package func versions(of id: Int64, viewer: Int64?) async throws -> [PostVersion]? {
        try await db.read { db -> [PostVersion]? in
            guard
                let current = try await db.first(
                    """
                    SELECT COALESCE(p.edited_at, p.created_at) AS created_at, p.title, p.body, p.content_warning,
                        p.sensitive, p.media, \(Self.pollVersion) FROM posts p
                    WHERE p.id = \(bind: id) AND \(Visibility.post("p", readableBy: viewer))
                    """)
            else { return nil }
            let older = try await db.rows(
                """
                SELECT created_at, title, body, content_warning, sensitive, media, poll FROM post_versions
                WHERE post_id = \(bind: id) ORDER BY created_at DESC LIMIT \(bind: Self.maxVersions)
                """)
            return try ([current] + older).map(Self.version)
        }
    }

    /// A kept poll's text (`pollVersion`) as a version shows it.
    private static func poll(_ text: String) -> PollVersion? {
        guard let kind = text.first, kind == "m" || kind == "s" else { return nil }
        return PollVersion(options: PollStore.Stored.options(String(text.dropFirst())), multiple: kind == "m")
    }

    /// The most versions a history shows.
    static let maxVersions = 100

    private static func version(_ row: Row) throws -> PostVersion {
        PostVersion(
            title: try row.decode(column: "title", as: String?.self),
            body: try row.decode(column: "body", as: String?.self),
            contentWarning: try row.decode(column: "content_warning", as: String?.self),
            sensitive: try row.decode(column: "sensitive", as: Bool.self),
            media: MediaRecord.list(try row.decode(column: "media", as: String?.self)).map(\.media),
            poll: try row.decode(column: "poll", as: String?.self).flatMap(Self.poll),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }
}
