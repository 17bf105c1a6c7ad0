import PlazaAPI
import SQLKit

/// A row of `posts` joined with its author, as the API shows it.
struct PostRecord: Sendable {
    /// The columns every post query selects (`p` = posts, `u` = the author), with the post's
    /// spaces and the viewer's relation to the post (index look-ups per row, so a page stays
    /// one query).
    static func columns(viewer: Int64?) -> SQLQueryString {
        let columns = baseColumns + ", \(PostSpacesColumn())"
        guard let viewer else { return columns + ", FALSE AS viewer_liked, FALSE AS viewer_saved" }
        return columns + """
            , EXISTS (SELECT 1 FROM likes lk WHERE lk.post_id = p.id AND lk.user_id = \(bind: viewer)) AS viewer_liked, \
            EXISTS (SELECT 1 FROM collection_items ci WHERE ci.owner_id = \(bind: viewer) AND ci.post_id = p.id) AS viewer_saved
            """
    }

    private static let baseColumns: SQLQueryString = """
        p.id, p.author_id, p.kind, p.title, p.body, p.link_url, p.link_title, p.link_description, p.link_image_url, \
        p.link_site_name, p.link_fetched_at, p.latitude, p.longitude, p.location_name, p.activity_type, p.activity_emoji, \
        p.activity_color, p.activity_progress, p.activity_completed_at, p.price, p.likes_count, p.comments_count, \
        p.created_at, p.edited_at, p.media, \(UserSummary.columns)
        """

    var id: Int64
    var authorID: Int64
    var post: Post

    init(row: Row) throws {
        id = try row.decode(column: "id", as: Int64.self)
        authorID = try row.decode(column: "author_id", as: Int64.self)
        let kind = PostKind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .text
        var link: LinkPreview?
        if let url = try row.decode(column: "link_url", as: String?.self) {
            link = LinkPreview(
                url: url, title: try row.decode(column: "link_title", as: String?.self),
                description: try row.decode(column: "link_description", as: String?.self),
                imageURL: try row.decode(column: "link_image_url", as: String?.self),
                siteName: try row.decode(column: "link_site_name", as: String?.self),
                fetchedAt: try row.decode(column: "link_fetched_at", as: Int64?.self).map(Timestamp.init(milliseconds:)))
        }
        var location: Location?
        if let latitude = try row.decode(column: "latitude", as: Double?.self),
            let longitude = try row.decode(column: "longitude", as: Double?.self)
        {
            location = Location(latitude: latitude, longitude: longitude, name: try row.decode(column: "location_name", as: String?.self))
        }
        var activity: Activity?
        if let type = try row.decode(column: "activity_type", as: String?.self) {
            activity = Activity(
                type: type, emoji: try row.decode(column: "activity_emoji", as: String?.self),
                color: try row.decode(column: "activity_color", as: String?.self),
                progress: try row.decode(column: "activity_progress", as: Int?.self) ?? 0,
                completedAt: try row.decode(column: "activity_completed_at", as: Int64?.self).map(Timestamp.init(milliseconds:)))
        }
        post = Post(
            id: String(id), kind: kind, author: try UserSummary(authorIn: row, id: authorID),
            title: try row.decode(column: "title", as: String?.self), body: try row.decode(column: "body", as: String?.self),
            spaces: Self.spaces(try row.decode(column: "spaces", as: String?.self)), media: MediaRecord.list(try row.decode(column: "media", as: String?.self)).map(\.media), link: link, location: location, activity: activity,
            price: try row.decode(column: "price", as: String?.self),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)),
            editedAt: try row.decode(column: "edited_at", as: Int64?.self).map(Timestamp.init(milliseconds:)),
            counts: Post.Counts(likes: try row.decode(column: "likes_count", as: Int.self), comments: try row.decode(column: "comments_count", as: Int.self)),
            viewer: Post.Viewer(liked: try row.decode(column: "viewer_liked", as: Bool.self), saved: try row.decode(column: "viewer_saved", as: Bool.self)))
    }

    /// Reads the `spaces` column: one `id slug name` line per space.
    static func spaces(_ text: String?) -> [SpaceSummary] {
        guard let text else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3 else { return nil }
            return SpaceSummary(id: String(parts[0]), slug: String(parts[1]), name: String(parts[2]))
        }
    }

    var cursor: Cursor { Cursor(time: post.createdAt.milliseconds, id: id) }
}

/// The spaces of post `p` as `id slug name` lines, aggregated in the database's own way.
/// (Space names are single-line: `SpaceRules.name` refuses control characters.)
struct PostSpacesColumn: SQLExpression {
    func serialize(to serializer: inout SQLSerializer) {
        let lines = Dialect(serializing: serializer.dialect).postSpacesAggregate
        serializer.write("(SELECT \(lines) FROM post_spaces pss JOIN spaces s ON s.id = pss.space_id WHERE pss.post_id = p.id) AS spaces")
    }
}
