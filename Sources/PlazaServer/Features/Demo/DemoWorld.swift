import Foundation
import Logging
import PlazaAPI

/// How the demo world is written: the people by username, and every change through the core's
/// actions, as the apps would make it, so notifications, timelines and counts follow as they
/// would. Posts may be dated in the past, so heatmaps and feeds have a history.
final class DemoWorld {
    let services: AppServices
    let actions: Actions
    let logger: Logger
    private(set) var ids: [String: Int64] = [:]
    /// The posts written, by author, oldest first.
    private(set) var postIDs: [String: [Int64]] = [:]
    var posts: Int { postIDs.values.reduce(0) { $0 + $1.count } }
    /// When the seeding began: the posts' dates count back from it.
    let now = Timestamp.now

    init(services: AppServices, logger: Logger) {
        self.services = services
        self.actions = services.actions
        self.logger = logger
    }

    /// `daysAgo` days before the seeding began.
    func time(daysAgo: Double) -> Timestamp {
        Timestamp(milliseconds: now.milliseconds - Int64(daysAgo * 86_400_000))
    }

    func id(_ name: String) throws -> Int64 {
        guard let id = ids[name] else {
            throw PlazaError(.internalServerError, "demo_person_missing", "The demo world has no \(name).")
        }
        return id
    }

    /// Signs `person` up, with a picture of their initials when `avatar` says so.
    func add(_ person: DemoSeeder.Person, passwordHash: String, avatar: Bool = true) async throws {
        let id = try await services.accounts.createUser(
            .init(
                username: person.username, email: "\(person.username)@demo.plaza.test", passwordHash: passwordHash,
                displayName: person.displayName, isAdmin: person.isAdmin, emailVerified: true))
        try await services.accounts.updateProfile(
            userID: id, displayName: nil, bio: person.bio, status: person.status.map(FieldUpdate.set) ?? .keep)
        ids[person.username] = id
        guard avatar else { return }
        // A picture of their initials, in colours of their own.
        let initials = person.displayName.split(separator: " ").prefix(2).compactMap(\.first).map(String.init)
        let colours = Self.avatarColours[
            person.username.unicodeScalars.reduce(0) { $0 + Int($1.value) } % Self.avatarColours.count]
        let picture = DemoPictures.Picture(
            from: colours.0, to: colours.1, caption: initials.joined(), width: 400, height: 400,
            seed: person.username.count, fontSize: 150)
        let media = try await upload(person.username, picture.jpeg(), description: nil)
        try await actions.media.setAvatar(of: id, to: media, logger: logger)
    }

    static let avatarColours = [
        ("#ff7a59", "#ffd200"), ("#4f7cff", "#a1c4fd"), ("#2bb673", "#a8e063"), ("#8e44ad", "#f8cdda"),
        ("#00a3c4", "#2c3e50"), ("#d9a441", "#cb2d3e"),
    ]

    func follow(_ follower: String, _ followees: [String]) async throws {
        for followee in followees { _ = try await actions.people.relate(id(follower), .follow, id(followee)) }
    }

    /// A post by `author`, `daysAgo` days before now, with its comments and likes; its id.
    @discardableResult
    func post(
        _ author: String, _ draft: PostStore.Draft, daysAgo: Double = 0, comments: [(String, String)] = [],
        likedBy: [String] = []
    ) async throws -> Int64 {
        let created = try await actions.posts.create(by: id(author), draft, at: time(daysAgo: daysAgo))
        guard let postID = parseID(created.id) else { throw PlazaError.notFound("Post") }
        for (who, text) in comments { _ = try await actions.posts.comment(on: postID, by: id(who), body: text) }
        for who in likedBy { _ = try await actions.posts.like(postID, by: id(who), true) }
        postIDs[author, default: []].append(postID)
        return postID
    }

    func text(_ title: String?, _ body: String, in spaces: [String] = []) -> PostStore.Draft {
        PostStore.Draft(kind: .text, title: title, body: body, spaces: spaces)
    }

    /// An activity post: `progress` percent, completed (at the post's time) when it is 100.
    func activity(
        _ type: String, _ emoji: String, _ color: String, _ progress: Int, _ body: String, daysAgo: Double
    ) throws -> PostStore.Draft {
        let value = try PostRules.activity(
            Activity(type: type, emoji: nil, color: nil, progress: 0, completedAt: nil),
            applying: ActivityInput(emoji: emoji, color: color, progress: progress), now: time(daysAgo: daysAgo))
        return PostStore.Draft(kind: .activity, body: body, activity: value)
    }

    /// A photo post: `pictures` made by `DemoPictures` and uploaded as its author's.
    func photos(
        _ author: String, _ pictures: [DemoPictures.Picture], body: String, place: Location? = nil,
        price: String? = nil
    ) async throws -> PostStore.Draft {
        var media: [Int64] = []
        for picture in pictures {
            media.append(try await upload(author, picture.jpeg(), description: picture.description))
        }
        return PostStore.Draft(kind: .photo, body: body, location: place, price: price, mediaIDs: media)
    }

    /// Uploads `bytes` as `author`'s, through the same pipeline as the apps' uploads, with
    /// `description` as its alt text; the media id.
    func upload(_ author: String, _ bytes: [UInt8], description: String?) async throws -> Int64 {
        let record = try await actions.media.upload(by: id(author), logger: logger) { path in
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return description.map { ["description": $0] } ?? [:]
        }
        return record.id
    }
}
