import Hummingbird
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The home feed is read from timelines filled on write; these check that what it shows is what
/// the follows, posts, blocks, mutes and audiences say, whichever way a post got there.
@Suite("Home timelines")
struct HomeTimelineTests {
    @Test func aFollowBringsTheirPostsInAndAnUnfollowTakesThemOut() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let old = try await api.textPost(bob, "before the follow")
            let mine = try await api.textPost(ana, "mine")
            #expect(try await home(api, ana) == [mine.id])
            // Posted before the follow, shown at once: no new post needed.
            try await api.follow(ana, "bob")
            #expect(try await home(api, ana) == [mine.id, old.id])
            let new = try await api.textPost(bob, "after the follow")
            #expect(try await home(api, ana) == [new.id, mine.id, old.id])
            #expect(try await api.call(.delete, "/users/bob/follow", as: ana).status == .ok)
            #expect(try await home(api, ana) == [mine.id])
            #expect(try await entries(api, of: ana) == 1)
            try await api.follow(ana, "bob")
            #expect(try await home(api, ana) == [new.id, mine.id, old.id])
            // Bob's own timeline never had Ana's posts.
            #expect(try await home(api, bob) == [new.id, old.id])
        }
    }

    @Test func aDeletedPostLeavesEveryTimeline() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            try await api.follow(ana, "bob")
            try await api.follow(carol, "bob")
            let kept = try await api.textPost(bob, "kept")
            let gone = try await api.textPost(bob, "gone")
            #expect(try await entries(api, post: gone.id) == 3)
            #expect(try await api.call(.delete, "/posts/\(gone.id)", as: bob).status == .noContent)
            #expect(try await entries(api, post: gone.id) == 0)
            for person in [ana, bob, carol] { #expect(try await home(api, person) == [kept.id]) }
        }
    }

    @Test func aBlockEndsTheFollowsAndTheirTimelinesBothWays() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.follow(ana, "bob")
            try await api.follow(bob, "ana")
            let anas = try await api.textPost(ana, "ana's")
            let bobs = try await api.textPost(bob, "bob's")
            #expect(try await home(api, ana) == [bobs.id, anas.id])
            #expect(try await api.call(.put, "/users/bob/block", as: ana).status == .ok)
            #expect(try await entries(api, of: ana) == 1)
            #expect(try await entries(api, of: bob) == 1)
            #expect(try await api.call(.delete, "/users/bob/block", as: ana).status == .ok)
            #expect(try await home(api, ana) == [anas.id])
            #expect(try await home(api, bob) == [bobs.id])
            try await api.follow(ana, "bob")
            #expect(try await home(api, ana) == [bobs.id, anas.id])
        }
    }

    /// An entry is no permission: audiences, mutes and suspensions are applied when the page is read.
    @Test func whatAnEntryShowsIsDecidedWhenItIsRead() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let everyone = try await api.textPost(bob, "for all")
            let friends = try await api.post(bob, CreatePostRequest(kind: .text, body: "friends", audience: .followers))
            #expect(
                try await api.call(.post, "/spaces", as: bob, json: CreateSpaceRequest(slug: "club", name: "Club"))
                    .status == .created)
            let members = try await api.post(
                bob, CreatePostRequest(kind: .text, body: "members", spaces: ["club"], audience: .members))
            try await api.follow(ana, "bob")
            // The members-only post was entered for Ana, who is no member.
            #expect(try await entries(api, of: ana) == 3)
            #expect(try await home(api, ana) == [friends.id, everyone.id])
            #expect(try await api.call(.put, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await home(api, ana) == [])
            #expect(try await api.call(.delete, "/users/bob/mute", as: ana).status == .noContent)
            #expect(try await api.call(.put, "/spaces/club/membership", as: ana).status == .ok)
            #expect(try await home(api, ana) == [members.id, friends.id, everyone.id])
        }
    }

    /// Past the fan-out limit an account's posts are read by each follower's feed instead of
    /// entered in each timeline; the feed shows the same posts, once each, in order.
    @Test func anAccountWithManyFollowersIsReadWhenTheFeedIs() async throws {
        try await withApp({ $0.homeFanOutLimit = 2 }) { api async throws in
            let (bob, ana, carol, dave) = try await api.register("bob", "ana", "carol", "dave")
            try await api.follow(ana, "bob")
            try await api.follow(carol, "bob")
            let before = try await api.textPost(bob, "entered")
            #expect(try await entries(api, post: before.id) == 3)
            try await api.follow(dave, "bob")  // the third follower: over the limit
            let after = try await api.textPost(bob, "pulled")
            #expect(try await entries(api, post: after.id) == 1, "only Bob's own timeline")
            let anas = try await api.textPost(ana, "ana's")
            for person in [ana, carol, dave] {
                var expected = [after.id, before.id]
                if person.username == "ana" { expected.insert(anas.id, at: 0) }
                #expect(try await home(api, person) == expected, "\(person.username)")
            }
            // Paged one by one across the timeline and the pulled account.
            let walked = try await api.walk("/feed/home?limit=1", as: ana, of: Post.self).map(\.id)
            #expect(walked == [anas.id, after.id, before.id])
            // An unfollow takes both out, the entered and the pulled.
            #expect(try await api.call(.delete, "/users/bob/follow", as: ana).status == .ok)
            #expect(try await home(api, ana) == [anas.id])
            // A new follower of a pulled account is pulled too: nothing is entered for them.
            try await api.follow(ana, "bob")
            #expect(try await entries(api, of: ana) == 1)
            #expect(try await home(api, ana) == [anas.id, after.id, before.id])
        }
    }

    /// Follows, unfollows, posts and deletes at once, through two app servers on PostgreSQL:
    /// the row locks these writes take must keep every timeline equal to what the follows say
    /// (a post made while its reader follows is never missed, nor left after an unfollow).
    @Test func timelinesStayRightWhenFollowsAndPostsRace() async throws {
        try await ConcurrencyTests.withTwoServers { first, second in
            let bob = try await first.register("bob")
            var readers: [Account] = []
            for i in 0..<6 { readers.append(try await second.register("reader\(i)")) }
            let early = try await first.textPost(bob, "early")
            let readerList = readers
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for i in 0..<12 {
                        let post = try await first.textPost(bob, "post \(i)")
                        if i % 4 == 0 {
                            #expect(try await first.call(.delete, "/posts/\(post.id)", as: bob).status == .noContent)
                        }
                    }
                }
                for (i, reader) in readerList.enumerated() {
                    group.addTask {
                        // Even readers end following Bob, odd ones end not following him.
                        for round in 0..<4 {
                            try await second.follow(reader, "bob")
                            if round < 3 || i % 2 == 1 {
                                #expect(try await second.call(.delete, "/users/bob/follow", as: reader).status == .ok)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let bobs = try await first.walk("/users/bob/posts?limit=50", of: Post.self).map(\.id)
            #expect(bobs.count == 10 && bobs.last == early.id)
            for (i, reader) in readers.enumerated() {
                #expect(try await home(second, reader) == (i % 2 == 0 ? bobs : []), "\(reader.username)")
                #expect(try await entries(second, of: reader) == (i % 2 == 0 ? 10 : 0), "\(reader.username)")
            }
        }
    }

    /// Migration 9 fills the timelines from the follows and posts there are.
    @Test func migrationNineFillsTimelinesFromExistingFollows() async throws {
        try await withDatabase(before: 9) { db in
            try await db.write { conn in
                for (id, name) in [(1, "ana"), (2, "bob"), (3, "carol")] {
                    try await conn.exec(
                        """
                        INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, created_at)
                        VALUES (\(bind: id), \(bind: name), \(bind: name), \(bind: name + "@example.com"), \(bind: name + "@example.com"), 'x', \(bind: name), 0)
                        """)
                }
                try await conn.exec("INSERT INTO follows (follower_id, followee_id, created_at) VALUES (1, 2, 0)")
                for (id, author) in [(10, 1), (11, 2), (12, 3)] {
                    try await conn.exec(
                        "INSERT INTO posts (id, author_id, kind, body, created_at) VALUES (\(bind: id), \(bind: author), 'text', 'hi', \(bind: id))"
                    )
                }
            }
            #expect(
                try await Migrations.run(on: db, logger: Logger(label: "test"))
                    == Migrations.all.map(\.version).filter { $0 >= 9 })
            let rows = try await db.read { conn in
                try await conn.rows("SELECT user_id, post_id FROM home_entries ORDER BY user_id, post_id")
            }
            let pairs = try rows.map {
                [
                    try $0.decode(column: "user_id", as: Int64.self),
                    try $0.decode(column: "post_id", as: Int64.self),
                ]
            }
            #expect(pairs == [[1, 10], [1, 11], [2, 11], [3, 12]])
        }
    }

    /// A new post waits in `home_pending` until the fan-out's next batch; meanwhile every home
    /// and list feed that should show it reads it from there, and no other; the batch then
    /// enters it once in each timeline (the author's, each follower's), a batch bounded by the
    /// rows it writes, and the feeds stay the same; a post deleted while it waits leaves the queue. No service runs here, so the post
    /// waits for as long as the test needs.
    @Test func aWaitingPostIsReadFromTheQueueUntilItsBatchEntersIt() async throws {
        try await withDatabase { db, _ in
            let (ana, bob, cat, dan) = (Int64(1), Int64(2), Int64(3), Int64(4))
            try await db.write { conn in
                for (id, name) in [(ana, "ana"), (bob, "bob"), (cat, "cat"), (dan, "dan")] {
                    try await conn.exec(
                        """
                        INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, created_at)
                        VALUES (\(bind: id), \(bind: name), \(bind: name), \(bind: name + "@example.com"), \(bind: name + "@example.com"), 'x', \(bind: name), 0)
                        """)
                }
                // Ana and Dan follow Bob; Dan keeps him in an exclusive list, Ana in a plain one.
                for follower in [ana, dan] {
                    try await conn.exec(
                        "INSERT INTO follows (follower_id, followee_id, created_at) VALUES (\(bind: follower), \(bind: bob), 0)"
                    )
                }
                for (list, owner, exclusive) in [(Int64(70), ana, false), (Int64(71), dan, true)] {
                    try await conn.exec(
                        """
                        INSERT INTO lists (id, user_id, title, replies_policy, exclusive, created_at)
                        VALUES (\(bind: list), \(bind: owner), 'Bob', 'list', \(bind: exclusive), 0)
                        """)
                    try await conn.exec(
                        """
                        INSERT INTO list_accounts (list_id, account_id, user_id, exclusive)
                        VALUES (\(bind: list), \(bind: bob), \(bind: owner), \(bind: exclusive))
                        """)
                }
                for (post, time) in [(Int64(100), Int64(1_000)), (Int64(101), Int64(2_000))] {
                    try await conn.exec(
                        """
                        INSERT INTO posts (id, author_id, kind, body, created_at, audience)
                        VALUES (\(bind: post), \(bind: bob), 'text', 'hi', \(bind: time), 'public')
                        """)
                    try await HomeTimeline.queue(post: post, author: bob, createdAt: time, on: conn)
                }
            }
            let posts = PostStore(
                db: db, ids: IDGenerator(node: 1),
                events: EventLog(db: db, signal: EventSignal(), pushes: WorkSignal()),
                searchWindows: SearchWindowCache())
            func feed(_ source: PostStore.FeedQuery.Source, _ viewer: Int64) async throws -> [String] {
                try await posts.feed(.init(source: source, page: PageRequest(limit: 20)), viewer: viewer).items.map(
                    \.id)
            }
            func feeds() async throws -> [[String]] {
                [
                    try await feed(.home(ana), ana), try await feed(.home(bob), bob), try await feed(.home(cat), cat),
                    try await feed(.home(dan), dan), try await feed(.list(owner: ana, id: 70), ana),
                    try await feed(.list(owner: dan, id: 71), dan),
                ]
            }
            let expected = [["101", "100"], ["101", "100"], [], [], ["101", "100"], ["101", "100"]]
            #expect(try await feeds() == expected)
            #expect(try await Self.count(db, "SELECT COUNT(*) AS n FROM home_entries") == 0)
            // Bob has two followers, so each post is 3 rows: a batch of at most 4 rows takes one.
            #expect(try await db.write { try await HomeTimeline.enterPending(limit: 10, rows: 4, on: $0) } == 1)
            #expect(try await feeds() == expected, "half entered, half waiting")
            #expect(try await db.write { try await HomeTimeline.enterPending(limit: 10, on: $0) } == 1)
            #expect(try await db.write { try await HomeTimeline.enterPending(limit: 10, on: $0) } == 0)
            #expect(try await feeds() == expected, "all entered")
            #expect(
                try await Self.count(db, "SELECT COUNT(*) AS n FROM home_entries") == 6, "Bob's, Ana's and Dan's, twice"
            )
            #expect(try await Self.count(db, "SELECT COUNT(*) AS n FROM home_pending") == 0)
            // A post deleted while it waits goes from the queue with its row.
            try await db.write { conn in
                try await conn.exec(
                    "INSERT INTO posts (id, author_id, kind, body, created_at) VALUES (102, \(bind: bob), 'text', 'x', 3000)"
                )
                try await HomeTimeline.queue(post: 102, author: bob, createdAt: 3_000, on: conn)
            }
            #expect(try await feed(.home(ana), ana) == ["102", "101", "100"])
            try await db.write { conn in try await conn.exec("DELETE FROM posts WHERE id = 102") }
            #expect(try await Self.count(db, "SELECT COUNT(*) AS n FROM home_pending") == 0)
            #expect(try await feed(.home(ana), ana) == ["101", "100"])
        }
    }

    private static func count(_ db: Database, _ query: SQL) async throws -> Int {
        try await db.read { conn in try await conn.first(query)?.decode(column: "n", as: Int.self) ?? -1 }
    }

    private func home(_ api: TestAPI, _ account: Account) async throws -> [String] {
        try await api.page("/feed/home?limit=50", as: account, of: Post.self).items.map(\.id)
    }

    private func entries(_ api: TestAPI, of account: Account) async throws -> Int {
        try await count(api, "SELECT COUNT(*) AS n FROM home_entries WHERE user_id = \(bind: Int64(account.id)!)")
    }

    private func entries(_ api: TestAPI, post: String) async throws -> Int {
        try await count(api, "SELECT COUNT(*) AS n FROM home_entries WHERE post_id = \(bind: Int64(post)!)")
    }

    /// `query`'s count once every waiting post is entered (as `HomeFanOutService` does a moment later).
    private func count(_ api: TestAPI, _ query: SQL) async throws -> Int {
        try await api.withDatabase { db in
            _ = try await db.write { try await HomeTimeline.enterPending(limit: 10_000, on: $0) }
            return try await db.read { conn in try await conn.first(query)?.decode(column: "n", as: Int.self) ?? -1 }
        }
    }
}
