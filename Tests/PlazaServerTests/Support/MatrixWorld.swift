import Foundation
import HTTPTypes
import NIOCore
import PlazaAPI
import Testing

@testable import PlazaServer

/// Who makes a request in the authorization matrix. `other` follows no one and is in no
/// space (the non-follower and non-member); `follower` follows the owner; `member` and
/// `moderator` are in the owner's space, the moderator with that role; `suspended` was
/// suspended by an admin after signing in.
enum MatrixActor: String, CaseIterable, Sendable {
    case anonymous, owner, other, blocked, admin, follower, member, moderator, suspended

    /// The order a cell's actors run in on a shared set of fixtures: the space's moderator and
    /// the owner, whose writes usually succeed and may destroy the fixture, last.
    static let runOrder: [MatrixActor] = [
        .anonymous, .suspended, .blocked, .other, .follower, .member, .admin, .moderator, .owner,
    ]
}

/// A request body of the matrix.
enum MatrixBody: Sendable {
    case json(String)
    /// A form (`application/x-www-form-urlencoded`), as Mastodon's apps send.
    case form(String)
    /// `POST /me/media`'s multipart form with a small JPEG.
    case upload
}

struct MatrixFixtureError: Error, CustomStringConvertible {
    let description: String
}

/// One set of fixtures for the matrix: an owner with a post (media, space, comments, a like),
/// a second post, a post for followers and one for the space's members, a space, a collection
/// with an item, an unused upload, a notification, a second session and a viewed post; another
/// person; a person the owner blocked (who commented and saved the owner's post before the
/// block); an admin; a follower of the owner; a member and a moderator of the space; and a
/// suspended person. Markers are words only the fixtures contain,
/// so a response can be searched for what it must not show.
struct MatrixWorld: Sendable {
    let owner: Account
    let other: Account
    let blocked: Account
    let admin: Account
    let follower: Account
    let member: Account
    let moderator: Account
    /// Suspended after signing in: the token is one a client would still hold.
    let suspended: Account
    /// The owner's post: title and body carry `postMarker` (the body as a hashtag); in `space`, with `attachedMedia` if any.
    let post: Post
    /// The owner's public post with a poll.
    let post2: Post
    /// The owner's posts for their followers and for the members of `space`.
    let followersPost: Post
    let membersPost: Post
    let space: Space
    let ownerComment: PlazaAPI.Comment
    let otherComment: PlazaAPI.Comment
    /// Written on the owner's post by `blocked` before the owner blocked them.
    let blockedComment: PlazaAPI.Comment
    let collection: SavedCollection
    let item: CollectionItem
    /// Uploads are made only for the rows that need them (each costs a re-encode).
    let attachedMedia: Media?
    let unattachedMedia: Media?
    /// The owner's second session (not the one `owner.token` uses).
    let secondSessionID: String
    let notificationID: String
    /// Public content of the owner: hidden from the person they blocked.
    let postMarker: String
    let commentMarker: String
    let bioMarker: String
    /// Private to the owner: no one else may see these.
    let collectionMarker: String
    let noteMarker: String
    let preferenceMarker: String
    /// Mastodon tokens (`read write follow push`) of everyone but anonymous, made before the
    /// suspension, when the world was made for Mastodon's matrix.
    var mastodonTokens: [MatrixActor: String] = [:]

    func account(_ actor: MatrixActor) -> Account? {
        switch actor {
        case .anonymous: nil
        case .owner: owner
        case .other: other
        case .blocked: blocked
        case .admin: admin
        case .follower: follower
        case .member: member
        case .moderator: moderator
        case .suspended: suspended
        }
    }

    func token(_ actor: MatrixActor) -> String? { account(actor)?.token }

    /// What the person the owner blocked must never see in a response.
    var publicMarkers: [String] { [postMarker, commentMarker, bioMarker] }
    /// What no one but the owner may see in a response.
    var privateMarkers: [String] {
        [collectionMarker, noteMarker, preferenceMarker, secondSessionID, notificationID]
            + (unattachedMedia.map { [$0.id] } ?? [])
    }

    /// The owner's uploads, for rows whose world has them.
    func uploads() throws -> (attached: Media, unattached: Media) {
        guard let attachedMedia, let unattachedMedia else {
            throw MatrixFixtureError(description: "this world has no uploads: set the row's media")
        }
        return (attachedMedia, unattachedMedia)
    }
}

/// Sends the matrix's requests through a live app and makes its fixtures.
struct MatrixClient: Sendable {
    let api: TestAPI
    let port: Int
    let jpeg: [UInt8]
    /// Marks accounts as admins (there is no route for that, by design).
    let db: Database

    static let password = "correct horse battery"

    /// Runs `body` with a client of a fresh application listening on a loopback port.
    static func withLiveApp(_ body: @escaping @Sendable (MatrixClient) async throws -> Void) async throws {
        try await PlazaServerTests.withLiveApp { api, port async throws in
            try await api.withDatabase { db in
                try await body(
                    MatrixClient(
                        api: api, port: port, jpeg: try MediaFixtures.sample(.jpeg, width: 32, height: 24), db: db))
            }
        }
    }

    /// A request to a full path (`/api/v1/…`, `/media/…`, `/healthz`).
    func send(_ method: HTTPRequest.Method, _ path: String, token: String?, body: MatrixBody? = nil) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        var buffer: ByteBuffer?
        switch body {
        case nil: break
        case .json(let text):
            buffer = ByteBuffer(string: text)
            headers[.contentType] = "application/json"
        case .form(let text):
            buffer = ByteBuffer(string: text)
            headers[.contentType] = "application/x-www-form-urlencoded"
        case .upload:
            let form = MediaFixtures.multipart(jpeg)
            buffer = form.body
            headers[.contentType] = form.contentType
        }
        let response = try await api.client.execute(uri: path, method: method, headers: headers, body: buffer)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The status of `GET /api/v1/stream` (an endless response): read from its head, then closed.
    func streamStatus(token: String?) async throws -> TestResponse {
        let stream = try await EventStreamClient.connect(port: port, token: token)
        stream.close()
        return TestResponse(status: .init(code: stream.status), headers: [:], body: ByteBuffer())
    }

    /// A fixture request that must answer `status`; its body decoded as `T`.
    func must<T: Decodable>(
        _ status: Int, _ method: HTTPRequest.Method, _ path: String, as account: Account?, _ body: MatrixBody? = nil,
        decode: T.Type = T.self
    ) async throws -> T {
        let response = try await send(method, "/api/v1" + path, token: account?.token, body: body)
        guard response.status.code == status else {
            throw MatrixFixtureError(
                description:
                    "fixture \(method) \(path): expected \(status), got \(response.status.code) \(response.text)")
        }
        return try JSONDecoder().decode(T.self, from: Data(response.body.readableBytesView))
    }

    func mustSucceed(
        _ status: Int, _ method: HTTPRequest.Method, _ path: String, as account: Account?, _ body: MatrixBody? = nil
    ) async throws {
        let response = try await send(method, "/api/v1" + path, token: account?.token, body: body)
        guard response.status.code == status else {
            throw MatrixFixtureError(
                description:
                    "fixture \(method) \(path): expected \(status), got \(response.status.code) \(response.text)")
        }
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    /// A fresh lowercase word no fixture shares.
    static func word(_ prefix: String) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        return prefix + String((0..<10).map { _ in letters[Int.random(in: 0..<letters.count)] })
    }

    func register(_ prefix: String) async throws -> Account {
        let name = Self.word(prefix).prefix(30)
        let body = #"{"username":"\#(name)","email":"\#(name)@example.com","password":"\#(Self.password)"}"#
        let auth: AuthResponse = try await must(201, .post, "/auth/register", as: nil, .json(body))
        return Account(token: auth.token, me: auth.user, password: Self.password)
    }

    func login(_ username: String) async throws -> Account {
        let auth: AuthResponse = try await must(
            200, .post, "/auth/login", as: nil, .json(#"{"login":"\#(username)","password":"\#(Self.password)"}"#))
        return Account(token: auth.token, me: auth.user, password: Self.password)
    }

    /// Makes a new set of fixtures (about 25 requests, and 4 per Mastodon token).
    func makeWorld(media: Bool, mastodon: Bool = false) async throws -> MatrixWorld {
        let owner = try await register("own")
        let other = try await register("oth")
        let blocked = try await register("blk")
        let adminAccount = try await register("adm")
        try await db.write("UPDATE users SET is_admin = TRUE WHERE id = \(bind: Int64(adminAccount.id) ?? 0)")
        // A new session, so that nothing remembers the account as it was before.
        let admin = try await login(adminAccount.username)
        let follower = try await register("fol")
        let member = try await register("mem")
        let moderator = try await register("mod")
        let suspended = try await register("sus")

        let postMarker = Self.word("post")
        let commentMarker = Self.word("comment")
        let bioMarker = Self.word("bio")
        let collectionMarker = Self.word("coll")
        let noteMarker = Self.word("note")
        let preferenceMarker = Self.word("pref")
        try await mustSucceed(200, .patch, "/me", as: owner, .json(#"{"bio":"about me \#(bioMarker)"}"#))
        try await mustSucceed(200, .put, "/me/preferences", as: owner, .json(#"{"marker":"\#(preferenceMarker)"}"#))
        let space: Space = try await must(
            201, .post, "/spaces", as: owner, .json(#"{"slug":"\#(Self.word("s"))","name":"Matrix space"}"#))
        try await mustSucceed(200, .put, "/users/\(owner.username)/follow", as: follower)
        for person in [member, moderator] {
            try await mustSucceed(200, .put, "/spaces/\(space.slug)/membership", as: person)
        }
        try await mustSucceed(
            200, .patch, "/spaces/\(space.slug)/members/\(moderator.username)", as: owner,
            .json(#"{"role":"moderator"}"#))
        var attachedMedia: Media?
        var unattachedMedia: Media?
        if media {
            attachedMedia = try await must(201, .post, "/me/media", as: owner, .upload)
            unattachedMedia = try await must(201, .post, "/me/media", as: owner, .upload)
        }
        let kind =
            attachedMedia == nil ? #""kind":"text""# : #""kind":"photo","mediaIds":["\#(attachedMedia?.id ?? "")"]"#
        let post: Post = try await must(
            201, .post, "/posts", as: owner,
            .json(
                #"{\#(kind),"title":"\#(postMarker) title","body":"all about \#(postMarker)","spaces":["\#(space.slug)"]}"#
            ))
        let post2: Post = try await must(
            201, .post, "/posts", as: owner,
            .json(
                #"{"kind":"text","body":"a second post","poll":{"options":["yes","no"],"expiresInSeconds":3600}}"#))
        let followersPost: Post = try await must(
            201, .post, "/posts", as: owner, .json(#"{"kind":"text","body":"for followers","audience":"followers"}"#))
        let membersPost: Post = try await must(
            201, .post, "/posts", as: owner,
            .json(#"{"kind":"text","body":"for members","spaces":["\#(space.slug)"],"audience":"members"}"#))
        // Before the block: the blocked person comments on the post and saves it.
        let blockedComment: PlazaAPI.Comment = try await must(
            201, .post, "/posts/\(post.id)/comments", as: blocked, .json(#"{"body":"from the blocked"}"#))
        let blockedCollection: SavedCollection = try await must(
            201, .post, "/collections", as: blocked, .json(#"{"name":"mine"}"#))
        try await mustSucceed(
            201, .post, "/collections/\(blockedCollection.id)/items", as: blocked, .json(#"{"postId":"\#(post.id)"}"#))
        let blockedProfile: User = try await must(200, .put, "/users/\(blocked.username)/block", as: owner)
        guard blockedProfile.viewer?.blocking == true else {
            throw MatrixFixtureError(description: "the block did not hold: \(blockedProfile)")
        }

        let otherComment: PlazaAPI.Comment = try await must(
            201, .post, "/posts/\(post.id)/comments", as: other, .json(#"{"body":"nice one"}"#))
        let ownerComment: PlazaAPI.Comment = try await must(
            201, .post, "/posts/\(post.id)/comments", as: owner, .json(#"{"body":"thanks \#(commentMarker)"}"#))
        try await mustSucceed(200, .put, "/posts/\(post.id)/like", as: other)
        let collection: SavedCollection = try await must(
            201, .post, "/collections", as: owner, .json(#"{"name":"\#(collectionMarker)"}"#))
        let item: CollectionItem = try await must(
            201, .post, "/collections/\(collection.id)/items", as: owner,
            .json(#"{"postId":"\#(post.id)","note":"\#(noteMarker)"}"#))
        try await mustSucceed(204, .post, "/posts/\(post.id)/view", as: owner)

        _ = try await login(owner.username)
        let sessions: Page<Session> = try await must(200, .get, "/me/sessions", as: owner)
        guard let second = sessions.items.first(where: { !$0.current }) else {
            throw MatrixFixtureError(description: "no second session")
        }
        let notifications: Page<PlazaAPI.Notification> = try await must(200, .get, "/me/notifications", as: owner)
        guard let notification = notifications.items.first else {
            throw MatrixFixtureError(description: "the owner has no notification")
        }
        var mastodonTokens: [MatrixActor: String] = [:]
        if mastodon {
            let people: [(MatrixActor, Account)] = [
                (.owner, owner), (.other, other), (.blocked, blocked), (.admin, admin), (.follower, follower),
                (.member, member), (.moderator, moderator), (.suspended, suspended),
            ]
            for (actor, account) in people { mastodonTokens[actor] = try await api.mastodonToken(account) }
        }
        try await mustSucceed(204, .put, "/admin/users/\(suspended.username)/suspension", as: admin)

        return MatrixWorld(
            owner: owner, other: other, blocked: blocked, admin: admin, follower: follower, member: member,
            moderator: moderator, suspended: suspended, post: post, post2: post2, followersPost: followersPost,
            membersPost: membersPost, space: space,
            ownerComment: ownerComment,
            otherComment: otherComment, blockedComment: blockedComment, collection: collection, item: item,
            attachedMedia: attachedMedia,
            unattachedMedia: unattachedMedia, secondSessionID: second.id, notificationID: notification.id,
            postMarker: postMarker,
            commentMarker: commentMarker, bioMarker: bioMarker, collectionMarker: collectionMarker,
            noteMarker: noteMarker,
            preferenceMarker: preferenceMarker, mastodonTokens: mastodonTokens)
    }

    /// The owner's upload on a post they then deleted (for the media route).
    func deletedPostMedia(_ world: MatrixWorld) async throws -> Media {
        let media: Media = try await must(201, .post, "/me/media", as: world.owner, .upload)
        let post: Post = try await must(
            201, .post, "/posts", as: world.owner, .json(#"{"kind":"photo","mediaIds":["\#(media.id)"]}"#))
        try await mustSucceed(204, .delete, "/posts/\(post.id)", as: world.owner)
        return media
    }
}

extension MatrixWorld {
    /// The fixture a path parameter names by default: the owner's object of the kind the
    /// segment before it names.
    func defaultParameter(_ name: String, after segment: String) -> String? {
        switch (name, segment) {
        case ("username", _): owner.username
        case ("slug", _): space.slug
        case ("postId", _): post.id
        case ("id", "posts"): post.id
        case ("id", "comments"): ownerComment.id
        case ("id", "collections"): collection.id
        case ("id", "items"): item.id
        case ("id", "sessions"): secondSessionID
        default: nil
        }
    }
}
