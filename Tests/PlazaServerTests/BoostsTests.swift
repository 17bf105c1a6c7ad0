import Hummingbird
import SQLKit
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Boosts: a public post shared with one's followers, in their home feeds once, counted,
/// notified, undone, hidden with a blocked or muted booster, gone with the post.
@Suite("Boosts")
struct BoostsTests {
    @Test func aBoostBringsAPublicPostToTheBoostersFollowersOnce() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat, dan) = try await api.register("ana", "bob", "cat", "dan")
            try await api.follow(cat, "bob")
            try await api.follow(cat, "dan")
            let post = try await api.textPost(ana, "ramen tonight")
            let mine = try await api.textPost(cat, "mine")
            #expect(try await api.call(.put, "/posts/\(post.id)/boost").status == .unauthorized)
            let boosted = try await api.call(.put, "/posts/\(post.id)/boost", as: bob).decode(Post.self)
            #expect(boosted.counts.boosts == 1 && boosted.viewer.boosted)
            #expect(try await api.call(.put, "/posts/\(post.id)/boost", as: bob).decode(Post.self).counts.boosts == 1)
            _ = try await api.call(.put, "/posts/\(post.id)/boost", as: dan)
            let home = try await api.page("/feed/home?limit=50", as: cat, of: Post.self).items
            #expect(home.map(\.id) == [post.id, mine.id])
            #expect(home.first?.boost?.by.username == "bob")
            #expect(home.first?.counts.boosts == 2)
            // Paging runs by the boost's time.
            let first = try await api.page("/feed/home?limit=1", as: cat, of: Post.self)
            #expect(first.items.map(\.id) == [post.id])
            let rest = try await api.page(
                "/feed/home?limit=5&cursor=\(try #require(first.nextCursor))", as: cat, of: Post.self)
            #expect(rest.items.map(\.id) == [mine.id])
            let boosters = try await api.page("/posts/\(post.id)/boosts", of: User.self).items.map(\.username)
            #expect(boosters == ["dan", "bob"])
            let notes = try await api.page("/me/notifications", as: ana, of: PlazaAPI.Notification.self).items
            #expect(notes.first?.kind == .boost && notes.first?.actorCount == 2)
            // Undone: Bob's boost goes; the entry was Bob's, so Cat sees it no more.
            let undone = try await api.call(.delete, "/posts/\(post.id)/boost", as: bob).decode(Post.self)
            #expect(undone.counts.boosts == 1 && !undone.viewer.boosted)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.map(\.id) == [mine.id])
        }
    }

    @Test func onlyPublicPostsAreBoostedAndBlocksMutesAndDeletesHideBoosts() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await api.follow(bob, "ana")
            try await api.follow(cat, "bob")
            let friends = try await api.post(ana, CreatePostRequest(kind: .text, body: "friends", audience: .followers))
            let refused = try await api.call(.put, "/posts/\(friends.id)/boost", as: bob)
            #expect(refused.status == .unprocessableContent && refused.error?.code == "not_boostable")
            #expect(try await api.call(.put, "/posts/\(friends.id)/boost", as: cat).status == .notFound)
            let post = try await api.textPost(ana, "for all")
            _ = try await api.call(.put, "/posts/\(post.id)/boost", as: bob)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.call(.put, "/users/bob/mute", as: cat).status == .noContent)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.isEmpty)
            #expect(try await api.call(.delete, "/users/bob/mute", as: cat).status == .noContent)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.map(\.id) == [post.id])
            // Unfollowing the booster takes the boost out.
            #expect(try await api.call(.delete, "/users/bob/follow", as: cat).status == .ok)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.isEmpty)
            try await api.follow(cat, "bob")
            _ = try await api.call(.delete, "/posts/\(post.id)/boost", as: bob)
            _ = try await api.call(.put, "/posts/\(post.id)/boost", as: bob)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await api.page("/feed/home", as: cat, of: Post.self).items.isEmpty)
            let left = try await api.withDatabase { db in
                try await db.read { c in
                    try await c.first("SELECT COUNT(*) AS n FROM home_entries WHERE boosted_by IS NOT NULL")?.decode(
                        column: "n", as: Int.self)
                }
            }
            #expect(left == 0)
        }
    }

    /// Mastodon apps: reblog answers the boost's status with the post inside, the home timeline
    /// shows it so (paged by the boost's id), reblogged_by lists the booster, a push type `reblog`.
    @Test func mastodonAppsReblog() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await api.follow(cat, "bob")
            let post = try await api.textPost(ana, "ramen")
            let (bobToken, catToken, anaToken) = (
                try await api.mastodonToken(bob), try await api.mastodonToken(cat), try await api.mastodonToken(ana)
            )
            let reblog = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/reblog", token: bobToken).json()
            let boostID = try #require(reblog["id"]?.stringValue)
            #expect(boostID != post.id && reblog["account"]?["acct"]?.stringValue == "bob")
            #expect(reblog["reblog"]?["id"]?.stringValue == post.id && reblog["reblog"]?["reblogs_count"] == .number(1))
            #expect(reblog["reblog"]?["reblogged"] == .bool(true))
            let home = try await api.mastodon(.get, "/api/v1/timelines/home", token: catToken).json().array
            #expect(home.map { $0["id"]?.stringValue } == [boostID])
            #expect(home.first?["reblog"]?["id"]?.stringValue == post.id)
            let older = try await api.mastodon(.get, "/api/v1/timelines/home?max_id=\(boostID)", token: catToken)
            #expect(try older.json().array.isEmpty)
            let by = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)/reblogged_by", token: anaToken).json()
            #expect(by.array.map { $0["acct"]?.stringValue } == ["bob"])
            let notes = try await api.mastodon(.get, "/api/v1/notifications", token: anaToken).json().array
            #expect(notes.first?["type"]?.stringValue == "reblog")
            let undone = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/unreblog", token: bobToken).json()
            #expect(undone["id"]?.stringValue == post.id && undone["reblogged"] == .bool(false))
            #expect(try await api.mastodon(.get, "/api/v1/timelines/home", token: catToken).json().array.isEmpty)
        }
    }
}
