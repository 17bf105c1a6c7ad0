import PlazaAPI

/// A row of `posts` joined with its author, as the API shows it.
package struct PostRecord: Sendable {
    /// The columns every post query selects (`p` = posts, `u` = the author), with the post's
    /// spaces, whether it is pinned (to its author's profile, or in `pinnedIn`'s space when a
    /// space's feed reads it) and the viewer's relation to the post (index look-ups per row, so a
    /// page stays one query).
    static func columns(viewer: Int64?, pinnedIn space: Int64? = nil) -> SQL {
        let columns =
            baseColumns
            + ", \(PostSpacesColumn.select), \(PinStore.pinnedColumn(space: space)), \(PollColumn.select(viewer: viewer))"
        let (liked, saved, boosted) = (Columns.viewerLiked, Columns.viewerSaved, Columns.viewerBoosted)
        guard let viewer else {
            return columns
                + ", FALSE AS \(unsafeRaw: liked), FALSE AS \(unsafeRaw: saved), FALSE AS \(unsafeRaw: boosted)"
        }
        return columns + """
            , EXISTS (SELECT 1 FROM likes lk WHERE lk.post_id = p.id AND lk.user_id = \(bind: viewer)) AS \(unsafeRaw: liked), \
            EXISTS (SELECT 1 FROM collection_items ci WHERE ci.owner_id = \(bind: viewer) AND ci.post_id = p.id) \
            AS \(unsafeRaw: saved), \
            EXISTS (SELECT 1 FROM boosts bo WHERE bo.user_id = \(bind: viewer) AND bo.post_id = p.id) AS \(unsafeRaw: boosted)
            """
    }

    /// The columns of posts `p` a post query selects.
    enum Columns {
        static let id = Column<Int64>("p.id")
        static let authorID = Column<Int64>("p.author_id")
        static let kind = Column<String>("p.kind")
        static let title = Column<String?>("p.title")
        static let body = Column<String?>("p.body")
        static let linkURL = Column<String?>("p.link_url")
        static let linkTitle = Column<String?>("p.link_title")
        static let linkDescription = Column<String?>("p.link_description")
        static let linkImageURL = Column<String?>("p.link_image_url")
        static let linkSiteName = Column<String?>("p.link_site_name")
        static let linkFetchedAt = Column<Int64?>("p.link_fetched_at")
        static let latitude = Column<Double?>("p.latitude")
        static let longitude = Column<Double?>("p.longitude")
        static let locationName = Column<String?>("p.location_name")
        static let activityType = Column<String?>("p.activity_type")
        static let activityEmoji = Column<String?>("p.activity_emoji")
        static let activityColor = Column<String?>("p.activity_color")
        static let activityProgress = Column<Int?>("p.activity_progress")
        static let activityCompletedAt = Column<Int64?>("p.activity_completed_at")
        static let price = Column<String?>("p.price")
        static let likesCount = Column<Int>("p.likes_count")
        static let commentsCount = Column<Int>("p.comments_count")
        static let boostsCount = Column<Int>("p.boosts_count")
        static let createdAt = Column<Int64>("p.created_at")
        static let editedAt = Column<Int64?>("p.edited_at")
        static let media = Column<String?>("p.media")
        static let audience = Column<String>("p.audience")
        static let contentWarning = Column<String?>("p.content_warning")
        static let sensitive = Column<Bool>("p.sensitive")
        /// Computed per query: the post's spaces (`PostSpacesColumn`) and the viewer's relation.
        static let spaces = "spaces", viewerLiked = "viewer_liked", viewerSaved = "viewer_saved"
        static let viewerBoosted = "viewer_boosted", pinned = "pinned"
        /// A feed's own columns, when it has them: the time it orders by (a boost's, in a home
        /// feed) and who boosted the post into it.
        static let feedTime = "feed_time", boostedBy = "boosted_by"

        static let all: [any SelectedColumn] = [
            id, authorID, kind, title, body, linkURL, linkTitle, linkDescription, linkImageURL, linkSiteName,
            linkFetchedAt,
            latitude, longitude, locationName, activityType, activityEmoji, activityColor, activityProgress,
            activityCompletedAt, price, likesCount, commentsCount, boostsCount, createdAt, editedAt, media, audience,
            contentWarning,
            sensitive,
        ]
    }

    private static let baseColumns: SQL = .select(Columns.all + UserSummary.Columns.all)

    package var id: Int64
    var authorID: Int64
    package var post: Post
    /// When the post came into the feed that read it (`feed_time`), if not when it was made.
    var feedTime: Int64?
    /// Who boosted it into the home feed that read it.
    var boostedBy: Int64?

    init(row: Row) throws {
        typealias C = Columns
        id = try row.decode(C.id)
        authorID = try row.decode(C.authorID)
        let kind = PostKind(rawValue: try row.decode(C.kind)) ?? .text
        var link: LinkPreview?
        if let url = try row.decode(C.linkURL) {
            link = LinkPreview(
                url: url, title: try row.decode(C.linkTitle), description: try row.decode(C.linkDescription),
                imageURL: try row.decode(C.linkImageURL), siteName: try row.decode(C.linkSiteName),
                fetchedAt: try row.decode(C.linkFetchedAt).map(Timestamp.init(milliseconds:)))
        }
        var location: Location?
        if let latitude = try row.decode(C.latitude), let longitude = try row.decode(C.longitude) {
            location = Location(latitude: latitude, longitude: longitude, name: try row.decode(C.locationName))
        }
        var activity: Activity?
        if let type = try row.decode(C.activityType) {
            activity = Activity(
                type: type, emoji: try row.decode(C.activityEmoji), color: try row.decode(C.activityColor),
                progress: try row.decode(C.activityProgress) ?? 0,
                completedAt: try row.decode(C.activityCompletedAt).map(Timestamp.init(milliseconds:)))
        }
        let (title, body) = (try row.decode(C.title), try row.decode(C.body))
        post = Post(
            id: String(id), kind: kind, author: try UserSummary(authorIn: row, id: authorID),
            title: title, body: body,
            spaces: Self.spaces(try row.decode(column: C.spaces, as: String?.self)),
            media: MediaRecord.list(try row.decode(C.media)).map(\.media), link: link, location: location,
            activity: activity, price: try row.decode(C.price),
            createdAt: Timestamp(milliseconds: try row.decode(C.createdAt)),
            editedAt: try row.decode(C.editedAt).map(Timestamp.init(milliseconds:)),
            counts: Post.Counts(
                likes: try row.decode(C.likesCount), comments: try row.decode(C.commentsCount),
                boosts: try row.decode(C.boostsCount)),
            viewer: Post.Viewer(
                liked: try row.decode(column: C.viewerLiked, as: Bool.self),
                saved: try row.decode(column: C.viewerSaved, as: Bool.self),
                boosted: try row.decode(column: C.viewerBoosted, as: Bool.self)),
            audience: PostAudience(rawValue: try row.decode(C.audience)) ?? .members,
            tags: Hashtag.keys(title: title, body: body), contentWarning: try row.decode(C.contentWarning),
            sensitive: try row.decode(C.sensitive), pinned: try row.decode(column: C.pinned, as: Bool.self),
            poll: PollColumn.poll(try row.decode(column: PollColumn.name, as: String?.self), post: id))
        if row.contains(column: C.feedTime) {
            feedTime = try row.decode(column: C.feedTime, as: Int64?.self)
            boostedBy = try row.decode(column: C.boostedBy, as: Int64?.self)
        }
    }

    /// Reads the `spaces` column: one `id slug name` line per space, in the order of their ids
    /// (the order they were made in).
    static func spaces(_ text: String?) -> [SpaceSummary] {
        guard let text else { return [] }
        let spaces = text.split(separator: "\n").compactMap { line -> (Int64, SpaceSummary)? in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, let id = Int64(parts[0]) else { return nil }
            return (id, SpaceSummary(id: String(parts[0]), slug: String(parts[1]), name: String(parts[2])))
        }
        return spaces.sorted { $0.0 < $1.0 }.map(\.1)
    }

    var cursor: Cursor { Cursor(time: feedTime ?? post.createdAt.milliseconds, id: id) }
}

/// The spaces of post `p` as `id slug name` lines, in no set order (`PostRecord.spaces` sorts
/// them: an ordered aggregate would sort in the query). Space names are single-line:
/// `SpaceRules.name` refuses control characters. `string_agg` is PostgreSQL's, and SQLite's
/// since 3.44.
enum PostSpacesColumn {
    static let select: SQL = """
        (SELECT string_agg(s.id || ' ' || s.slug || ' ' || s.name, '\n') \
        FROM post_spaces pss JOIN spaces s ON s.id = pss.space_id WHERE pss.post_id = p.id) AS \(unsafeRaw: PostRecord.Columns.spaces)
        """
}
