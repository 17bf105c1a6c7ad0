import Hummingbird
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
            // Undone: Bob's boost goes; Dan's still brings the post to Cat, once, by its time.
            let undone = try await api.call(.delete, "/posts/\(post.id)/boost", as: bob).decode(Post.self)
            #expect(undone.counts.boosts == 1 && !undone.viewer.boosted)
            let after = try await api.page("/feed/home", as: cat, of: Post.self).items
            #expect(after.map(\.id) == [post.id, mine.id] && after.first?.boost?.by.username == "dan")
            _ = try await api.call(.delete, "/posts/\(post.id)/boost", as: dan)
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

    /// A boost brought a post; following its author, or one of its tags, brings it from there:
    /// the feed has it once, at its own time (the boost's entry leaves).
    @Test func followingWhereABoostedPostComesFromKeepsItOnce() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            try await api.follow(cat, "bob")
            let post = try await api.textPost(ana, "ramen #noodles")
            let later = try await api.textPost(ana, "soba #noodles")
            _ = try await api.call(.put, "/posts/\(post.id)/boost", as: bob)
            _ = try await api.call(.put, "/posts/\(later.id)/boost", as: bob)
            // Entered now, as the fan-out's worker does 200 ms later (waiting boosts are read by the
            // rule that enters them, `aBoostWaitsInTheQueueUntilItsBatchEntersIt`).
            _ = try await api.withDatabase { db in
                _ = try await db.write { try await HomeTimeline.enterPending(limit: 10, on: $0) }
                _ = try await db.write { try await HomeTimeline.enterPendingBoosts(limit: 10, on: $0) }
            }
            let boosted = try await api.page("/feed/home", as: cat, of: Post.self).items
            #expect(boosted.map(\.id) == [later.id, post.id] && boosted.allSatisfy { $0.boost != nil })
            #expect(try await api.call(.put, "/hashtags/noodles/follow", as: cat).status == .noContent)
            let tagged = try await api.page("/feed/home", as: cat, of: Post.self).items
            #expect(tagged.map(\.id) == [later.id, post.id] && tagged.allSatisfy { $0.boost == nil })
            try await api.follow(cat, "ana")
            let followed = try await api.page("/feed/home", as: cat, of: Post.self).items
            #expect(followed.map(\.id) == [later.id, post.id] && followed.allSatisfy { $0.boost == nil })
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

    /// A boost waits in `boost_pending` until the fan-out's next batch, and home feeds read it
    /// from there meanwhile: once, by the earliest booster, not for a reader who has the post
    /// from its author. The batch enters it so; undoing it before then takes it off the queue,
    /// after then queues the removal of its entries, hidden from the moment it is undone, while
    /// the next booster's brings the post instead; deleting the post leaves nothing behind. No service
    /// runs here, so the queue waits for as long as the test needs.
    @Test func aBoostWaitsInTheQueueUntilItsBatchEntersIt() async throws {
        try await withDatabase { db, _ in
            let (ana, bob, cat, dan, eve) = (Int64(1), Int64(2), Int64(3), Int64(4), Int64(5))
            try await db.write { conn in
                for (id, name) in [(ana, "ana"), (bob, "bob"), (cat, "cat"), (dan, "dan"), (eve, "eve")] {
                    try await conn.exec(
                        """
                        INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, created_at)
                        VALUES (\(bind: id), \(bind: name), \(bind: name), \(bind: name + "@example.com"), \(bind: name + "@example.com"), 'x', \(bind: name), 0)
                        """)
                }
                // Cat follows both boosters; Eve follows Bob and the author.
                for (follower, followee) in [(cat, bob), (cat, dan), (eve, bob), (eve, ana)] {
                    try await conn.exec(
                        "INSERT INTO follows (follower_id, followee_id, created_at) VALUES (\(bind: follower), \(bind: followee), 0)"
                    )
                }
                try await conn.exec(
                    "INSERT INTO posts (id, author_id, kind, body, created_at, audience) VALUES (100, 1, 'text', 'hi', 1000, 'public')"
                )
                try await HomeTimeline.queue(post: 100, author: ana, createdAt: 1_000, on: conn)
                _ = try await HomeTimeline.enterPending(limit: 10, on: conn)
            }
            let ids = IDGenerator(node: 1)
            let events = EventLog(db: db, signal: EventSignal(), pushes: WorkSignal())
            let boosts = BoostStore(db: db, ids: ids, events: events)
            let posts = PostStore(db: db, ids: ids, events: events, searchWindows: SearchWindowCache())
            func home(_ viewer: Int64) async throws -> [String] {
                try await posts.feed(.init(source: .home(viewer), page: PageRequest(limit: 20)), viewer: viewer).items
                    .map { "\($0.id)" + ($0.boost.map { " by \($0.by.username)" } ?? "") }
            }
            func feeds() async throws -> [[String]] { [try await home(cat), try await home(eve)] }
            func enter() async throws -> Int {
                try await db.write { try await HomeTimeline.enterPendingBoosts(limit: 10, on: $0) }
            }
            func count(_ query: SQL) async throws -> Int {
                try await db.read { try await $0.first(query)?.decode(column: "n", as: Int.self) ?? -1 }
            }
            let boostEntries: SQL = "SELECT COUNT(*) AS n FROM home_entries WHERE boosted_by IS NOT NULL"
            let queued: SQL = "SELECT COUNT(*) AS n FROM boost_pending"

            try await boosts.set(post: 100, user: bob, boosted: true)
            try await boosts.set(post: 100, user: dan, boosted: true)
            let expected = [["100 by bob"], ["100"]]
            #expect(try await feeds() == expected, "waiting")
            #expect(try await count(queued) == 2)
            #expect(try await count(boostEntries) == 0)
            #expect(try await enter() == 2)
            #expect(try await enter() == 0)
            #expect(try await feeds() == expected, "entered")
            #expect(try await count(boostEntries) == 1, "Cat's, by Bob")

            // Bob's was entered: undone, it is hidden at once, Dan's (the next) brings the post
            // instead, and the batch makes that so.
            try await boosts.set(post: 100, user: bob, boosted: false)
            #expect(try await feeds() == [["100 by dan"], ["100"]])
            #expect(try await count(queued) == 1, "the undoing")
            #expect(try await enter() == 1)
            #expect(try await feeds() == [["100 by dan"], ["100"]])
            #expect(try await count(boostEntries) == 1, "Cat's, by Dan")
            // Dan's undone as well: the post leaves Cat's feed; a boost made and undone before its
            // batch leaves nothing to do.
            try await boosts.set(post: 100, user: dan, boosted: false)
            try await boosts.set(post: 100, user: bob, boosted: true)
            try await boosts.set(post: 100, user: bob, boosted: false)
            #expect(try await feeds() == [[], ["100"]])
            #expect(try await count(queued) == 1, "Dan's undoing")
            #expect(try await enter() == 1)
            #expect(try await count(boostEntries) == 0)
            // Made again, a boost shows by its new time, waiting and then entered.
            try await boosts.set(post: 100, user: bob, boosted: true)
            #expect(try await feeds() == expected)
            #expect(try await enter() == 1)
            #expect(try await feeds() == expected)
            #expect(try await count(boostEntries) == 1)

            // A post deleted while an undoing waits leaves no entry and no queue behind.
            try await boosts.set(post: 100, user: bob, boosted: false)
            try await db.write { conn in
                try await BoostStore.removeFromTimelines(post: 100, on: conn)
                try await HomeTimeline.remove(post: 100, author: ana, on: conn)
                try await conn.exec("DELETE FROM posts WHERE id = 100")
            }
            #expect(try await count(queued) == 0)
            #expect(try await count(boostEntries) == 0)
            #expect(try await count("SELECT COUNT(*) AS n FROM home_entries") == 0)
        }
    }
}
