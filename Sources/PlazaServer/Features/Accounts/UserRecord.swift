import PlazaAPI
import SQLKit

/// A row of `users` as the API shows it.
struct UserRecord: Sendable {
    static func columns(_ alias: String = "u") -> SQLQueryString {
        let a = alias
        return """
            \(unsafeRaw: a).id, \(unsafeRaw: a).username, \(unsafeRaw: a).display_name, \(unsafeRaw: a).bio, \
            \(unsafeRaw: a).avatar, \(unsafeRaw: a).status_kind, \(unsafeRaw: a).status_text, \
            \(unsafeRaw: a).status_updated_at, \(unsafeRaw: a).posts_count, \(unsafeRaw: a).followers_count, \
            \(unsafeRaw: a).following_count, \(unsafeRaw: a).created_at
            """
    }

    var id: Int64
    var username: String
    var displayName: String
    var bio: String
    var avatar: MediaRecord?
    var status: UserStatus?
    var counts: User.Counts
    var createdAt: Timestamp

    init(row: Row) throws {
        id = try row.decode(column: "id", as: Int64.self)
        username = try row.decode(column: "username", as: String.self)
        displayName = try row.decode(column: "display_name", as: String.self)
        bio = try row.decode(column: "bio", as: String.self)
        avatar = MediaRecord.list(try row.decode(column: "avatar", as: String?.self)).first
        if let kind = try row.decode(column: "status_kind", as: String?.self) {
            status = UserStatus(
                kind: kind,
                text: try row.decode(column: "status_text", as: String?.self) ?? "",
                updatedAt: Timestamp(milliseconds: try row.decode(column: "status_updated_at", as: Int64?.self) ?? 0))
        }
        counts = User.Counts(
            posts: try row.decode(column: "posts_count", as: Int.self),
            followers: try row.decode(column: "followers_count", as: Int.self),
            following: try row.decode(column: "following_count", as: Int.self))
        createdAt = Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self))
    }

    func user(viewer: User.Viewer?) -> User {
        User(
            id: String(id), username: username, displayName: displayName, bio: bio, avatar: avatar?.media, status: status,
            createdAt: createdAt, counts: counts, viewer: viewer)
    }
}

extension UserSummary {
    /// The author columns a post or comment query selects as `author_*`.
    static let columns: SQLQueryString = "u.username AS author_username, u.display_name AS author_display_name, u.avatar AS author_avatar"

    init(authorIn row: Row, id: Int64) throws {
        self.init(
            id: String(id),
            username: try row.decode(column: "author_username", as: String.self),
            displayName: try row.decode(column: "author_display_name", as: String.self),
            avatar: MediaRecord.list(try row.decode(column: "author_avatar", as: String?.self)).first?.media)
    }
}
