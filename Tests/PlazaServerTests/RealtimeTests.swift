import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Realtime stream")
struct RealtimeTests {
    @Test func followersGetPostsLiveAndNobodyElseDoes() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben, eve, zed) = try await api.register("ana", "ben", "eve", "zed")
            try await api.follow(ben, "ana")
            // Zed's posts reach Ben and Eve: his last one marks the end of what they may hear.
            try await api.follow(ben, "zed")
            try await api.follow(eve, "zed")
            let bens = try await EventStreamClient.connect(port: port, token: ben.token)
            let eves = try await EventStreamClient.connect(port: port, token: eve.token)
            let anas = try await EventStreamClient.connect(port: port, token: ana.token)
            defer { for client in [bens, eves, anas] { client.close() } }
            #expect(bens.status == 200)
            #expect(await bens.waitFor(1).map(\.event) == ["ready"])
            #expect(await eves.waitFor(1).map(\.event) == ["ready"])
            #expect(await anas.waitFor(1).map(\.event) == ["ready"])
            // MUT
            let post = try await api.textPost(ana, "Live!")
            // An event shows the post as it is when sent: the edit waits until the first one is out.
            _ = await bens.waitFor(2)
            _ = try await api.call(.patch, "/posts/\(post.id)", as: ana, raw: #"{"body":"Live, edited"}"#)
            _ = try await api.call(
                .post, "/posts/\(post.id)/comments", as: ben, json: CreateCommentRequest(body: "Wow"))
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: ben)
            // Events about a post are sent while it exists: the deletion waits until they are out.
            _ = await anas.waitFor(7)
            _ = await bens.waitFor(3)
            _ = try await api.call(.delete, "/posts/\(post.id)", as: ana)
            // validate
            let received = await bens.waitFor(4).dropFirst()
            #expect(received.map(\.event) == ["post.created", "post.updated", "post.deleted"])
            #expect(try received.first?.decode(Post.self).body == "Live!")
            #expect(try received.dropFirst().first?.decode(Post.self).body == "Live, edited")
            #expect(try received.last?.decode(DeletedPost.self) == DeletedPost(id: post.id))
            let ids = received.compactMap { $0.id.flatMap(Int64.init) }
            #expect(ids.count == 3 && ids == ids.sorted(), "each event carries an increasing id")
            let mine = await anas.waitFor(8).dropFirst()  // ready, then the seven below
            #expect(
                mine.map(\.event) == [
                    "post.created", "post.updated", "notification", "comment.created", "notification", "like.changed",
                    "post.deleted",
                ])
            #expect(
                try mine.first(where: { $0.event == "like.changed" })?.decode(LikeChange.self)
                    == LikeChange(postId: post.id, userId: ben.id, liked: true, likes: 1))
            #expect(try mine.first(where: { $0.event == "comment.created" })?.decode(Comment.self).body == "Wow")
            // Events arrive in log order, so whatever else they were sent comes before the sentinel.
            let sentinel = try await api.textPost(zed, "sentinel")
            let evesAll = await eves.waitFor(2)
            #expect(evesAll.map(\.event) == ["ready", "post.created"], "a stranger hears nothing")
            #expect(try evesAll.last?.decode(Post.self).id == sentinel.id)
            let bensAll = await bens.waitFor(5)
            #expect(try bensAll.count == 5 && bensAll.last?.decode(Post.self).id == sentinel.id, "no more than that")
        }
    }

    @Test func reconnectingReplaysWhatWasMissedExactlyOnceInOrder() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            try await api.follow(ben, "ana")
            let first = try await EventStreamClient.connect(port: port, token: ben.token)
            let ready = try #require(await first.waitFor(1).first)
            _ = try await api.textPost(ana, "seen live")
            let live = try #require(await first.waitFor(2).last)
            first.close()
            // MUT: five posts while Ben is away, then he reconnects from the last id he saw.
            var missed: [String] = []
            for i in 0..<5 { missed.append(try await api.textPost(ana, "missed \(i)").id) }
            let second = try await EventStreamClient.connect(port: port, token: ben.token, lastEventID: live.id)
            defer { second.close() }
            let replayed = await second.waitFor(6)
            #expect(replayed.map(\.event) == Array(repeating: "post.created", count: 5) + ["ready"])
            #expect(try replayed.prefix(5).map { try $0.decode(Post.self).id } == missed)
            #expect(try replayed.last?.decode(StreamReady.self) == StreamReady(replayed: 5))
            let after = try await api.textPost(ana, "live again")
            let all = await second.waitFor(7)
            #expect(try all.last?.decode(Post.self).id == after.id)
            // Events arrive in log order: a duplicate would come before the next post.
            let sentinel = try await api.textPost(ana, "sentinel")
            let withSentinel = await second.waitFor(8)
            #expect(
                try withSentinel.count == 8 && withSentinel.last?.decode(Post.self).id == sentinel.id, "nothing twice")
            // Resuming from the very first id replays everything since, once.
            let third = try await EventStreamClient.connect(port: port, token: ben.token, lastEventID: ready.id)
            defer { third.close() }
            #expect(await third.waitFor(9).map(\.event) == Array(repeating: "post.created", count: 8) + ["ready"])
            // A resume point from the future (another database) is a reset.
            let fourth = try await EventStreamClient.connect(port: port, token: ben.token, lastEventID: "999999999")
            defer { fourth.close() }
            #expect(await fourth.waitFor(2).map(\.event) == ["reset", "ready"])
        }
    }

    @Test func blocksAndSpacesDecideWhoHearsAPost() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            for member in [ana, ben, cat] {
                if member.username == "ana" {
                    #expect(
                        try await api.call(
                            .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "cs101", name: "CS 101")
                        ).status == .created)
                } else {
                    #expect(try await api.call(.put, "/spaces/cs101/membership", as: member).status == .ok)
                }
            }
            _ = try await api.call(.put, "/users/ana/block", as: cat)
            let dan = try await api.register("dan")
            try await api.follow(cat, "dan")  // Dan's post marks the end of what Cat may hear
            let bens = try await EventStreamClient.connect(port: port, token: ben.token)
            let cats = try await EventStreamClient.connect(port: port, token: cat.token)
            defer {
                bens.close()
                cats.close()
            }
            _ = await bens.waitFor(1)
            _ = await cats.waitFor(1)
            let post = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "Question for the course", spaces: ["cs101"]))
            #expect(
                try await bens.waitFor(2).last?.decode(Post.self).id == post.id, "a member hears of a post in the space"
            )
            let sentinel = try await api.textPost(dan, "sentinel")
            let catsAll = await cats.waitFor(2)
            #expect(catsAll.map(\.event) == ["ready", "post.created"], "a member who blocked the author does not")
            #expect(try catsAll.last?.decode(Post.self).id == sentinel.id)
            // A block made after the event hides it on replay too.
            let beforeBlock = try #require(bens.events.first?.id)
            _ = try await api.call(.put, "/users/ana/block", as: ben)
            let replay = try await EventStreamClient.connect(port: port, token: ben.token, lastEventID: beforeBlock)
            defer { replay.close() }
            #expect(await replay.waitFor(1).map(\.event) == ["ready"])
        }
    }

    @Test func streamsNeedAnAccountAreCappedAndEndWhenTheSessionDoes() async throws {
        try await withLiveApp({
            $0.streams.perUser = 2
            $0.streams.heartbeatSeconds = 1
        }) { api, port async throws in
            let ana = try await api.register("ana")
            #expect(try await EventStreamClient.connect(port: port, token: nil).status == 401)
            #expect(try await EventStreamClient.connect(port: port, token: ana.token, lastEventID: "abc").status == 400)
            let one = try await EventStreamClient.connect(port: port, token: ana.token)
            let two = try await EventStreamClient.connect(port: port, token: ana.token)
            defer {
                one.close()
                two.close()
            }
            _ = await one.waitFor(1)
            _ = await two.waitFor(1)
            let three = try await EventStreamClient.connect(port: port, token: ana.token)
            #expect(three.status == 429)
            #expect(await one.waitForHeartbeat(), "heartbeat comments keep the stream alive")
            // MUT: signing out ends the session's streams at the next heartbeat.
            #expect(try await api.call(.post, "/auth/logout", as: ana).status == .noContent)
            #expect(await one.waitForEnd())
            #expect(await two.waitForEnd())
        }
    }

    /// A closed tab gives its place back at once, not at the next heartbeat or event: browsing
    /// page to page opens a stream per page.
    @Test func aClosedConnectionFreesItsStreamAtOnce() async throws {
        try await withLiveApp({
            $0.streams.perUser = 2
            $0.streams.heartbeatSeconds = 300
        }) { api, port async throws in
            let ana = try await api.register("ana")
            let one = try await EventStreamClient.connect(port: port, token: ana.token)
            let two = try await EventStreamClient.connect(port: port, token: ana.token)
            defer { one.close() }
            _ = await one.waitFor(1)
            _ = await two.waitFor(1)
            #expect(try await EventStreamClient.connect(port: port, token: ana.token).status == 429)
            two.close()
            var status = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let next = try await EventStreamClient.connect(port: port, token: ana.token)
                status = next.status
                next.close()
                if status == 200 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(status == 200, "the closed stream's place is free well before the 300 s heartbeat")
        }
    }

    /// The hub on its own: a subscriber that reads nothing is cut off after `buffer` events,
    /// and one that reads keeps going.
    @Test func aSlowConsumerIsClosedNotBuffered() async throws {
        try await withDatabase { db, config in
            var config = config
            config.streams.buffer = 16
            config.streams.heartbeatSeconds = 300
            let services = try AppServices(config: config, db: db)
            let hub = services.eventHub(config: config, logger: Logger(label: "test"))
            let author = try await services.accounts.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await hub.run() }
                hub.open()
                while !hub.isLive { try await Task.sleep(for: .milliseconds(10)) }
                let slow = try await hub.subscribe(person: author, session: 1)
                let fast = try await hub.subscribe(person: author, session: 2)
                var deliveries = fast.deliveries.makeAsyncIterator()
                var fastCount = 0
                for i in 0..<40 {
                    _ = try await services.posts.create(author: author, .init(kind: .text, body: "post \(i)"))
                    // The fast reader takes each event as it comes.
                    while let delivery = await deliveries.next() {
                        if case .event = delivery {
                            fastCount += 1
                            break
                        }
                    }
                }
                #expect(fastCount == 40)
                var slowCount = 0
                for await _ in slow.deliveries { slowCount += 1 }
                #expect(slowCount == 16, "the slow stream ended after its buffer instead of growing")
                #expect(hub.openStreams == 1, "only the reader that keeps up is left")
                fast.close()
                #expect(hub.openStreams == 0)
                group.cancelAll()
            }
        }
    }

    /// On PostgreSQL transactions append events concurrently, so seq 2 may commit while seq 1 is
    /// still being written. A reader must not read past 1 until it commits, or the hub would move
    /// on and never send it: finding the head waits for the appender in flight, and then the
    /// read gets both, in order.
    @Test(.enabled(if: TestDatabase.postgresURL != nil))
    func aReaderNeverReadsPastAnEventStillBeingWritten() async throws {
        try await withDatabase { db, config in
            let services = try AppServices(config: config, db: db)
            let ana = try await services.accounts.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let start = try await services.eventFeed.bounds().head
            let (appended, didAppend) = AsyncStream.makeStream(of: Void.self)
            let (gate, openGate) = AsyncStream.makeStream(of: Void.self)
            @Sendable func event(post: Int64) -> EventLog.Event { .init(kind: .postDeleted, actor: ana, post: post) }
            // The first appender holds its transaction open after appending (outside `EventLog.write`
            // an event is appended at once).
            let first = Task {
                try await db.write { conn in
                    try await EventLog.append(event(post: 1), to: .users([ana]), on: conn)
                    didAppend.yield()
                    for await _ in gate { break }
                }
            }
            for await _ in appended { break }
            try await services.events.write { conn in
                try await EventLog.append(event(post: 2), to: .users([ana]), on: conn)
            }
            let reader = Task { try await services.eventFeed.bounds().head }
            var looks = 0
            while try await db.read({ conn in
                try await conn.first(
                    """
                    SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """)?.decode(column: "n", as: Int.self)
            }) == 0 {
                looks += 1
                try #require(looks < 20_000, "the head reader never queued for the append lock")
                try await Task.sleep(for: .milliseconds(1))
            }
            openGate.yield()
            try await first.value
            let head = try await reader.value
            let (entries, _) = try await services.eventFeed.entries(after: start, through: head)
            #expect(entries.map(\.post) == [1, 2])
        }
    }

    /// A new post writes no inbox row per reader: its readers (its author, their followers, the
    /// members of its spaces) are found when the log is read, as they are then. Each reader's
    /// read of the log has it once, a stranger's does not, and a follow made since counts.
    @Test func aNewPostsReadersAreFoundWhenTheLogIsRead() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat, dan, eve) = try await api.register("ana", "ben", "cat", "dan", "eve")
            #expect(
                try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "cs101", name: "CS 101"))
                    .status == .created)
            #expect(try await api.call(.put, "/spaces/cs101/membership", as: cat).status == .ok)
            try await api.follow(ben, "ana")
            try await api.follow(cat, "ana")  // a follower and a member: told once
            let post = try await api.post(ana, CreatePostRequest(kind: .text, body: "Hello", spaces: ["cs101"]))
            try await api.follow(dan, "ana")  // after the post, before the log is read
            let (inboxRows, readers) = try await api.withDatabase { db in
                let services = try AppServices(config: api.config, db: db)
                let inbox = try await db.read { conn in
                    try await conn.first(
                        """
                        SELECT count(*) AS n FROM event_inbox i JOIN events e ON e.seq = i.seq
                        WHERE e.kind = 'post.created'
                        """)?.decode(column: "n", as: Int.self)
                }
                let head = try await services.eventFeed.bounds().head
                var readers: [String: [String]] = [:]
                for person in [ana, ben, cat, dan, eve] {
                    let (entries, through) = try await services.eventFeed.entries(
                        after: 0, through: head, recipient: Int64(person.id)!)
                    #expect(through == head)
                    readers[person.username] = entries.filter { $0.kind == .postCreated }.compactMap {
                        $0.post.map(String.init)
                    }
                }
                let (all, _) = try await services.eventFeed.entries(after: 0, through: head)
                #expect(
                    Set(all.filter { $0.kind == .postCreated }.map(\.recipient))
                        == Set([ana, ben, cat, dan].map { Int64($0.id)! }), "the hub's read: everyone's, each once")
                #expect(all.filter { $0.kind == .postCreated }.count == 4)
                return (inbox, readers)
            }
            #expect(inboxRows == 0)
            #expect(readers == ["ana": [post.id], "ben": [post.id], "cat": [post.id], "dan": [post.id], "eve": []])
        }
    }

    @Test func retentionDropsOldEventsAndOldResumePointsReset() async throws {
        try await withLiveApp { api, port async throws in
            let ana = try await api.register("ana")
            let first = try await EventStreamClient.connect(port: port, token: ana.token)
            let ready = try #require(await first.waitFor(1).first?.id)
            first.close()
            _ = try await api.textPost(ana, "old news")
            let pruned = try await api.withDatabase { db in
                let services = try AppServices(config: api.config, db: db)
                return try await services.eventFeed.prune(before: Timestamp.now.milliseconds + 1)
            }
            #expect(pruned == 1)
            let late = try await EventStreamClient.connect(port: port, token: ana.token, lastEventID: ready)
            defer { late.close() }
            #expect(await late.waitFor(2).map(\.event) == ["reset", "ready"])
        }
    }
}
