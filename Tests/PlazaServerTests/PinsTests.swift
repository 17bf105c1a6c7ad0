import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Pins: an author's posts on top of their profile, a space's announcements; at most five each,
/// idempotent, read through the visibility rules, gone with the post; Mastodon's pin and unpin.
@Suite("Pins")
struct PinsTests {
    @Test func anAuthorPinsUpToFivePostsToTheirProfile() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            var posts: [Post] = []
            for n in 1...6 { posts.append(try await api.textPost(ana, "post \(n)")) }
            #expect(try await api.call(.put, "/posts/\(posts[0].id)/pin").status == .unauthorized)
            let pinned = try await api.call(.put, "/posts/\(posts[0].id)/pin", as: ana).decode(Post.self)
            #expect(pinned.pinned)
            #expect(try await api.call(.put, "/posts/\(posts[0].id)/pin", as: ana).decode(Post.self).pinned)
            for post in posts[1...4] {
                #expect(try await api.call(.put, "/posts/\(post.id)/pin", as: ana).status == .ok)
            }
            let full = try await api.call(.put, "/posts/\(posts[5].id)/pin", as: ana)
            #expect(full.status == .unprocessableContent && full.error?.code == "too_many_pins")
            let other = try await api.call(.put, "/posts/\(posts[5].id)/pin", as: bob)
            #expect(other.status == .forbidden && other.error?.code == "not_author")
            #expect(try await api.call(.put, "/posts/123456789/pin", as: ana).status == .notFound)
            let list = try await api.page("/users/ana/pinned", as: bob, of: Post.self).items
            #expect(list.map(\.id) == posts[0...4].reversed().map(\.id))
            #expect(list.allSatisfy { $0.pinned })
            #expect(try await api.call(.get, "/posts/\(posts[0].id)").decode(Post.self).pinned)
            #expect(try await api.call(.get, "/posts/\(posts[5].id)").decode(Post.self).pinned == false)
            let unpinned = try await api.call(.delete, "/posts/\(posts[0].id)/pin", as: ana).decode(Post.self)
            #expect(!unpinned.pinned)
            #expect(try await api.call(.delete, "/posts/\(posts[0].id)/pin", as: ana).status == .ok)
            #expect(try await api.call(.put, "/posts/\(posts[5].id)/pin", as: ana).status == .ok)
            // Deleting a pinned post takes its pin.
            #expect(try await api.call(.delete, "/posts/\(posts[5].id)", as: ana).status == .noContent)
            #expect(try await api.page("/users/ana/pinned", of: Post.self).items.count == 4)
        }
    }

    /// Pins at once cannot pass the limit: it is counted under the person's row lock.
    @Test func pinsAtOnceStopAtFive() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var posts: [Post] = []
            for n in 1...8 { posts.append(try await api.textPost(ana, "post \(n)")) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for post in posts {
                    group.addTask { try await api.call(.put, "/posts/\(post.id)/pin", as: ana).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 5)
            #expect(statuses.filter { $0 == .unprocessableContent }.count == 3)
            #expect(try await api.page("/users/ana/pinned", of: Post.self).items.count == 5)
        }
    }

    @Test func pinnedListsKeepTheVisibilityRules() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await api.follow(bob, "ana")
            let friends = try await api.post(ana, CreatePostRequest(kind: .text, body: "friends", audience: .followers))
            let open = try await api.textPost(ana, "for all")
            #expect(try await api.call(.put, "/posts/\(friends.id)/pin", as: cat).status == .notFound)
            _ = try await api.call(.put, "/posts/\(friends.id)/pin", as: ana)
            _ = try await api.call(.put, "/posts/\(open.id)/pin", as: ana)
            #expect(
                try await api.page("/users/ana/pinned", as: bob, of: Post.self).items.map(\.id) == [
                    open.id, friends.id,
                ])
            #expect(try await api.page("/users/ana/pinned", as: cat, of: Post.self).items.map(\.id) == [open.id])
            #expect(try await api.page("/users/ana/pinned", of: Post.self).items.map(\.id) == [open.id])
            #expect(try await api.call(.put, "/users/cat/block", as: ana).status == .ok)
            let blocked = try await api.call(.get, "/users/ana/pinned", as: cat)
            let seen = blocked.status == .notFound ? [] : try blocked.decode(Page<Post>.self).items
            #expect(seen.isEmpty)
        }
    }

    @Test func aSpacesModeratorsPinAnnouncements() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            #expect(
                try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "ramen", name: "Ramen"))
                    .status == .created)
            for who in [bob, cat] {
                #expect(try await api.call(.put, "/spaces/ramen/membership", as: who).status == .ok)
            }
            #expect(
                try await api.call(.patch, "/spaces/ramen/members/bob", as: ana, raw: #"{"role":"moderator"}"#).status
                    == .ok)
            let news = try await api.post(cat, CreatePostRequest(kind: .text, body: "news", spaces: ["ramen"]))
            let more = try await api.post(cat, CreatePostRequest(kind: .text, body: "more", spaces: ["ramen"]))
            let elsewhere = try await api.textPost(cat, "elsewhere")
            let member = try await api.call(.put, "/posts/\(news.id)/pin?space=ramen", as: cat)
            #expect(member.status == .forbidden && member.error?.code == "not_moderator")
            let byOwner = try await api.call(.put, "/posts/\(news.id)/pin?space=ramen", as: ana).decode(Post.self)
            #expect(byOwner.pinned)
            #expect(try await api.call(.put, "/posts/\(more.id)/pin?space=ramen", as: bob).status == .ok)
            #expect(try await api.call(.put, "/posts/\(more.id)/pin?space=ramen", as: bob).status == .ok)
            let outside = try await api.call(.put, "/posts/\(elsewhere.id)/pin?space=ramen", as: ana)
            #expect(outside.status == .unprocessableContent && outside.error?.code == "not_in_space")
            let pins = try await api.page("/spaces/ramen/pinned", of: Post.self).items
            #expect(pins.map(\.id) == [more.id, news.id] && pins.allSatisfy { $0.pinned })
            let feed = try await api.page("/spaces/ramen/feed", of: Post.self).items
            #expect(feed.count == 2 && feed.allSatisfy { $0.pinned })
            // Not a profile pin: its own page does not say pinned.
            #expect(try await api.call(.get, "/posts/\(news.id)").decode(Post.self).pinned == false)
            #expect(try await api.call(.delete, "/posts/\(news.id)/pin?space=ramen", as: bob).status == .ok)
            #expect(try await api.page("/spaces/ramen/pinned", of: Post.self).items.map(\.id) == [more.id])
            #expect(try await api.call(.delete, "/posts/\(more.id)", as: cat).status == .noContent)
            #expect(try await api.page("/spaces/ramen/pinned", of: Post.self).items.isEmpty)
        }
    }

    @Test func mastodonAppsPinAndListPinnedStatuses() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "hello")
            let other = try await api.textPost(ana, "other")
            let (anaToken, bobToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bob))
            let pinned = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/pin", token: anaToken).json()
            #expect(pinned["id"]?.stringValue == post.id && pinned["pinned"] == .bool(true))
            let refused = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/pin", token: bobToken)
            #expect(refused.status == .unprocessableContent)
            let list = try await api.mastodon(
                .get, "/api/v1/accounts/\(ana.id)/statuses?pinned=true", token: bobToken
            ).json().array
            #expect(list.map { $0["id"]?.stringValue } == [post.id])
            let all = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/statuses", token: bobToken).json().array
            #expect(all.map { $0["id"]?.stringValue } == [other.id, post.id])
            let unpinned = try await api.mastodon(.post, "/api/v1/statuses/\(post.id)/unpin", token: anaToken).json()
            #expect(unpinned["pinned"] == .bool(false))
            let none = try await api.mastodon(
                .get, "/api/v1/accounts/\(ana.id)/statuses?pinned=true", token: bobToken
            ).json().array
            #expect(none.isEmpty)
        }
    }
}
