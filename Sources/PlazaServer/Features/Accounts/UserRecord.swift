import PlazaAPI

/// A row of `users` as the API shows it.
struct UserRecord: Sendable {
    /// The columns of users `u` a user query selects.
    enum Columns {
        static let id = Column<Int64>("u.id")
        static let username = Column<String>("u.username")
        static let displayName = Column<String>("u.display_name")
        static let bio = Column<String>("u.bio")
        static let avatar = Column<String?>("u.avatar")
        static let statusKind = Column<String?>("u.status_kind")
        static let statusText = Column<String?>("u.status_text")
        static let statusUpdatedAt = Column<Int64?>("u.status_updated_at")
        static let postsCount = Column<Int>("u.posts_count")
        static let followersCount = Column<Int>("u.followers_count")
        static let followingCount = Column<Int>("u.following_count")
        static let createdAt = Column<Int64>("u.created_at")
        static let locked = Column<Bool>("u.locked")
        static let all: [any SelectedColumn] = [
            id, username, displayName, bio, avatar, statusKind, statusText, statusUpdatedAt, postsCount, followersCount,
            followingCount, createdAt, locked,
        ]
    }

    static let columns: SQL = .select(Columns.all)

    var id: Int64
    var username: String
    var displayName: String
    var bio: String
    var avatar: MediaRecord?
    var status: UserStatus?
    var counts: User.Counts
    var createdAt: Timestamp
    var locked: Bool

    init(row: Row) throws {
        typealias C = Columns
        id = try row.decode(C.id)
        username = try row.decode(C.username)
        displayName = try row.decode(C.displayName)
        bio = try row.decode(C.bio)
        avatar = MediaRecord.list(try row.decode(C.avatar)).first
        status = try UserStatus.stored(
            kind: row.decode(C.statusKind), text: row.decode(C.statusText), updatedAt: row.decode(C.statusUpdatedAt))
        counts = User.Counts(
            posts: try row.decode(C.postsCount), followers: try row.decode(C.followersCount),
            following: try row.decode(C.followingCount))
        createdAt = Timestamp(milliseconds: try row.decode(C.createdAt))
        locked = try row.decode(C.locked)
    }

    func user(viewer: User.Viewer?) -> User {
        User(
            id: String(id), username: username, displayName: displayName, bio: bio, avatar: avatar?.media,
            status: status, createdAt: createdAt, counts: counts, viewer: viewer, locked: locked)
    }
}

extension UserStatus {
    /// The status kept in a user's three `status_*` columns; none without a kind.
    static func stored(kind: String?, text: String?, updatedAt: Int64?) -> UserStatus? {
        kind.map { UserStatus(kind: $0, text: text ?? "", updatedAt: Timestamp(milliseconds: updatedAt ?? 0)) }
    }
}

extension UserSummary {
    /// The author columns a post or comment query selects (author `u`) as `author_*`.
    enum Columns {
        static let username = Column<String>("u.username", as: "author_username")
        static let displayName = Column<String>("u.display_name", as: "author_display_name")
        static let avatar = Column<String?>("u.avatar", as: "author_avatar")
        static let statusKind = Column<String?>("u.status_kind", as: "author_status_kind")
        static let statusText = Column<String?>("u.status_text", as: "author_status_text")
        static let statusUpdatedAt = Column<Int64?>("u.status_updated_at", as: "author_status_updated_at")
        static let all: [any SelectedColumn] = [username, displayName, avatar, statusKind, statusText, statusUpdatedAt]
    }

    static let columns: SQL = .select(Columns.all)

    init(authorIn row: Row, id: Int64) throws {
        self.init(
            id: String(id), username: try row.decode(Columns.username),
            displayName: try row.decode(Columns.displayName),
            avatar: MediaRecord.list(try row.decode(Columns.avatar)).first?.media,
            status: try UserStatus.stored(
                kind: row.decode(Columns.statusKind), text: row.decode(Columns.statusText),
                updatedAt: row.decode(Columns.statusUpdatedAt)))
    }
}
