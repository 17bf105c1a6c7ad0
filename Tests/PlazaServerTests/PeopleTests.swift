import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("People: profiles, follows, blocks")
struct PeopleTests {
    @Test func profilesShowCountsAndTheViewersRelation() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            _ = try await api.textPost(ana, "hello")
            try await api.follow(bob, "ana")

            let anonymous = try await api.get("/users/ana").decode(User.self)
            #expect(anonymous.counts == User.Counts(posts: 1, followers: 1, following: 0))
            #expect(anonymous.viewer == nil)
            let seenByBob = try await api.get("/users/ANA", as: bob).decode(User.self)
            #expect(seenByBob.viewer == User.Viewer(following: true, followedBy: false, blocking: false))
            let seenByAna = try await api.get("/users/bob", as: ana).decode(User.self)
            #expect(seenByAna.viewer == User.Viewer(following: false, followedBy: true, blocking: false))
            #expect(try await api.get("/users/nobody").status == .notFound)
        }
    }

    @Test func followAndUnfollowAreIdempotentAndKeepCounts() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            for _ in 0..<2 {
                let profile = try await api.call(.put, "/users/ana/follow", as: bob).decode(User.self)
                #expect(profile.counts.followers == 1)
                #expect(profile.viewer?.following == true)
            }
            #expect(try await api.get("/users/bob").decode(User.self).counts.following == 1)
            for _ in 0..<2 {
                let profile = try await api.call(.delete, "/users/ana/follow", as: bob).decode(User.self)
                #expect(profile.counts.followers == 0)
                #expect(profile.viewer?.following == false)
            }
            #expect(try await api.get("/users/bob").decode(User.self).counts.following == 0)
            #expect(try await api.call(.put, "/users/ana/follow").status == .unauthorized)
            #expect(try await api.call(.put, "/users/ana/follow", as: ana).status == .unprocessableContent)
            #expect(try await api.call(.put, "/users/ghost/follow", as: ana).status == .notFound)
        }
    }

    @Test func followerListsPageNewestFirstWithoutGaps() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let names = try await api.fans(7, of: "ana")
            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await api.page(
                    "/users/ana/followers?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), as: ana, of: User.self)
                #expect(page.items.count <= 3)
                seen += page.items.map(\.username)
                #expect(page.items.allSatisfy { $0.viewer?.followedBy == true })
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == names.reversed())
            let following = try await api.page("/users/fan3/following", of: User.self)
            #expect(following.items.map(\.username) == ["ana"])
            #expect(following.nextCursor == nil)
        }
    }

    @Test func blockingHidesContentBothWaysAndStopsInteraction() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            try await api.follow(bob, "ana")
            try await api.follow(ana, "bob")
            let anaPost = try await api.textPost(ana, "ana's post")
            let bobPost = try await api.textPost(bob, "bob's post")
            _ = try await api.call(
                .post, "/posts/\(anaPost.id)/comments", as: bob, json: CreateCommentRequest(body: "bob was here"))
            _ = try await api.call(
                .post, "/posts/\(anaPost.id)/comments", as: carol, json: CreateCommentRequest(body: "carol too"))
            _ = try await api.call(.put, "/posts/\(anaPost.id)/like", as: bob)

            let blocked = try await api.call(.put, "/users/bob/block", as: ana)
            #expect(blocked.status == .ok)
            let profile = try blocked.decode(User.self)
            #expect(profile.viewer == User.Viewer(following: false, followedBy: false, blocking: true))
            // Follows end both ways.
            #expect(
                try await api.get("/users/ana").decode(User.self).counts
                    == User.Counts(posts: 1, followers: 0, following: 0))

            // Neither sees the other's posts, anywhere.
            #expect(try await api.get("/posts/\(anaPost.id)", as: bob).status == .notFound)
            #expect(try await api.get("/posts/\(bobPost.id)", as: ana).status == .notFound)
            #expect(try await api.page("/feed/global", as: bob, of: Post.self).items.map(\.id) == [bobPost.id])
            #expect(try await api.page("/feed/global", as: ana, of: Post.self).items.map(\.id) == [anaPost.id])
            // The blocker's profile and everything under it is a 404 to the blocked, as to the blocker.
            for path in [
                "/users/ana", "/users/ana/posts", "/users/ana/followers", "/users/ana/following", "/users/ana/activity",
            ] {
                #expect(try await api.get(path, as: bob).status == .notFound, "\(path)")
                #expect(
                    try await api.get(path.replacingOccurrences(of: "ana", with: "bob"), as: ana).status == .notFound,
                    "\(path)")
            }
            // Bob's comment and like disappear for Ana; Carol still sees everything.
            #expect(
                try await api.page("/posts/\(anaPost.id)/comments", as: ana, of: PlazaAPI.Comment.self).items.map(
                    \.body) == ["carol too"])
            #expect(
                try await api.page("/posts/\(anaPost.id)/comments", as: carol, of: PlazaAPI.Comment.self).items.count
                    == 2)
            #expect(try await api.page("/posts/\(anaPost.id)/likes", as: ana, of: User.self).items.isEmpty)
            #expect(try await api.page("/feed/global", as: carol, of: Post.self).items.count == 2)

            // No interactions either way.
            #expect(try await api.call(.put, "/users/ana/follow", as: bob).status == .notFound)
            #expect(try await api.call(.put, "/users/bob/follow", as: ana).status == .notFound)
            #expect(try await api.call(.put, "/posts/\(anaPost.id)/like", as: bob).status == .notFound)
            #expect(
                try await api.call(
                    .post, "/posts/\(anaPost.id)/comments", as: bob, json: CreateCommentRequest(body: "hi")
                ).status == .notFound)

            // Unblocking restores visibility (not the follows).
            #expect(
                try await api.call(.delete, "/users/bob/block", as: ana).decode(User.self).viewer?.blocking == false)
            #expect(try await api.get("/posts/\(anaPost.id)", as: bob).status == .ok)
            #expect(try await api.get("/users/bob", as: ana).decode(User.self).viewer?.following == false)
            #expect(try await api.call(.put, "/users/bob/block").status == .unauthorized)
            #expect(try await api.call(.put, "/users/ana/block", as: ana).status == .unprocessableContent)
        }
    }
}
