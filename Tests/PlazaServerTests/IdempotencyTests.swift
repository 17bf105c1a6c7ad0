import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Offline-first clients (step 24): `Idempotency-Key` makes a creating or toggling request
/// happen once however often it is sent; `ETag` and `If-None-Match` answer an unchanged resource
/// or page with a 304; API answers to apps may be kept by the app alone.
@Suite("Idempotency and conditional requests")
struct IdempotencyTests {
    static func key(_ value: String) -> HTTPFields { [HTTPField.Name("Idempotency-Key")!: value] }
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    @Test func aPostSentTwiceIsMadeOnce() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            // The bytes an app keeps and sends again (JSONEncoder may order keys differently each time).
            let body = #"{"kind":"text","body":"on the subway"}"#
            let first = try await api.call(.post, "/posts", as: ana, raw: body, headers: Self.key("k-1"))
            #expect(first.status == .created && first.headers[Self.replayed] == nil)
            let again = try await api.call(.post, "/posts", as: ana, raw: body, headers: Self.key("k-1"))
            #expect(again.status == .created && again.headers[Self.replayed] == "true")
            #expect(again.text == first.text)
            #expect(again.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.count == 1)
            // Another body under the same key is refused, and nothing is posted.
            let other = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "other"), headers: Self.key("k-1"))
            #expect(other.status == .unprocessableContent && other.error?.code == "idempotency_key_reused")
            // The same key on another path is another request too.
            let elsewhere = try await api.call(
                .post, "/posts/\(try first.decode(Post.self).id)/comments", as: ana,
                json: CreateCommentRequest(body: "on the subway"), headers: Self.key("k-1"))
            #expect(elsewhere.error?.code == "idempotency_key_reused")
            // Keys are each person's own: Bob's k-1 is his post.
            let bobs = try await api.call(.post, "/posts", as: bob, raw: body, headers: Self.key("k-1"))
            #expect(bobs.status == .created && bobs.headers[Self.replayed] == nil)
            #expect(try bobs.decode(Post.self).id != (try first.decode(Post.self).id))
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.count == 1)
            // Anonymous: the key changes nothing, the request is refused as ever.
            #expect(try await api.call(.post, "/posts", raw: body, headers: Self.key("k-9")).status == .unauthorized)
        }
    }

    @Test(arguments: ["", String(repeating: "k", count: 65), "with space", "caf\u{e9}", "tab\there"])
    func keysOfTheWrongShapeAre400(key: String) async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var headers = HTTPFields()
            headers.append(HTTPField(name: HTTPField.Name("Idempotency-Key")!, value: key))
            let response = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "hi"), headers: headers)
            #expect(response.status == .badRequest && response.error?.code == "invalid_idempotency_key")
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.isEmpty)
        }
    }

    @Test func commentsLikesFollowsAndVotesReplayWithoutDoublingCounts() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "ramen")
            for _ in 0..<3 {
                let comment = try await api.call(
                    .post, "/posts/\(post.id)/comments", as: bob, json: CreateCommentRequest(body: "yum"),
                    headers: Self.key("c1"))
                #expect(comment.status == .created)
                let like = try await api.call(.put, "/posts/\(post.id)/like", as: bob, headers: Self.key("l1"))
                #expect(like.status == .ok)
                let follow = try await api.call(.put, "/users/ana/follow", as: bob, headers: Self.key("f1"))
                #expect(follow.status == .ok)
            }
            let seen = try await api.get("/posts/\(post.id)", as: bob).decode(Post.self)
            #expect(seen.counts.comments == 1 && seen.counts.likes == 1 && seen.viewer.liked == true)
            #expect(try await api.page("/posts/\(post.id)/comments", of: PlazaAPI.Comment.self).items.count == 1)
            // An unlike in between: the like's replay answers the first answer and likes nothing again.
            #expect(try await api.call(.delete, "/posts/\(post.id)/like", as: bob).status == .ok)
            let replay = try await api.call(.put, "/posts/\(post.id)/like", as: bob, headers: Self.key("l1"))
            #expect(replay.headers[Self.replayed] == "true")
            #expect(try await api.get("/posts/\(post.id)", as: bob).decode(Post.self).counts.likes == 0)
        }
    }

    /// A request that fails changed nothing: its key is let go, and the next request may use it.
    @Test func aFailedRequestLetsItsKeyGo() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let missing = try await api.call(
                .post, "/posts/123456789/comments", as: ana, json: CreateCommentRequest(body: "hi"),
                headers: Self.key("x"))
            #expect(missing.status == .notFound)
            let invalid = try await api.call(
                .post, "/posts", as: ana, raw: #"{"kind":"text","body":""}"#, headers: Self.key("x"))
            #expect(invalid.status == .unprocessableContent && invalid.error?.code != "idempotency_key_reused")
            let made = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: "now"), headers: Self.key("x"))
            #expect(made.status == .created && made.headers[Self.replayed] == nil)
        }
    }

    /// The same request sent eight times at once (an app retrying on a flaky network) is done once.
    @Test func duplicatesAtOnceMakeOnePost() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let body = #"{"kind":"text","body":"once"}"#
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await api.call(.post, "/posts", as: ana, raw: body, headers: Self.key("burst"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(
                answers.allSatisfy { $0.status == .created || $0.status == .conflict },
                "\(answers.map { "\($0.status.code) \($0.text)" })")
            let conflicts = answers.filter { $0.status == .conflict }
            #expect(
                conflicts.allSatisfy { $0.error?.code == "idempotency_key_in_use" && $0.headers[.retryAfter] == "1" })
            let made = Set(try answers.filter { $0.status == .created }.map { try $0.decode(Post.self).id })
            #expect(made.count == 1)
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.map(\.id) == Array(made))
        }
    }

    @Test func anUploadSentAgainIsStoredOnce() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let form = MediaFixtures.multipart(try MediaFixtures.jpegWithEXIF())
            var headers: HTTPFields = [.contentType: form.contentType, .authorization: "Bearer \(ana.token)"]
            headers[HTTPField.Name("Idempotency-Key")!] = "upload-1"
            var ids: [String] = []
            for _ in 0..<2 {
                let response = try await api.client.execute(
                    uri: "/api/v1/me/media", method: .post, headers: headers, body: form.body)
                #expect(response.status == .created)
                ids.append(try JSONDecoder().decode(Media.self, from: Data(response.body.readableBytesView)).id)
            }
            #expect(ids[0] == ids[1])
            let count = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT COUNT(*) AS n FROM media") }?.decode(
                    column: "n", as: Int.self)
            }
            #expect(count == 1)
            // Another file under the key (another boundary): refused.
            let other = MediaFixtures.multipart(try MediaFixtures.jpegWithEXIF())
            headers[.contentType] = other.contentType
            let refused = try await api.client.execute(
                uri: "/api/v1/me/media", method: .post, headers: headers, body: other.body)
            #expect(refused.status == .unprocessableContent)
        }
    }

    /// Keys last 24 hours; a first request unanswered past its lease (its server stopped) gives
    /// its key up, and can then neither record nor release it; the maintenance round drops old keys.
    @Test func keysExpireAndStaleClaimsAreTakenOver() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let user = try #require(Int64(ana.id))
            try await api.withDatabase { db in
                let store = IdempotencyStore(db: db)
                let now = Timestamp.now.milliseconds
                let day = IdempotencyStore.lifetimeMillis
                func claim(_ key: String, _ fingerprint: String, at time: Int64) async throws -> IdempotencyStore.Claim
                {
                    try await store.claim(user: user, key: key, fingerprint: fingerprint, lease: 1000, now: time)
                }
                guard case .started(let slow) = try await claim("a", "f", at: now) else {
                    Issue.record("a new key is not started")
                    return
                }
                #expect(try await claim("a", "f", at: now) == .inProgress)
                #expect(try await claim("a", "g", at: now) == .reused)
                // Past the lease, unanswered: the next request takes the key.
                guard case .started(let fast) = try await claim("a", "f", at: now + 1001) else {
                    Issue.record("a stale claim is not taken over")
                    return
                }
                // The first, late, neither records its answer nor lets the key go.
                try await store.record(user: user, key: "a", claim: slow, status: 500, contentType: nil, body: "late")
                try await store.release(user: user, key: "a", claim: slow)
                #expect(try await claim("a", "f", at: now + 1002) == .inProgress)
                try await store.record(
                    user: user, key: "a", claim: fast, status: 201, contentType: "application/json", body: "{}")
                #expect(
                    try await claim("a", "f", at: now + day)
                        == .answered(status: 201, contentType: "application/json", body: "{}"))
                // A day on, the key is new again, even before the maintenance round.
                guard case .started = try await claim("a", "g", at: now + day + 1002) else {
                    Issue.record("an expired key is not new again")
                    return
                }
                _ = try await claim("b", "f", at: now)
                try await store.prune(now: now + day + 1)
                let left = try await db.read {
                    try await $0.rows("SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key")
                }.map { try $0.decode(column: "idempotency_key", as: String.self) }
                #expect(left == ["a"])
            }
        }
    }

    /// Secrets are kept from the store by the route, however the path is spelled.
    @Test func secretRoutesAreKnownByTheirRoute() async throws {
        #expect(IdempotencyMiddleware.carriesSecrets("/api/v1//me/two-factor/recovery-codes"))
        #expect(IdempotencyMiddleware.carriesSecrets("//api/v1/auth//login"))
        #expect(IdempotencyMiddleware.carriesSecrets("/api/v1/apps"))
        #expect(IdempotencyMiddleware.carriesSecrets("/api/v1/spaces/{slug}/invites"))
        #expect(!IdempotencyMiddleware.carriesSecrets("/api/v1/posts"))
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            #expect(
                try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "course", name: "Course"))
                    .status == .created)
            let doubled = try await api.call(
                .post, "//spaces/course/invites", as: ana, raw: "{}", headers: Self.key("d"))
            #expect(doubled.status == .created)
            let kept = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT COUNT(*) AS n FROM idempotency_keys") }?.decode(
                    column: "n", as: Int.self)
            }
            #expect(kept == 0)
        }
    }

    /// Mastodon keeps keys of any shape; so does its door (as their SHA-256).
    @Test func mastodonKeysOfAnyShapeAreKept() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let long = String(repeating: "k", count: 200) + " with spaces"
            let first = try await api.mastodon(
                .post, "/api/v1/statuses", token: token, form: [("status", "hi")], headers: Self.key(long))
            let again = try await api.mastodon(
                .post, "/api/v1/statuses", token: token, form: [("status", "hi")], headers: Self.key(long))
            #expect(first.status == .ok && again.headers[Self.replayed] == "true")
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.count == 1)
        }
    }

    /// Answers that carry secrets are never kept: there the key is ignored.
    @Test func answersWithSecretsAreNotKept() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let space = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "course", name: "Course"))
            #expect(space.status == .created)
            let first = try await api.call(.post, "/spaces/course/invites", as: ana, raw: "{}", headers: Self.key("i"))
            let second = try await api.call(.post, "/spaces/course/invites", as: ana, raw: "{}", headers: Self.key("i"))
            #expect(first.status == .created && second.status == .created && second.headers[Self.replayed] == nil)
            #expect(first.text != second.text)
            let kept = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT COUNT(*) AS n FROM idempotency_keys") }?.decode(
                    column: "n", as: Int.self)
            }
            #expect(kept == 0)
        }
    }

    @Test func mastodonStatusesShareTheStore() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let first = try await api.mastodon(
                .post, "/api/v1/statuses", token: token, form: [("status", "hello")], headers: Self.key("m1"))
            let again = try await api.mastodon(
                .post, "/api/v1/statuses", token: token, form: [("status", "hello")], headers: Self.key("m1"))
            #expect(again.headers[Self.replayed] == "true")
            #expect(try first.json()["id"] == (try again.json()["id"]))
            let other = try await api.mastodon(
                .post, "/api/v1/statuses", token: token, form: [("status", "other")], headers: Self.key("m1"))
            #expect(other.status == .unprocessableContent)
            #expect(try other.json()["error"]?.stringValue?.contains("Idempotency-Key") == true)
            #expect(try await api.page("/users/ana/posts", of: Post.self).items.count == 1)
        }
    }

    // MARK: conditional requests

    @Test func unchangedResourcesAndPagesAre304() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.follow(bob, "ana")
            let post = try await api.textPost(ana, "ramen")
            for path in ["/posts/\(post.id)", "/feed/home", "/posts/\(post.id)/comments", "/users/ana"] {
                let first = try await api.get(path, as: bob)
                let tag = try #require(first.headers[.eTag], "\(path)")
                #expect(first.headers[.cacheControl] == "private, no-cache", "\(path)")
                let again = try await api.call(.get, path, as: bob, headers: [.ifNoneMatch: tag])
                #expect(again.status == .notModified && again.body.readableBytes == 0, "\(path)")
                #expect(again.headers[.eTag] == tag && again.headers[.cacheControl] == "private, no-cache")
                let weak = try await api.call(.get, path, as: bob, headers: [.ifNoneMatch: "\"x\", W/\(tag)"])
                #expect(weak.status == .notModified)
            }
            // A like changes the post and the page: a new tag, a full answer.
            let before = try await api.get("/feed/home", as: bob)
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: bob).status == .ok)
            let after = try await api.call(
                .get, "/feed/home", as: bob, headers: [.ifNoneMatch: try #require(before.headers[.eTag])])
            #expect(after.status == .ok && after.headers[.eTag] != before.headers[.eTag])
            #expect(try after.decode(Page<Post>.self).items.first?.viewer.liked == true)
            // HEAD answers the same tag, and a 304 too.
            let head = try await api.call(.head, "/posts/\(post.id)", as: bob)
            let tag = try #require(head.headers[.eTag])
            let got = try await api.get("/posts/\(post.id)", as: bob)
            #expect(head.status == .ok && tag == got.headers[.eTag])
            #expect(
                try await api.call(.head, "/posts/\(post.id)", as: bob, headers: [.ifNoneMatch: tag]).status
                    == .notModified)
            // Anonymous readers get tags too; errors get none.
            let open = try await api.get("/posts/\(post.id)")
            #expect(open.headers[.eTag] != nil && open.headers[.eTag] != before.headers[.eTag])
            #expect(try await api.get("/posts/123456789").headers[.eTag] == nil)
        }
    }
}
