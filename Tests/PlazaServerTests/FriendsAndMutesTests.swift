import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Friends and mutes")
struct FriendsAndMutesTests {
    static func friends(_ api: TestAPI, _ username: String, as account: Account? = nil, query: String = "")
        async throws -> Page<User>
    {
        try await api.page("/users/\(username)/friends" + query, as: account, of: User.self)
    }

    @Test func friendsAreMutualFollowsNewestFirst() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol, dan, eve) = try await api.register("ana", "bob", "carol", "dan", "eve")
            // Ana and Bob, Ana and Carol, Ana and Eve follow each other; Ana follows Dan, who does not follow back;
            // Dan's follow of Carol is one-way too.
            for (follower, name) in [
                (ana, "bob"), (bob, "ana"), (carol, "ana"), (ana, "carol"), (ana, "dan"), (dan, "carol"), (ana, "eve"),
                (eve, "ana"),
            ] {
                try await api.follow(follower, name)
            }
            let anas = try await Self.friends(api, "ana")
            // Ordered by when Ana followed them, newest first.
            #expect(anas.items.map(\.username) == ["eve", "carol", "bob"])
            #expect(anas.items.allSatisfy { $0.viewer == nil })
            #expect(try await Self.friends(api, "bob").items.map(\.username) == ["ana"])
            #expect(try await Self.friends(api, "dan").items.isEmpty)
            // Paged without gaps or repeats.
            let first = try await Self.friends(api, "ana", query: "?limit=2")
            #expect(first.items.map(\.username) == ["eve", "carol"])
            let cursor = try #require(first.nextCursor)
            let second = try await Self.friends(api, "ana", query: "?limit=2&cursor=\(cursor)")
            #expect(second.items.map(\.username) == ["bob"] && second.nextCursor == nil)
            // The viewer's relations are filled in.
            let seenByBob = try await Self.friends(api, "ana", as: bob)
            #expect(seenByBob.items.first { $0.username == "carol" }?.viewer?.following == false)
            #expect(seenByBob.items.first { $0.username == "bob" }?.viewer != nil)

            // Unfollowing ends the friendship; a block hides the blocked from the list and the list from them.
            _ = try await api.call(.delete, "/users/bob/follow", as: ana)
            #expect(try await Self.friends(api, "ana").items.map(\.username) == ["eve", "carol"])
            #expect(try await api.call(.put, "/users/eve/block", as: carol).status == .ok)
            #expect(try await Self.friends(api, "ana", as: carol).items.map(\.username) == ["carol"])
            #expect(try await api.get("/users/carol/friends", as: eve).status == .notFound)
            #expect(try await api.get("/users/nobody/friends").status == .notFound)
            #expect(try await api.get("/users/ana/friends?cursor=nonsense").status == .badRequest)
            #expect(try await api.get("/users/ana/friends?limit=1000").status == .unprocessableContent)
        }
    }

    @Test func mutesHideFromMyFeedsButNotFromTheProfileAndDoNotBlock() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            #expect(
                try await api.call(.post, "/spaces", as: bob, json: CreateSpaceRequest(slug: "garden", name: "Garden"))
                    .status == .created)
            #expect(try await api.call(.put, "/spaces/garden/membership", as: ana).status == .ok)
            try await api.follow(ana, "bob")
            try await api.follow(ana, "carol")
            try await api.follow(carol, "bob")
            let bobs = try await api.post(
                bob, CreatePostRequest(kind: .text, body: "bob in the garden", spaces: ["garden"]))
            let carols = try await api.post(carol, CreatePostRequest(kind: .text, body: "carol's", spaces: ["garden"]))
            let feeds = ["/feed/home", "/feed/global", "/spaces/garden/feed"]
            for feed in feeds {
                #expect(
                    try await api.page(feed, as: ana, of: Post.self).items.map(\.id) == [carols.id, bobs.id], "\(feed)")
            }

            #expect(try await api.call(.put, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.call(.put, "/users/bob/mute", as: ana).status == .noContent)
            for feed in feeds {
                #expect(try await api.page(feed, as: ana, of: Post.self).items.map(\.id) == [carols.id], "\(feed)")
                // Only for the one who muted.
                #expect(
                    try await api.page(feed, as: carol, of: Post.self).items.contains { $0.id == bobs.id }, "\(feed)")
            }
            #expect(try await api.page("/feed/global", of: Post.self).items.count == 2)
            // Not hidden from his profile or the post itself; no block either way, follows stay.
            #expect(try await api.page("/users/bob/posts", as: ana, of: Post.self).items.map(\.id) == [bobs.id])
            #expect(try await api.get("/posts/\(bobs.id)", as: ana).status == .ok)
            let profile = try await api.get("/users/bob", as: ana).decode(User.self)
            #expect(profile.viewer == User.Viewer(following: true, followedBy: false, blocking: false, muting: true))
            #expect(try await api.get("/users/ana", as: bob).decode(User.self).viewer?.followedBy == true)
            #expect(try await api.get("/posts/\(bobs.id)/comments", as: bob).status == .ok)
            #expect(
                try await api.call(
                    .post, "/posts/\(carols.id)/comments", as: bob, json: CreateCommentRequest(body: "still here")
                ).status == .created)

            #expect(try await api.call(.delete, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.get("/users/bob", as: ana).decode(User.self).viewer?.muting == false)
            for feed in feeds {
                #expect(
                    try await api.page(feed, as: ana, of: Post.self).items.map(\.id) == [carols.id, bobs.id], "\(feed)")
            }

            // Signed out: 401; oneself: 422; nobody: 404.
            #expect(try await api.call(.put, "/users/bob/mute").status == .unauthorized)
            #expect(try await api.call(.delete, "/users/bob/mute").status == .unauthorized)
            #expect(try await api.call(.put, "/users/ana/mute", as: ana).status == .unprocessableContent)
            #expect(try await api.call(.put, "/users/nobody/mute", as: ana).status == .notFound)
            // One's own block does not stop one's mute or unmute; the other's block does (404).
            #expect(try await api.call(.put, "/users/bob/block", as: ana).status == .ok)
            #expect(try await api.call(.put, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.call(.put, "/users/ana/mute", as: bob).status == .notFound)
        }
    }
}
