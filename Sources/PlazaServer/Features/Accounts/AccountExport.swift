import Foundation
import Logging
import NIOPosix
import PlazaAPI
import ZIPFoundation

/// A person's data as a ZIP archive, readable without Plaza (`plaza export`, `GET /me/export`):
/// JSON files in the API's shapes (documented in the OpenAPI document) with their media files,
/// and an `index.html` that shows their posts with their photos.
///
/// `<username>-plaza/`: `README.txt`, `index.html`, `account.json` (the `Me` object),
/// `posts.json` (their `Post`s, newest first), `comments.json`, `likes.json`, `follows.json`, `lists.json`, `notes.json`,
/// `collections.json` (each with its items), `spaces.json` (memberships), `history.json` (posts
/// viewed), `media.json` (what each file in `media/` is) and `media/<id>.<ext>` (the largest
/// variant of each of their uploads: photos, videos, avatar, space images).
struct AccountExport: Sendable {
    let db: Database
    let accounts: AccountStore
    let posts: PostStore
    let collections: CollectionStore
    let storage: any MediaStorage
    var threadPool: NIOThreadPool = .singleton

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    struct CommentEntry: Codable, Sendable {
        var id: String
        var postId: String
        var body: String
        var createdAt: Timestamp
    }

    struct LikeEntry: Codable, Sendable {
        var postId: String
        var likedAt: Timestamp
    }

    struct BoostEntry: Codable, Sendable {
        var postId: String
        var boostedAt: Timestamp
    }

    struct VoteEntry: Codable, Sendable {
        var postId: String
        /// The options chosen, by index.
        var choices: [Int]
        var votedAt: Timestamp
    }

    struct TagEntry: Codable, Sendable {
        var tag: String
        var since: Timestamp
    }

    /// A list of accounts (Mastodon's lists): its title, settings and its accounts' usernames.
    struct ListEntry: Codable, Sendable {
        var title: String
        var repliesPolicy: String
        var exclusive: Bool
        var members: [String]
    }

    struct NoteEntry: Codable, Sendable {
        var username: String
        var note: String
        var updatedAt: Timestamp
    }

    struct FollowEntry: Codable, Sendable {
        var username: String
        var since: Timestamp
    }

    struct Follows: Codable, Sendable {
        var following: [FollowEntry]
        var followers: [FollowEntry]
    }

    struct CollectionEntry: Codable, Sendable {
        var collection: SavedCollection
        var items: [CollectionItem]
    }

    struct SpaceEntry: Codable, Sendable {
        var slug: String
        var name: String
        var role: String
        var joinedAt: Timestamp
    }

    struct HistoryEntry: Codable, Sendable {
        var postId: String
        var firstViewedAt: Timestamp
        var lastViewedAt: Timestamp
        var views: Int
        var clicks: Int
    }

    struct MediaEntry: Codable, Sendable {
        var id: String
        var contentType: String
        var postId: String?
        /// Relative to the archive's folder; nil when the file was not there (a video still processing).
        var file: String?
    }

    /// The archive's name: `plaza-<username>-<yyyy-mm-dd>.zip`.
    static func fileName(username: String, now: Date = Date()) -> String {
        "plaza-\(username)-\(now.ISO8601Format().prefix(10)).zip"
    }

    /// Writes the archive of `userID` to `zipPath`, staging its files in a folder under `scratch`
    /// (removed after). Returns the username. On an error nothing is left behind, the archive
    /// neither.
    @discardableResult
    func write(userID: Int64, to zipPath: String, scratch: String, logger: Logger) async throws -> String {
        let me = try await accounts.me(userID: userID)
        let username = me.user.username
        let staging = (scratch as NSString).appendingPathComponent(
            "export-\(userID)-\(UInt64.random(in: 0...UInt64.max))")
        let root = (staging as NSString).appendingPathComponent("\(username)-plaza")
        let mediaFolder = (root as NSString).appendingPathComponent("media")
        try await threadPool.runIfActive {
            try FileManager.default.createDirectory(atPath: mediaFolder, withIntermediateDirectories: true)
        }
        do {
            let allPosts = try await self.allPosts(of: userID)
            let media = try await copyMedia(of: userID, into: mediaFolder, logger: logger)
            let files: [(String, any Encodable & Sendable)] = [
                ("account.json", me),
                ("posts.json", allPosts),
                ("comments.json", try await comments(of: userID)),
                ("likes.json", try await likes(of: userID)),
                ("boosts.json", try await boosts(of: userID)),
                ("votes.json", try await votes(of: userID)),
                ("hashtags.json", try await followedTags(of: userID)),
                ("follows.json", try await follows(of: userID)),
                ("lists.json", try await lists(of: userID)),
                ("notes.json", try await notes(of: userID)),
                ("collections.json", try await allCollections(of: userID)),
                ("spaces.json", try await spaces(of: userID)),
                ("history.json", try await history(of: userID)),
                ("media.json", media),
            ]
            let index = Self.index(me: me, posts: allPosts, media: media)
            try await threadPool.runIfActive {
                for (name, value) in files {
                    try Self.encoder.encode(value).write(to: URL(fileURLWithPath: root + "/" + name))
                }
                try Data(Self.readme(username: username).utf8).write(to: URL(fileURLWithPath: root + "/README.txt"))
                try Data(index.utf8).write(to: URL(fileURLWithPath: root + "/index.html"))
                unlink(zipPath)
                try FileManager.default.zipItem(
                    at: URL(fileURLWithPath: root), to: URL(fileURLWithPath: zipPath), shouldKeepParent: true,
                    compressionMethod: .deflate)
                try FileManager.default.removeItem(atPath: staging)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            unlink(zipPath)
            throw error
        }
        return username
    }

    // MARK: the parts

    /// Every post of theirs, newest first, a page at a time; read past the visibility rules, which
    /// hide a suspended person's posts even from themselves (an operator exports such accounts too).
    private func allPosts(of user: Int64) async throws -> [Post] {
        var all: [Post] = []
        var cursor: Cursor?
        repeat {
            var sql: SQL = """
                SELECT \(PostRecord.columns(viewer: user)) FROM posts p JOIN users u ON u.id = p.author_id
                WHERE p.author_id = \(bind: user)
                """
            if let cursor { sql += " AND (p.created_at, p.id) < (\(bind: cursor.time), \(bind: cursor.id))" }
            sql += " ORDER BY p.created_at DESC, p.id DESC LIMIT \(bind: PageRequest.maxLimit)"
            let query = sql
            let records = try await db.read { db in try await db.rows(query) }.map(PostRecord.init(row:))
            all += records.map(\.post)
            cursor = records.count == PageRequest.maxLimit ? records.last?.cursor : nil
        } while cursor != nil
        return all
    }

    private func allCollections(of user: Int64) async throws -> [CollectionEntry] {
        var entries: [CollectionEntry] = []
        var cursor: Cursor?
        repeat {
            let page = try await collections.list(
                owner: user, page: PageRequest(limit: PageRequest.maxLimit, cursor: cursor))
            for collection in page.items {
                guard let id = Int64(collection.id) else { continue }
                var items: [CollectionItem] = []
                var itemCursor: Cursor?
                repeat {
                    let itemPage = try await collections.items(
                        collection: id, owner: user, page: PageRequest(limit: PageRequest.maxLimit, cursor: itemCursor),
                        posts: posts)
                    items += itemPage.items
                    itemCursor = itemPage.nextCursor.flatMap(Cursor.init(encoded:))
                } while itemCursor != nil
                entries.append(CollectionEntry(collection: collection, items: items))
            }
            cursor = page.nextCursor.flatMap(Cursor.init(encoded:))
        } while cursor != nil
        return entries
    }

    private func comments(of user: Int64) async throws -> [CommentEntry] {
        try await db.read { db in
            try await db.rows(
                "SELECT id, post_id, body, created_at FROM comments WHERE author_id = \(bind: user) ORDER BY created_at, id"
            )
        }.map {
            CommentEntry(
                id: String(try $0.decode(column: "id", as: Int64.self)),
                postId: String(try $0.decode(column: "post_id", as: Int64.self)),
                body: try $0.decode(column: "body", as: String.self),
                createdAt: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    private func likes(of user: Int64) async throws -> [LikeEntry] {
        try await db.read { db in
            try await db.rows(
                "SELECT post_id, created_at FROM likes WHERE user_id = \(bind: user) ORDER BY created_at, post_id")
        }.map {
            LikeEntry(
                postId: String(try $0.decode(column: "post_id", as: Int64.self)),
                likedAt: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    private func boosts(of user: Int64) async throws -> [BoostEntry] {
        try await db.read { db in
            try await db.rows(
                "SELECT post_id, created_at FROM boosts WHERE user_id = \(bind: user) ORDER BY created_at, post_id")
        }.map {
            BoostEntry(
                postId: String(try $0.decode(column: "post_id", as: Int64.self)),
                boostedAt: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    /// Each poll voted in once, with every option chosen in it.
    private func votes(of user: Int64) async throws -> [VoteEntry] {
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT post_id, choice, created_at FROM poll_votes WHERE user_id = \(bind: user)
                ORDER BY post_id, choice
                """)
        }
        var entries: [VoteEntry] = []
        for row in rows {
            let post = String(try row.decode(column: "post_id", as: Int64.self))
            let choice = try row.decode(column: "choice", as: Int.self)
            let at = Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self))
            if entries.last?.postId == post {
                entries[entries.count - 1].choices.append(choice)
            } else {
                entries.append(VoteEntry(postId: post, choices: [choice], votedAt: at))
            }
        }
        return entries
    }

    private func followedTags(of user: Int64) async throws -> [TagEntry] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT t.name, tf.created_at FROM tag_follows tf JOIN tags t ON t.key = tf.tag
                WHERE tf.user_id = \(bind: user) ORDER BY tf.created_at, t.key
                """)
        }.map {
            TagEntry(
                tag: try $0.decode(column: "name", as: String.self),
                since: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    private func lists(of user: Int64) async throws -> [ListEntry] {
        try await db.read { db in try await ListStore.export(of: user, on: db) }.map { list, members in
            ListEntry(
                title: list.title, repliesPolicy: list.repliesPolicy.rawValue, exclusive: list.exclusive,
                members: members)
        }
    }

    /// The notes the person wrote on others (Mastodon's relationship `note`), oldest first.
    private func notes(of user: Int64) async throws -> [NoteEntry] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT u.username, n.note, n.updated_at FROM account_notes n JOIN users u ON u.id = n.account_id
                WHERE n.user_id = \(bind: user) ORDER BY n.updated_at, n.account_id
                """)
        }.map {
            NoteEntry(
                username: try $0.decode(column: "username", as: String.self),
                note: try $0.decode(column: "note", as: String.self),
                updatedAt: Timestamp(milliseconds: try $0.decode(column: "updated_at", as: Int64.self)))
        }
    }

    private func follows(of user: Int64) async throws -> Follows {
        func people(_ sql: SQL) async throws -> [FollowEntry] {
            try await db.read { db in try await db.rows(sql) }.map {
                FollowEntry(
                    username: try $0.decode(column: "username", as: String.self),
                    since: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
            }
        }
        return Follows(
            following: try await people(
                """
                SELECT u.username, f.created_at FROM follows f JOIN users u ON u.id = f.followee_id
                WHERE f.follower_id = \(bind: user) AND \(Visibility.person("u.id", seenBy: user))
                ORDER BY f.created_at, u.id
                """),
            followers: try await people(
                """
                SELECT u.username, f.created_at FROM follows f JOIN users u ON u.id = f.follower_id
                WHERE f.followee_id = \(bind: user) AND \(Visibility.person("u.id", seenBy: user))
                ORDER BY f.created_at, u.id
                """))
    }

    private func spaces(of user: Int64) async throws -> [SpaceEntry] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT s.slug, s.name, m.role, m.created_at FROM space_members m JOIN spaces s ON s.id = m.space_id
                WHERE m.user_id = \(bind: user) ORDER BY m.created_at, s.id
                """)
        }.map {
            SpaceEntry(
                slug: try $0.decode(column: "slug", as: String.self),
                name: try $0.decode(column: "name", as: String.self),
                role: try $0.decode(column: "role", as: String.self),
                joinedAt: Timestamp(milliseconds: try $0.decode(column: "created_at", as: Int64.self)))
        }
    }

    private func history(of user: Int64) async throws -> [HistoryEntry] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT post_id, first_viewed_at, last_viewed_at, views, clicks FROM post_views
                WHERE user_id = \(bind: user) ORDER BY last_viewed_at DESC, post_id
                """)
        }.map {
            HistoryEntry(
                postId: String(try $0.decode(column: "post_id", as: Int64.self)),
                firstViewedAt: Timestamp(milliseconds: try $0.decode(column: "first_viewed_at", as: Int64.self)),
                lastViewedAt: Timestamp(milliseconds: try $0.decode(column: "last_viewed_at", as: Int64.self)),
                views: try $0.decode(column: "views", as: Int.self),
                clicks: try $0.decode(column: "clicks", as: Int.self))
        }
    }

    /// Copies the largest variant of each of the person's uploads into `folder`, 8 at a time.
    private func copyMedia(of user: Int64, into folder: String, logger: Logger) async throws -> [MediaEntry] {
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT id, content_type, post_id FROM media WHERE owner_id = \(bind: user) AND NOT link_preview ORDER BY id
                """)
        }
        // The `original` variant keeps the upload's type (a video's is its MP4).
        let items = try rows.map {
            (
                id: try $0.decode(column: "id", as: Int64.self),
                contentType: try $0.decode(column: "content_type", as: String.self),
                post: try $0.decode(column: "post_id", as: Int64?.self)
            )
        }
        var entries: [MediaEntry] = []
        for start in stride(from: 0, to: items.count, by: 8) {
            let chunk = items[start..<min(start + 8, items.count)]
            let copied = try await withThrowingTaskGroup(of: MediaEntry.self) { group in
                for item in chunk {
                    group.addTask {
                        let file = "media/\(item.id).\(Self.fileExtension(item.contentType))"
                        let found = try await storage.get(
                            "\(item.id)/\(ImagePipeline.Variant.original.rawValue)",
                            into: (folder as NSString).appendingPathComponent((file as NSString).lastPathComponent))
                        return MediaEntry(
                            id: String(item.id), contentType: item.contentType, postId: item.post.map(String.init),
                            file: found ? file : nil)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            entries += copied.sorted { $0.id < $1.id }
        }
        let missing = entries.filter { $0.file == nil }.count
        if missing > 0 { logger.info("Export of user \(user): \(missing) media files not found (still processing?)") }
        return entries
    }

    static func fileExtension(_ contentType: String) -> String {
        switch contentType {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/webp": "webp"
        case "image/gif": "gif"
        case "image/heic": "heic"
        case "video/mp4": "mp4"
        default: "bin"
        }
    }

    // MARK: the readable parts

    static func readme(username: String) -> String {
        """
        Your data from Plaza, as of the day you downloaded it (@\(username)).

        Open index.html in a browser to read your posts with their photos.

        account.json      your profile, email address and preferences
        posts.json        your posts, newest first
        comments.json     every comment you wrote (postId: the post it is on)
        likes.json        the posts you liked
        boosts.json       the posts you boosted
        votes.json        the polls you voted in, with your choices
        hashtags.json     the hashtags you follow
        follows.json      who you follow, and who follows you
        lists.json        your lists of accounts, with the usernames in each
        notes.json        the private notes you wrote on people's profiles
        collections.json  your collections and what you saved in them
        spaces.json       the spaces you are in, and your role there
        history.json      the posts you viewed
        media.json        what each file in media/ is (postId: the post it belongs to)
        media/            your photos and videos, avatar and space images

        Every file is JSON (UTF-8); dates are in UTC (ISO 8601). Ids are those of the server.

        """
    }

    /// A page that shows the person's posts with their media, with no script and nothing fetched.
    static func index(me: Me, posts: [Post], media: [MediaEntry]) -> String {
        let e = HTMLText.escape
        let files = Dictionary(media.compactMap { entry in entry.file.map { (entry.id, $0) } }) { first, _ in first }
        var html = [
            "<!doctype html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
            "<title>@\(e(me.user.username)) on Plaza</title>",
            "<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:0 auto;padding:1em;line-height:1.5}"
                + "article{border-top:1px solid #ccc;padding:1em 0}img,video{max-width:100%;height:auto}"
                + "time{color:#666;font-size:.9em}</style></head><body>",
            "<h1>\(e(me.user.displayName)) <small>@\(e(me.user.username))</small></h1>",
        ]
        if !me.user.bio.isEmpty { html.append("<p>\(e(me.user.bio))</p>") }
        html.append("<p>\(posts.count) posts</p>")
        for post in posts {
            html.append("<article id=\"post-\(e(post.id))\">")
            html.append("<time datetime=\"\(e(post.createdAt.description))\">\(e(post.createdAt.description))</time>")
            if let title = post.title { html.append("<h2>\(e(title))</h2>") }
            if let body = post.body { html.append("<p>\(e(body).replacing("\n", with: "<br>"))</p>") }
            if let link = post.link {
                html.append("<p><a href=\"\(e(link.url))\">\(e(link.title ?? link.url))</a></p>")
            }
            for item in post.media {
                guard let file = files[item.id] else { continue }
                html.append(
                    item.contentType.hasPrefix("video/")
                        ? "<video controls src=\"\(e(file))\"></video>"
                        : "<img src=\"\(e(file))\" alt=\"\">")
            }
            html.append("</article>")
        }
        html.append("</body></html>")
        return html.joined(separator: "\n")
    }
}
