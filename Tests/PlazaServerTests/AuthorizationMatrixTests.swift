import Foundation
import HTTPTypes
import PlazaAPI
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

/// Every operation of the served OpenAPI document, run as nine people — anonymous, the owner of
/// the objects its path names, another person (no follower, no member), a person the owner
/// blocked, an admin, a follower of the owner, a member and a moderator of the owner's space, and
/// a suspended person — on fixtures made here (`MatrixWorld`), against the policy table below.
/// The table is the access policy (API.md and the code's intent), not a record of what the code
/// does. An operation of the document without a row fails the test, as does a row for an
/// operation the document lacks.
///
/// Besides the status, a successful response of anyone but the owner must not contain the owner's
/// private things (collection, note, preferences, unused upload, session, notification), and one
/// of the blocked person must not contain the owner's post, comment or bio.
@Suite("Authorization matrix")
struct AuthorizationMatrixTests {
    static let v1 = "/api/v1"

    /// The statuses a cell may answer.
    struct Expect: Sendable, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral, CustomStringConvertible {
        let statuses: Set<Int>
        init(integerLiteral value: Int) { statuses = [value] }
        init(arrayLiteral elements: Int...) { statuses = Set(elements) }
        var description: String { statuses.sorted().map(String.init).joined(separator: "|") }
    }

    /// How a row's cells share fixtures. Reads share one world; a write gets a world per
    /// operation (its actors run owner last), or per cell when more than one actor may destroy
    /// the fixture.
    enum Fixtures: Sendable { case shared, perOperation, perCell }

    struct Row: Sendable {
        var operation: String
        var scenario = ""
        var expect: [MatrixActor: Expect]
        var fixtures: Fixtures
        var query: @Sendable (MatrixWorld) -> String = { _ in "" }
        var body: (@Sendable (MatrixWorld) -> MatrixBody)?
        /// Path parameters other than the owner's default objects.
        var parameters: [String: @Sendable (MatrixWorld) -> String] = [:]
        /// A URL (made once per world) whose path fills the template, for `/media/…`.
        var url: (@Sendable (MatrixClient, MatrixWorld) async throws -> String)?
        /// Actors whose successful response must be an empty page.
        var emptyFor: Set<MatrixActor> = []
        /// Run after a successful cell: a problem, or nil.
        var verify: (@Sendable (MatrixClient, MatrixWorld, MatrixActor) async throws -> String?)?
        /// Off where the response is rightly the owner's (signing in as them).
        var leakCheck = true
        /// The row's own worlds need the owner's uploads (shared reads always have them).
        var media = false

        var method: String { String(operation.split(separator: " ")[0]) }
        var path: String { String(operation.split(separator: " ")[1]) }
        var label: String { scenario.isEmpty ? operation : "\(operation) [\(scenario)]" }
    }

    /// `follower`, `member` and `moderator` answer as `other` unless given (the moderator as the
    /// member); a suspended person's token is refused everywhere it is looked at (401).
    static func row(
        _ operation: String, _ scenario: String = "", anon: Expect, owner: Expect, other: Expect, blocked: Expect,
        admin: Expect, follower: Expect? = nil, member: Expect? = nil, moderator: Expect? = nil,
        suspended: Expect = 401,
        fixtures: Fixtures? = nil, query: @escaping @Sendable (MatrixWorld) -> String = { _ in "" },
        body: (@Sendable (MatrixWorld) -> MatrixBody)? = nil,
        parameters: [String: @Sendable (MatrixWorld) -> String] = [:],
        url: (@Sendable (MatrixClient, MatrixWorld) async throws -> String)? = nil, emptyFor: Set<MatrixActor> = [],
        verify: (@Sendable (MatrixClient, MatrixWorld, MatrixActor) async throws -> String?)? = nil,
        leakCheck: Bool = true, media: Bool = false
    ) -> Row {
        let read = operation.hasPrefix("GET ") || operation.hasPrefix("HEAD ")
        return Row(
            operation: operation, scenario: scenario,
            expect: [
                .anonymous: anon, .owner: owner, .other: other, .blocked: blocked, .admin: admin,
                .follower: follower ?? other, .member: member ?? other, .moderator: moderator ?? member ?? other,
                .suspended: suspended,
            ],
            fixtures: fixtures ?? (read ? .shared : .perOperation), query: query, body: body, parameters: parameters,
            url: url,
            emptyFor: emptyFor, verify: verify, leakCheck: leakCheck, media: media)
    }

    static func json(_ text: String) -> @Sendable (MatrixWorld) -> MatrixBody { { _ in .json(text) } }

    // MARK: the policy

    /// Admins have no extra rights on these routes (nothing in the code gives them any), so
    /// their column is another person's. Hidden things are 404, never 403, for the blocked
    /// person and for private objects (collections, sessions, history).
    static let policy: [Row] = {
        // Appended one by one: as one array literal, the type checker took minutes over it.
        var rows: [Row] = []
        rows.append(row("GET /healthz", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200, suspended: 200))
        rows.append(row("GET \(v1)/openapi.json", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        // Accounts and sessions: each person's own.
        rows.append(
            row(
                "POST \(v1)/auth/register", anon: 201, owner: 201, other: 201, blocked: 201, admin: 201,
                body: { _ in
                    let name = MatrixClient.word("reg")
                    return .json(
                        #"{"username":"\#(name)","email":"\#(name)@example.com","password":"\#(MatrixClient.password)"}"#
                    )
                }))
        rows.append(
            row(
                "POST \(v1)/auth/login", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200,
                body: { .json(#"{"login":"\#($0.owner.username)","password":"\#(MatrixClient.password)"}"#) },
                leakCheck: false))
        rows.append(row("POST \(v1)/auth/logout", anon: 401, owner: 204, other: 204, blocked: 204, admin: 204))
        rows.append(row("GET \(v1)/me", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PATCH \(v1)/me", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200,
                body: json(#"{"displayName":"New Name"}"#)))
        rows.append(
            row(
                "PUT \(v1)/me/password", anon: 401, owner: 204, other: 204, blocked: 204, admin: 204,
                body: json(
                    #"{"currentPassword":"\#(MatrixClient.password)","newPassword":"\#(MatrixClient.password)"}"#)))
        rows.append(row("GET \(v1)/me/export", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // Deleting one's account: each person's own; with a wrong password nothing happens.
        rows.append(
            row(
                "DELETE \(v1)/me", anon: 401, owner: 403, other: 403, blocked: 403, admin: 403,
                body: json(#"{"currentPassword":"not the password"}"#)))
        // Two-factor sign-in: each person's own; nobody has it on here, and no challenge exists.
        let currentPassword = json(#"{"currentPassword":"\#(MatrixClient.password)"}"#)
        rows.append(row("GET \(v1)/me/two-factor", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/me/two-factor", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200,
                body: currentPassword))
        rows.append(
            row(
                "PUT \(v1)/me/two-factor", "a wrong code (409 before a set-up)", anon: 401, owner: [409, 422],
                other: [409, 422], blocked: [409, 422], admin: [409, 422], body: json(#"{"code":"000000"}"#)))
        rows.append(
            row(
                "DELETE \(v1)/me/two-factor", anon: 401, owner: 204, other: 204, blocked: 204, admin: 204,
                body: currentPassword))
        rows.append(
            row(
                "POST \(v1)/me/two-factor/recovery-codes", anon: 401, owner: 409, other: 409, blocked: 409,
                admin: 409, body: currentPassword))
        rows.append(
            row(
                "POST \(v1)/auth/login/second-factor", "no code", anon: 422, owner: 422, other: 422, blocked: 422,
                admin: 422, body: json(#"{"challenge":"made-up","code":" "}"#)))
        // Email: links from mail work for whoever holds them (none here is real); the rest is each person's own.
        let madeUpToken = String(repeating: "A", count: 43)
        rows.append(
            row(
                "POST \(v1)/auth/password/forgot", anon: 202, owner: 202, other: 202, blocked: 202, admin: 202,
                body: json(#"{"email":"nobody@example.com"}"#)))
        rows.append(
            row(
                "POST \(v1)/auth/password/reset", "a made-up token", anon: 400, owner: 400, other: 400, blocked: 400,
                admin: 400, body: json(#"{"token":"\#(madeUpToken)","newPassword":"\#(MatrixClient.password)"}"#)))
        rows.append(
            row(
                "POST \(v1)/auth/email/verify", "a made-up token", anon: 400, owner: 400, other: 400, blocked: 400,
                admin: 400, body: json(#"{"token":"\#(madeUpToken)"}"#)))
        rows.append(
            row(
                "POST \(v1)/me/email/verification", "mailed moments ago or never", anon: 401, owner: [202, 429],
                other: [202, 429], blocked: [202, 429], admin: [202, 429]))
        rows.append(
            row(
                "PUT \(v1)/me/email", "a wrong password", anon: 401, owner: 403, other: 403, blocked: 403, admin: 403,
                body: json(#"{"email":"new@example.com","currentPassword":"not the password"}"#)))
        // Sign-in providers: none is configured here, so every provider is unknown.
        rows.append(row("GET \(v1)/auth/providers", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/auth/providers/{id}/token", "an unknown provider", anon: 404, owner: 404, other: 404,
                blocked: 404, admin: 404, body: json(#"{"idToken":"x"}"#), parameters: ["id": { _ in "nope" }]))
        rows.append(
            row(
                "GET \(v1)/auth/providers/{id}/start", "an unknown provider", anon: 404, owner: 404, other: 404,
                blocked: 404, admin: 404, parameters: ["id": { _ in "nope" }]))
        rows.append(
            row(
                "GET \(v1)/auth/providers/{id}/callback", "no code or state", anon: 400, owner: 400, other: 400,
                blocked: 400, admin: 400, parameters: ["id": { _ in "nope" }], leakCheck: false))
        rows.append(
            row(
                "POST \(v1)/auth/providers/{id}/callback", "no code or state", anon: 400, owner: 400, other: 400,
                blocked: 400, admin: 400, body: json("{}"), parameters: ["id": { _ in "nope" }], leakCheck: false))
        rows.append(row("GET \(v1)/me/identities", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "DELETE \(v1)/me/identities/{provider}", "not linked", anon: 401, owner: 404, other: 404, blocked: 404,
                admin: 404, parameters: ["provider": { _ in "nope" }]))
        rows.append(row("GET \(v1)/admin/mail", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        rows.append(row("GET \(v1)/me/preferences", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PUT \(v1)/me/preferences", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200,
                body: json(#"{"theme":"dark"}"#)))
        rows.append(
            row(
                "PATCH \(v1)/me/preferences", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200,
                body: json(#"{"theme":"dark"}"#)))
        // Push: each person's own devices (who sees whose is in PushTests).
        rows.append(row("GET \(v1)/push/web-push-key", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(row("GET \(v1)/me/push-devices", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/me/push-devices", "an endpoint on a private address", anon: 401, owner: 422, other: 422,
                blocked: 422, admin: 422,
                body: json(
                    #"{"platform":"webpush","endpoint":"https://10.1.2.3/p","keys":{"p256dh":"AA","auth":"AA"}}"#)))
        rows.append(
            row(
                "DELETE \(v1)/me/push-devices/{id}", "an unknown id", anon: 401, owner: 404, other: 404, blocked: 404,
                admin: 404, parameters: ["id": { _ in "1" }]))
        // Someone else's upload is refused like an unknown id.
        rows.append(
            row(
                "PUT \(v1)/me/avatar", "the owner's unused upload", anon: 401, owner: 200, other: [404, 422],
                blocked: [404, 422], admin: [404, 422],
                body: { .json(#"{"mediaId":"\#($0.unattachedMedia?.id ?? "")"}"#) }, media: true))
        rows.append(
            row(
                "POST \(v1)/me/media", anon: 401, owner: 201, other: 201, blocked: 201, admin: 201,
                body: { _ in .upload }))
        rows.append(row("GET \(v1)/me/media", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // One upload (a video's progress) is its owner's alone.
        rows.append(
            row(
                "GET \(v1)/me/media/{id}", anon: 401, owner: 200, other: 404, blocked: 404, admin: 404,
                url: { _, world in "/api/v1/me/media/\(try world.uploads().unattached.id)" }))
        // Its alt text too, in use on a post or not.
        rows.append(
            row(
                "PATCH \(v1)/me/media/{id}", anon: 401, owner: 200, other: 404, blocked: 404, admin: 404,
                body: { _ in .json(#"{"description":"A bowl of ramen"}"#) },
                url: { _, world in "/api/v1/me/media/\(try world.uploads().attached.id)" }, media: true))
        rows.append(row("GET \(v1)/me/suggestions", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // Keyword filters: each person's own; another's id is not found.
        rows.append(row("GET \(v1)/me/filters", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/me/filters", anon: 401, owner: 201, other: 201, blocked: 201, admin: 201,
                body: json(#"{"phrase":"zzmatrixfilterzz","contexts":["notifications"]}"#)))
        for (method, status, body) in [
            ("GET", 200, nil), ("PATCH", 200, #"{"action":"hide"}"#), ("DELETE", 204, nil),
        ] as [(String, Int, String?)] {
            rows.append(
                row(
                    "\(method) \(v1)/me/filters/{id}", anon: 401, owner: Expect(integerLiteral: status), other: 404,
                    blocked: 404, admin: 404, body: body.map(json),
                    url: { client, world in
                        let filter: KeywordFilter = try await client.must(
                            201, .post, "/me/filters", as: world.owner,
                            .json(#"{"phrase":"zzownerfilterzz","contexts":["home"]}"#))
                        return "/api/v1/me/filters/\(filter.id)"
                    }))
        }
        rows.append(row("GET \(v1)/me/sessions", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(row("DELETE \(v1)/me/sessions/{id}", anon: 401, owner: 204, other: 404, blocked: 404, admin: 404))
        // Media: an unused upload is its owner's alone; a post's media follow the post.
        rows.append(
            row(
                "GET /media/{id}/{variant}", "unused upload", anon: 404, owner: 200, other: 404, blocked: 404,
                admin: 404,
                url: { _, world in try world.uploads().unattached.variants.thumbnail }))
        rows.append(
            row(
                "HEAD /media/{id}/{variant}", "unused upload", anon: 404, owner: 200, other: 404, blocked: 404,
                admin: 404,
                url: { _, world in try world.uploads().unattached.variants.thumbnail }))
        rows.append(
            row(
                "GET /media/{id}/{variant}", "on the owner's post", anon: 200, owner: 200, other: 200, blocked: 404,
                admin: 200,
                url: { _, world in try world.uploads().attached.variants.thumbnail }))
        rows.append(
            row(
                "HEAD /media/{id}/{variant}", "on the owner's post", anon: 200, owner: 200, other: 200, blocked: 404,
                admin: 200,
                url: { _, world in try world.uploads().attached.variants.original }))
        rows.append(
            row(
                "GET /media/{id}/{variant}", "of a deleted post", anon: 404, owner: 404, other: 404, blocked: 404,
                admin: 404,
                url: { client, world in try await client.deletedPostMedia(world).variants.medium }))
        rows.append(
            row(
                "HEAD /media/{id}/{variant}", "of a deleted post", anon: 404, owner: 404, other: 404, blocked: 404,
                admin: 404,
                url: { client, world in try await client.deletedPostMedia(world).variants.thumbnail }))
        // People: a block hides the blocker's profile and everything under it from the blocked.
        rows.append(row("GET \(v1)/users/{username}", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("GET \(v1)/users/{username}/posts", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("PUT \(v1)/users/{username}/follow", anon: 401, owner: 422, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("DELETE \(v1)/users/{username}/follow", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("GET \(v1)/users/{username}/followers", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("GET \(v1)/users/{username}/following", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("PUT \(v1)/users/{username}/block", anon: 401, owner: 422, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("DELETE \(v1)/users/{username}/block", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("GET \(v1)/users/{username}/activity", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("GET \(v1)/users/{username}/friends", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row("PUT \(v1)/users/{username}/mute", anon: 401, owner: 422, other: 204, blocked: 404, admin: 204))
        rows.append(
            row("DELETE \(v1)/users/{username}/mute", anon: 401, owner: 204, other: 204, blocked: 404, admin: 204))
        // Follow requests: each person's own inbox; the owner is not locked, so nobody asked anyone.
        rows.append(row("GET \(v1)/me/follow-requests", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PUT \(v1)/me/follow-requests/{username}", "nobody asked", anon: 401, owner: 404, other: 404,
                blocked: 404, admin: 404))
        rows.append(
            row(
                "DELETE \(v1)/me/follow-requests/{username}", "nobody asked", anon: 401, owner: 404, other: 404,
                blocked: 404, admin: 404))
        // Posts, comments, likes: only the author edits or deletes a post.
        rows.append(
            row(
                "POST \(v1)/posts", anon: 401, owner: 201, other: 201, blocked: 201, admin: 201,
                body: json(#"{"kind":"text","body":"hello"}"#)))
        rows.append(row("GET \(v1)/posts/{id}", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        // Audiences: a post for followers is read by them, one for members by the space's members
        // and moderators; to anyone else it is not there, and neither is what hangs off it.
        for operation in ["GET \(v1)/posts/{id}", "GET \(v1)/posts/{id}/comments", "GET \(v1)/posts/{id}/likes"] {
            rows.append(
                row(
                    operation, "a post for the owner's followers", anon: 404, owner: 200, other: 404, blocked: 404,
                    admin: 404, follower: 200, member: 404, parameters: ["id": { $0.followersPost.id }]))
            rows.append(
                row(
                    operation, "a post for the space's members", anon: 404, owner: 200, other: 404, blocked: 404,
                    admin: 404, member: 200, parameters: ["id": { $0.membersPost.id }]))
        }
        for operation in ["PUT \(v1)/posts/{id}/like", "POST \(v1)/posts/{id}/view"] {
            let ok: Expect = operation.hasPrefix("PUT") ? 200 : 204
            rows.append(
                row(
                    operation, "a post for the owner's followers", anon: 401, owner: ok, other: 404, blocked: 404,
                    admin: 404, follower: ok, member: 404, parameters: ["id": { $0.followersPost.id }]))
            rows.append(
                row(
                    operation, "a post for the space's members", anon: 401, owner: ok, other: 404, blocked: 404,
                    admin: 404, member: ok, parameters: ["id": { $0.membersPost.id }]))
        }
        rows.append(
            row(
                "PATCH \(v1)/posts/{id}", anon: 401, owner: 200, other: 403, blocked: 404, admin: 403,
                body: json(#"{"body":"edited"}"#)))
        rows.append(row("DELETE \(v1)/posts/{id}", anon: 401, owner: 204, other: 403, blocked: 404, admin: 403))
        rows.append(row("GET \(v1)/posts/{id}/comments", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(
            row(
                "POST \(v1)/posts/{id}/comments", anon: 401, owner: 201, other: 201, blocked: 404, admin: 201,
                body: json(#"{"body":"a comment"}"#)))
        // A comment goes by its author's or its post author's hand, blocks or not.
        rows.append(
            row(
                "DELETE \(v1)/comments/{id}", "the owner's comment on their post", anon: 401, owner: 204, other: 403,
                blocked: 404, admin: 403))
        rows.append(
            row(
                "DELETE \(v1)/comments/{id}", "another person's comment on the owner's post", anon: 401, owner: 204,
                other: 204, blocked: 404, admin: 403, follower: 403, member: 403,
                fixtures: .perCell, parameters: ["id": { $0.otherComment.id }]))
        rows.append(
            row(
                "DELETE \(v1)/comments/{id}", "the blocked person's comment on the owner's post", anon: 401, owner: 204,
                other: 403, blocked: 204, admin: 403,
                fixtures: .perCell, parameters: ["id": { $0.blockedComment.id }]))
        rows.append(row("PUT \(v1)/posts/{id}/like", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("DELETE \(v1)/posts/{id}/like", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("GET \(v1)/posts/{id}/likes", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("GET \(v1)/posts/{id}/boosts", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("GET \(v1)/posts/{id}/history", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("PUT \(v1)/posts/{id}/boost", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("DELETE \(v1)/posts/{id}/boost", anon: 401, owner: 200, other: 200, blocked: 404, admin: 200))
        // Votes: anyone who reads the post, once, not its author.
        rows.append(
            row(
                "POST \(v1)/posts/{id}/poll/votes", "the owner's poll", anon: 401, owner: 422, other: 200,
                blocked: 404, admin: 200, body: json(#"{"choices":[0]}"#), parameters: ["id": { $0.post2.id }]))
        rows.append(
            row(
                "POST \(v1)/posts/{id}/poll/votes", "a post with no poll", anon: 401, owner: 404, other: 404,
                blocked: 404, admin: 404, body: json(#"{"choices":[0]}"#)))
        // Pins: the author's to their profile; a space's moderators' to its top (`?space=`).
        for method in ["PUT", "DELETE"] {
            rows.append(
                row("\(method) \(v1)/posts/{id}/pin", anon: 401, owner: 200, other: 403, blocked: 404, admin: 403))
            rows.append(
                row(
                    "\(method) \(v1)/posts/{id}/pin", "in the owner's space", anon: 401, owner: 200, other: 403,
                    blocked: 403, admin: 403, moderator: 200, query: { "?space=\($0.space.slug)" }))
        }
        rows.append(
            row("GET \(v1)/users/{username}/pinned", anon: 200, owner: 200, other: 200, blocked: 404, admin: 200))
        rows.append(row("GET \(v1)/spaces/{slug}/pinned", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        // Recommending the owner's post to their follower: only from someone the follower follows.
        rows.append(
            row(
                "POST \(v1)/posts/{id}/recommend", "to the owner's follower", anon: 401, owner: 204, other: 422,
                blocked: 404, admin: 422, follower: 422, member: 422,
                body: { .json(#"{"to":["\#($0.follower.username)"]}"#) }))
        // Feeds: the blocked person's show nothing of the owner (checked by the markers).
        rows.append(row("GET \(v1)/feed/home", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(row("GET \(v1)/feed/global", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        // Hashtags are public; following one is a person's own. The owner's post carries its
        // marker as a tag: its page must not show it to the blocked person.
        let tag: [String: @Sendable (MatrixWorld) -> String] = ["tag": { _ in "ramen" }]
        rows.append(row("GET \(v1)/hashtags", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "GET \(v1)/hashtags/{tag}", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200, parameters: tag
            ))
        rows.append(
            row(
                "GET \(v1)/hashtags/{tag}/posts", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200,
                parameters: ["tag": { $0.postMarker }]))
        for method in ["PUT", "DELETE"] {
            rows.append(
                row(
                    "\(method) \(v1)/hashtags/{tag}/follow", anon: 401, owner: 204, other: 204, blocked: 204,
                    admin: 204, parameters: tag))
        }
        rows.append(
            row("GET \(v1)/me/followed-hashtags", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        for trend in ["hashtags", "posts", "links"] {
            rows.append(
                row("GET \(v1)/trending/\(trend)", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        }
        // The instance's staff keep a tag out of the trends.
        for method in ["PUT", "DELETE"] {
            rows.append(
                row(
                    "\(method) \(v1)/admin/hashtags/{tag}/trendable", anon: 401, owner: 403, other: 403, blocked: 403,
                    admin: 204, parameters: tag))
        }
        // Spaces are shared places: a block does not hide the owner's space, only its posts.
        rows.append(row("GET \(v1)/spaces", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/spaces", anon: 401, owner: 201, other: 201, blocked: 201, admin: 201,
                body: { _ in .json(#"{"slug":"\#(MatrixClient.word("n"))","name":"New space"}"#) }))
        rows.append(row("GET \(v1)/spaces/{slug}", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PATCH \(v1)/spaces/{slug}", anon: 401, owner: 200, other: 403, blocked: 403, admin: 403,
                body: json(#"{"description":"edited"}"#)))
        rows.append(
            row("PUT \(v1)/spaces/{slug}/membership", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // The owner cannot leave their space.
        rows.append(
            row("DELETE \(v1)/spaces/{slug}/membership", anon: 401, owner: 422, other: 200, blocked: 200, admin: 200))
        rows.append(row("GET \(v1)/spaces/{slug}/feed", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        // The space's moderators' tools (the owner and the moderator; `username` is the owner,
        // whose role, membership and ban cannot change). Admins do not moderate spaces; a space's
        // moderator deletes comments only through reports.
        rows.append(row("GET \(v1)/spaces/{slug}/members", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PATCH \(v1)/spaces/{slug}/members/{username}", anon: 401, owner: 422, other: 403, blocked: 404,
                admin: 403, moderator: 403, body: json(#"{"role":"member"}"#)))
        for operation in ["DELETE \(v1)/spaces/{slug}/members/{username}", "PUT \(v1)/spaces/{slug}/bans/{username}"] {
            rows.append(row(operation, anon: 401, owner: 422, other: 403, blocked: 404, admin: 403, moderator: 422))
        }
        for operation in [
            "DELETE \(v1)/spaces/{slug}/bans/{username}", "PUT \(v1)/spaces/{slug}/requests/{username}",
            "DELETE \(v1)/spaces/{slug}/requests/{username}",
        ] {
            rows.append(row(operation, anon: 401, owner: 404, other: 403, blocked: 404, admin: 403, moderator: 404))
        }
        rows.append(
            row(
                "DELETE \(v1)/spaces/{slug}/posts/{id}", anon: 401, owner: 204, other: 403, blocked: 403, admin: 403,
                moderator: 204, fixtures: .perCell))
        // An open space needs no request; its members are in already.
        rows.append(
            row(
                "POST \(v1)/spaces/{slug}/requests", anon: 401, owner: 409, other: 422, blocked: 422, admin: 422,
                member: 409))
        rows.append(
            row(
                "GET \(v1)/spaces/{slug}/requests", anon: 401, owner: 200, other: 403, blocked: 403, admin: 403,
                moderator: 200))
        rows.append(
            row(
                "POST \(v1)/spaces/{slug}/invites", anon: 401, owner: 201, other: 403, blocked: 403, admin: 403,
                moderator: 201, body: json("{}")))
        rows.append(
            row(
                "POST \(v1)/spaces/join/{code}", "an unknown code", anon: 401, owner: 404, other: 404, blocked: 404,
                admin: 404, parameters: ["code": { _ in "an-unknown-invite-code-of-fair-length" }]))
        // Search: the blocked person finds nothing of the owner; saved items are each person's own.
        rows.append(
            row(
                "GET \(v1)/search/posts", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200,
                query: { "?q=\($0.postMarker)" }, emptyFor: [.blocked]))
        rows.append(
            row(
                "GET \(v1)/search/users", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200,
                query: { "?q=\($0.owner.username)" }, emptyFor: [.blocked]))
        // The blocked person saved the owner's post before the block: the post's text no longer finds it.
        rows.append(
            row(
                "GET \(v1)/search/saved", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200,
                query: { "?q=\($0.postMarker)" },
                emptyFor: [.other, .blocked, .admin]))
        // History: each person's own.
        rows.append(row("POST \(v1)/posts/{id}/view", anon: 401, owner: 204, other: 204, blocked: 404, admin: 204))
        rows.append(row("GET \(v1)/me/history", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/me/history/{postId}/click", "a post the owner viewed", anon: 401, owner: 204, other: 404,
                blocked: 404, admin: 404))
        rows.append(row("GET \(v1)/me/recommended", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // Notifications: each person's own; someone else's ids are ignored.
        rows.append(row("GET \(v1)/me/notifications", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/me/notifications/read", "the owner's notification id", anon: 401, owner: 204, other: 204,
                blocked: 204, admin: 204,
                body: { .json(#"{"ids":["\#($0.notificationID)"]}"#) }, verify: ownerNotificationStillUnread))
        rows.append(row("GET \(v1)/stream", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        // Collections are private to their owner: anyone else gets 404.
        rows.append(row("GET \(v1)/collections", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "POST \(v1)/collections", anon: 401, owner: 201, other: 201, blocked: 201, admin: 201,
                body: json(#"{"name":"new"}"#)))
        rows.append(
            row(
                "PATCH \(v1)/collections/{id}", anon: 401, owner: 200, other: 404, blocked: 404, admin: 404,
                body: json(#"{"name":"renamed"}"#)))
        rows.append(row("DELETE \(v1)/collections/{id}", anon: 401, owner: 204, other: 404, blocked: 404, admin: 404))
        rows.append(
            row("GET \(v1)/collections/{id}/items", anon: 401, owner: 200, other: 404, blocked: 404, admin: 404))
        rows.append(
            row(
                "POST \(v1)/collections/{id}/items", anon: 401, owner: 201, other: 404, blocked: 404, admin: 404,
                body: { .json(#"{"postId":"\#($0.post2.id)"}"#) }))
        rows.append(
            row(
                "PATCH \(v1)/collections/items/{id}", anon: 401, owner: 200, other: 404, blocked: 404, admin: 404,
                body: json(#"{"note":"edited"}"#)))
        rows.append(
            row("DELETE \(v1)/collections/items/{id}", anon: 401, owner: 204, other: 404, blocked: 404, admin: 404))
        // Reports: anyone reports what they can see but not their own; the queue is for admins and
        // the world's space's owner and moderator; suspensions and the audit log are for admins.
        rows.append(
            row(
                "POST \(v1)/reports", anon: 401, owner: 422, other: 201, blocked: 404, admin: 201,
                body: { .json(#"{"targetType":"post","targetId":"\#($0.post.id)","reason":"spam"}"#) }))
        rows.append(
            row(
                "GET \(v1)/admin/reports", anon: 401, owner: 200, other: 403, blocked: 403, admin: 200,
                moderator: 200))
        rows.append(
            row(
                "PATCH \(v1)/admin/reports/{id}", "a report nobody filed", anon: 401, owner: 404, other: 404,
                blocked: 404, admin: 404, body: json(#"{"action":"dismiss"}"#), parameters: ["id": { _ in "1" }]))
        // Per cell: the admin's suspension of the owner would end the owner's own session.
        rows.append(
            row(
                "PUT \(v1)/admin/users/{username}/suspension", anon: 401, owner: 403, other: 403, blocked: 403,
                admin: 204, fixtures: .perCell))
        rows.append(
            row(
                "DELETE \(v1)/admin/users/{username}/suspension", anon: 401, owner: 403, other: 403, blocked: 403,
                admin: 204))
        rows.append(row("GET \(v1)/admin/audit", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        // The instance: anyone reads what it says of itself; its settings, the sign-ups waiting
        // for approval and invites are for admins (nobody waits here: 404 to the admin).
        rows.append(row("GET \(v1)/about", anon: 200, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(
            row(
                "PATCH \(v1)/admin/instance", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200,
                body: json(#"{"description":"A test world."}"#)))
        rows.append(
            row("GET \(v1)/admin/registrations", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        for operation in ["PUT \(v1)/admin/registrations/{username}", "DELETE \(v1)/admin/registrations/{username}"] {
            rows.append(
                row(operation, "nobody waits", anon: 401, owner: 403, other: 403, blocked: 403, admin: 404))
        }
        rows.append(row("GET \(v1)/admin/invites", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        rows.append(row("GET \(v1)/admin/overview", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        rows.append(row("GET \(v1)/admin/users", anon: 401, owner: 403, other: 403, blocked: 403, admin: 200))
        rows.append(
            row(
                "PUT \(v1)/admin/users/{username}/role", anon: 401, owner: 403, other: 403, blocked: 403, admin: 204,
                body: json(#"{"role":"member"}"#)))
        rows.append(
            row(
                "DELETE \(v1)/admin/users/{username}/two-factor", anon: 401, owner: 403, other: 403, blocked: 403,
                admin: 204))
        rows.append(row("POST \(v1)/admin/invites", anon: 401, owner: 403, other: 403, blocked: 403, admin: 201))
        rows.append(
            row(
                "DELETE \(v1)/admin/invites/{code}", "no such invite", anon: 401, owner: 403, other: 403, blocked: 403,
                admin: 404, parameters: ["code": { _ in "no-such-invite" }]))
        // One's own invites: a list of one's own for everyone signed in; making one is for admins
        // while members may not invite (the default); nobody revokes an invite that is not theirs.
        rows.append(row("GET \(v1)/invites", anon: 401, owner: 200, other: 200, blocked: 200, admin: 200))
        rows.append(row("POST \(v1)/invites", anon: 401, owner: 403, other: 403, blocked: 403, admin: 201))
        rows.append(
            row(
                "DELETE \(v1)/invites/{code}", "no such invite", anon: 401, owner: 404, other: 404, blocked: 404,
                admin: 404, parameters: ["code": { _ in "no-such-invite" }]))
        return rows
    }()

    /// Marking someone else's notification read changes nothing for them.
    @Sendable static func ownerNotificationStillUnread(
        _ client: MatrixClient, _ world: MatrixWorld, _ actor: MatrixActor
    ) async throws -> String? {
        guard actor != .owner else { return nil }
        let page: Page<PlazaAPI.Notification> = try await client.must(
            200, .get, "/me/notifications?unread=true", as: world.owner)
        return page.items.contains(where: { $0.id == world.notificationID })
            ? nil : "the owner's notification was marked read"
    }

    // MARK: the test

    @Test func everyOperationAsEveryoneMatchesThePolicy() async throws {
        try await MatrixClient.withLiveApp { client in
            let report = try await Self.run(client)
            print(
                "authorization matrix: \(report.operations) operations, \(report.rows) rows, \(report.cells) cells checked, \(report.mismatches.count) mismatches"
            )
            #expect(report.operations > 50, "the document lists the API's operations")
            #expect(report.cells >= report.rows * MatrixActor.allCases.count)
            if !report.mismatches.isEmpty {
                Issue.record(
                    "\(report.mismatches.count) of \(report.cells) cells differ from the policy:\n\(report.mismatches.joined(separator: "\n"))"
                )
            }
        }
    }

    struct Report: Sendable {
        var operations = 0
        var rows = 0
        var cells = 0
        var mismatches: [String] = []

        mutating func add(_ other: Report) {
            cells += other.cells
            mismatches += other.mismatches
        }
    }

    /// The document's operations: "METHOD path" and whether it requires a token; Plaza's, or
    /// those of Mastodon's API (tagged `Mastodon`), whose tokens and scopes have their own
    /// matrix (`MastodonAuthorizationMatrixTests`).
    static func documentedOperations(_ client: MatrixClient, mastodon: Bool = false) async throws -> [String: Bool] {
        let response = try await client.send(.get, "\(v1)/openapi.json", token: nil)
        guard
            let document = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                as? [String: Any],
            let paths = document["paths"] as? [String: [String: Any]]
        else { throw MatrixFixtureError(description: "the served OpenAPI document has no paths") }
        var operations: [String: Bool] = [:]
        for (path, item) in paths {
            for (method, value) in item {
                guard let operation = value as? [String: Any],
                    ((operation["tags"] as? [String])?.contains("Mastodon") ?? false) == mastodon
                else { continue }
                // Required: every alternative of `security` names a scheme (none is empty).
                let security =
                    operation["security"] as? [[String: Any]] ?? document["security"] as? [[String: Any]] ?? []
                operations["\(method.uppercased()) \(path)"] = !security.isEmpty && security.allSatisfy { !$0.isEmpty }
            }
        }
        return operations
    }

    static func run(_ client: MatrixClient) async throws -> Report {
        var report = Report()
        let documented = try await documentedOperations(client)
        report.operations = documented.count
        let covered = Set(policy.map(\.operation))
        for operation in documented.keys.sorted() where !covered.contains(operation) {
            report.mismatches.append("\(operation): new operation without a policy row")
        }
        for operation in covered.sorted() where documented[operation] == nil {
            report.mismatches.append("\(operation): policy row for an operation the document does not have")
        }
        for row in policy {
            guard let required = documented[row.operation] else { continue }
            let anonymousRefused = row.expect[.anonymous]?.statuses == [401]
            if required != anonymousRefused {
                report.mismatches.append(
                    "\(row.label): the document says a token is \(required ? "required" : "optional"), the policy expects \(row.expect[.anonymous]?.description ?? "-") for anonymous"
                )
            }
        }
        let rows = policy.filter { documented[$0.operation] != nil }
        report.rows = rows.count

        // Reads on one world; then each write on worlds of its own, a few at a time.
        let shared = try await client.makeWorld(media: true)
        try await checkFixtures(client, shared)
        for row in rows where row.fixtures == .shared {
            report.add(try await runRow(row, world: shared, actors: MatrixActor.runOrder, client: client))
        }
        var jobs: [(row: Row, actors: [MatrixActor])] = []
        for row in rows where row.fixtures == .perOperation { jobs.append((row, MatrixActor.runOrder)) }
        for row in rows where row.fixtures == .perCell { jobs += MatrixActor.runOrder.map { (row, [$0]) } }
        let queue = jobs
        let results = try await withThrowingTaskGroup(of: (Int, Report).self) { group in
            var next = 0
            func start(_ index: Int) {
                let job = queue[index]
                group.addTask {
                    (
                        index,
                        try await runRow(
                            job.row, world: try await client.makeWorld(media: job.row.media), actors: job.actors,
                            client: client)
                    )
                }
            }
            while next < min(Self.concurrentWorlds, queue.count) {
                start(next)
                next += 1
            }
            var results: [(Int, Report)] = []
            while let result = try await group.next() {
                results.append(result)
                if next < queue.count {
                    start(next)
                    next += 1
                }
            }
            return results
        }
        for (_, part) in results.sorted(by: { $0.0 < $1.0 }) { report.add(part) }
        return report
    }

    /// Writes' worlds made at once: enough to keep two cores busy while requests wait on the writer.
    static let concurrentWorlds = 4

    /// The fixtures are what the matrix assumes (the block is checked as it is made).
    static func checkFixtures(_ client: MatrixClient, _ world: MatrixWorld) async throws {
        let admin: Me = try await client.must(200, .get, "/me", as: world.admin)
        let owner: Me = try await client.must(200, .get, "/me", as: world.owner)
        guard admin.isAdmin, !owner.isAdmin else {
            throw MatrixFixtureError(description: "fixtures: admin \(admin.isAdmin), owner admin \(owner.isAdmin)")
        }
        // The checks for what must not show can fail: each marker shows where it should, and
        // the searches that must come back empty for some find something for others.
        let shows: [(path: String, account: Account, markers: [String])] = [
            ("/users/\(world.owner.username)", world.other, [world.bioMarker]),
            ("/feed/global", world.other, [world.postMarker]),
            ("/posts/\(world.post.id)/comments", world.other, [world.commentMarker]),
            ("/collections", world.owner, [world.collectionMarker]),
            ("/collections/\(world.collection.id)/items", world.owner, [world.noteMarker]),
            ("/me/preferences", world.owner, [world.preferenceMarker]),
            ("/me/sessions", world.owner, [world.secondSessionID]),
            ("/me/notifications", world.owner, [world.notificationID]),
            ("/me/media", world.owner, [try world.uploads().unattached.id]),
            ("/search/posts?q=\(world.postMarker)", world.other, [world.postMarker]),
            ("/search/users?q=\(world.owner.username)", world.other, [world.owner.id]),
            ("/search/saved?q=\(world.postMarker)", world.owner, [world.noteMarker]),
        ]
        for (path, account, markers) in shows {
            let response = try await client.send(.get, v1 + path, token: account.token)
            for marker in markers where !mentions(response.text, marker) {
                throw MatrixFixtureError(
                    description:
                        "fixtures: \(path) as \(account.username) does not show \(marker): \(response.status.code) \(response.text)"
                )
            }
        }
    }

    static func runRow(_ row: Row, world: MatrixWorld, actors: [MatrixActor], client: MatrixClient) async throws
        -> Report
    {
        var report = Report()
        let path: String
        if let url = row.url {
            path = try fill(row.path, from: try await url(client, world))
        } else {
            path = try fill(row.path, row: row, world: world)
        }
        let query = row.query(world)
        let target = path.contains("?") && query.hasPrefix("?") ? path + "&" + query.dropFirst() : path + query
        for actor in actors {
            guard let expected = row.expect[actor] else {
                report.mismatches.append("\(row.label) as \(actor): no expectation")
                continue
            }
            report.cells += 1
            let response: TestResponse
            if row.operation == "GET \(v1)/stream" {
                response = try await client.streamStatus(token: world.token(actor))
            } else {
                response = try await client.send(
                    HTTPRequest.Method(row.method) ?? .get, target, token: world.token(actor), body: row.body?(world))
            }
            let got = Int(response.status.code)
            guard expected.statuses.contains(got) else {
                let code = response.error.map { " \($0.code)" } ?? ""
                report.mismatches.append("\(row.label) as \(actor.rawValue): expected \(expected), got \(got)\(code)")
                continue
            }
            guard (200..<300).contains(got) else { continue }
            for problem in try await checkBody(response, row: row, world: world, actor: actor, client: client) {
                report.mismatches.append("\(row.label) as \(actor.rawValue): \(problem)")
            }
        }
        return report
    }

    /// What a successful response must not show this actor.
    static func checkBody(
        _ response: TestResponse, row: Row, world: MatrixWorld, actor: MatrixActor, client: MatrixClient
    ) async throws -> [String] {
        var problems: [String] = []
        let isJSON = response.headers[.contentType]?.hasPrefix("application/json") == true
        if isJSON, row.leakCheck { problems += leaks(response.text, world: world, actor: actor) }
        if row.emptyFor.contains(actor) {
            let page = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            let items = page?["items"] as? [Any]
            if items?.isEmpty != true {
                problems.append("expected an empty page, got \(items.map { "\($0.count) items" } ?? response.text)")
            }
        }
        if let verify = row.verify, let problem = try await verify(client, world, actor) { problems.append(problem) }
        return problems
    }

    /// What `text` shows this actor that it must not: the owner's private things to anyone else,
    /// the owner's posts, comments and bio to the person they blocked.
    static func leaks(_ text: String, world: MatrixWorld, actor: MatrixActor) -> [String] {
        var problems: [String] = []
        if actor != .owner {
            for marker in world.privateMarkers where mentions(text, marker) {
                problems.append("shows the owner's private \(marker)")
            }
        }
        if actor == .blocked {
            for marker in world.publicMarkers where mentions(text, marker) {
                problems.append("shows the blocker's \(marker)")
            }
        }
        return problems
    }

    /// True when `needle` occurs in `text` as a whole word or number.
    static func mentions(_ text: String, _ needle: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: needle) {
            let before = range.lowerBound > text.startIndex ? text[text.index(before: range.lowerBound)] : " "
            let after = range.upperBound < text.endIndex ? text[range.upperBound] : " "
            if !before.isLetter, !before.isNumber, !after.isLetter, !after.isNumber { return true }
            rest = text[range.upperBound...]
        }
        return false
    }

    /// The template with each `{name}` replaced by the row's fixture or the owner's default one.
    static func fill(_ template: String, row: Row, world: MatrixWorld) throws -> String {
        try fill(template, label: row.label) { name, previous in
            row.parameters[name]?(world) ?? world.defaultParameter(name, after: previous)
        }
    }

    /// The template with each `{name}` replaced by `value(name, the segment before it)`.
    static func fill(_ template: String, label: String, value: (String, String) -> String?) throws -> String {
        var previous = ""
        var segments: [String] = []
        for segment in template.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
            if segment.hasPrefix("{"), segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                guard let filled = value(name, previous) else {
                    throw MatrixFixtureError(
                        description:
                            "\(label): no fixture for {\(name)}; add one to the row or the world's defaultParameter"
                    )
                }
                segments.append(filled)
            } else {
                segments.append(segment)
            }
            previous = segment
        }
        return segments.joined(separator: "/")
    }

    /// A fixture's URL (path and query, e.g. a media key) whose path fits the template.
    static func fill(_ template: String, from url: String) throws -> String {
        let components = URLComponents(string: url)
        let path = components?.path ?? url
        let want = template.split(separator: "/")
        let have = path.split(separator: "/")
        guard want.count == have.count, zip(want, have).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) else {
            throw MatrixFixtureError(description: "the fixture URL \(url) does not fit \(template)")
        }
        return path + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}
