import Foundation
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

/// Offline first (step 24): writes made without a network wait on disk and land exactly once,
/// in order, across an app restart and connections lost before and after the server answered;
/// the app shows them at once and learns what became of them; cached pages revalidate with a
/// 304. Against the real binary, behind a loopback proxy that drops connections.
@Suite("PlazaKit offline")
struct OfflineTests {
    /// A queue folder of its own.
    static func queueDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("plazakit-queue-\(UUID().uuidString)")
    }

    /// The events of `queue` gathered until `count` have come.
    static func collect(_ queue: WriteQueue) async -> EventLog {
        let log = EventLog()
        let stream = await queue.events()
        Task {
            for await event in stream { await log.add(event) }
        }
        return log
    }

    @Test func writesMadeOfflineLandOnceInOrderAcrossARestart() async throws {
        try await withServer { server in
            let proxy = try FlakyProxy(serverPort: { server.port })
            defer { proxy.close() }
            let bob = try await signedUp("bob", on: server)
            let ana = PlazaClient(baseURL: proxy.url, transport: URLSessionTransport())
            let me = try await ana.register(
                username: "ana", email: "ana@example.com", password: "correct horse battery")
            guard case .signedIn(let anaMe) = me else { throw TestFailure("not signed in") }
            let ramen = try await bob.createPost(CreatePostRequest(kind: .text, body: "ramen"))
            _ = try await ana.follow("bob")
            let directory = Self.queueDirectory()
            let photo = directory.deletingLastPathComponent().appendingPathComponent("\(UUID().uuidString).png")
            try png(width: 8, height: 8).write(to: photo)

            // On the plane: the server cannot be reached.
            server.stop()
            let home = FeedPager(client: ana, source: .home)
            let waiting = try await Self.madeOnThePlane(
                by: anaMe, client: ana, directory: directory, ramen: ramen, photo: photo, home: home)

            // The app is killed and opened again: the queue is read back from disk, in order.
            let queue = try WriteQueue(client: ana, directory: directory, owner: anaMe.user.id)
            #expect(await queue.pending.map(\.id) == waiting.map(\.id))
            let log = await Self.collect(queue)

            // Back on the ground, on a network that loses answers: the server does the like and
            // the first comment, and the phone never hears it; the upload never reaches it once.
            try await server.start()
            let lost = LostOnce()
            proxy.setFate { method, path in
                if method == "POST", path == "/api/v1/me/media", lost.first("upload") { return .dropBeforeServer }
                if method == "PUT", path.hasSuffix("/like"), lost.first("like") { return .dropAfterServer }
                if method == "POST", path.hasSuffix("/\(ramen.id)/comments"), lost.first("comment") {
                    return .dropAfterServer
                }
                return .pass
            }
            var rounds = 0
            while await queue.sync().finished == false {
                rounds += 1
                #expect(rounds < 10, "the queue should drain once the network holds")
                if rounds >= 10 { break }
            }
            #expect(rounds == 3)
            #expect(await queue.pending.isEmpty)
            // The like and the comment were sent twice and done once: their second answers were replays.
            let replays = proxy.seen.filter(\.replayed).map { "\($0.method) \($0.path)" }
            #expect(replays == ["PUT /api/v1/posts/\(ramen.id)/like", "POST /api/v1/posts/\(ramen.id)/comments"])

            // The server has each write once.
            let ramenNow = try await bob.post(ramen.id)
            #expect(ramenNow.counts.likes == 1 && ramenNow.counts.comments == 1)
            let anaPosts = try await bob.feed(.user("ana")).items
            #expect(anaPosts.count == 1 && anaPosts.first?.media.count == 1 && anaPosts.first?.body == "from the plane")
            let made = try #require(anaPosts.first)
            let post = try #require(waiting.first { if case .createPost = $0.intent { true } else { false } })
            #expect(await queue.landedID(of: post.reference) == made.id)
            #expect(try await bob.comments(on: made.id).items.map(\.body) == ["first!"])
            #expect(try await ana.user("bob").viewer?.following == true)

            // The app learnt each outcome, in order, and reconciles its feed with them.
            // Three waits (one a round) and seven landings.
            let events = await log.events(count: 10)
            let sent = events.compactMap { event -> String? in
                if case .sent(let write, _) = event { return write.id }
                return nil
            }
            #expect(sent == waiting.map(\.id))
            for event in events { await home.apply(event) }
            let reconciled = await home.displayed(with: queue, author: anaMe.user.summary)
            #expect(reconciled.first?.id == made.id && !reconciled.contains { $0.id.hasPrefix("pending:") })
            #expect(reconciled.first?.counts.comments == 1)
            try? FileManager.default.removeItem(at: photo)
        }
    }

    /// The writes of the first test, made offline by a queue that is then closed (the app killed).
    static func madeOnThePlane(
        by me: Me, client: PlazaClient, directory: URL, ramen: Post, photo: URL, home: FeedPager
    ) async throws -> [PendingWrite] {
        let queue = try WriteQueue(client: client, directory: directory, owner: me.user.id)
        let post = try await queue.enqueuePost(
            CreatePostRequest(kind: .photo, body: "from the plane"), files: [(photo, "image/png")])
        try await queue.enqueue(.like(postID: ramen.id))
        try await queue.enqueue(.comment(postID: ramen.id, body: "so good"))
        try await queue.enqueue(.comment(postID: post.reference, body: "first!"))
        try await queue.enqueue(.unfollow(username: "bob"))
        try await queue.enqueue(.follow(username: "bob"))
        #expect(await queue.sync().finished == false)
        let waiting = await queue.pending
        #expect(waiting.count == 7 && waiting[0].attempts == 1 && waiting[0].lastError != nil)

        // What the app shows at once: the post on top of home, the like and the comment counted.
        let shown = await home.displayed(with: queue, author: me.user.summary)
        #expect(shown.first?.id == post.reference && shown.first?.body == "from the plane")
        #expect(await queue.files(of: post).count == 1)
        let ramenShown = await queue.applyPending(to: ramen)
        #expect(ramenShown.viewer.liked && ramenShown.counts.likes == 1 && ramenShown.counts.comments == 1)
        let pendingComments = await queue.pendingComments(on: post.reference, author: me.user.summary)
        #expect(pendingComments.map(\.body) == ["first!"])
        return waiting
    }

    @Test func aRefusedWriteIsDroppedWithItsReasonAndWhatDependsOnIt() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let me = try await ana.me().user.summary
            let queue = try WriteQueue(client: ana, directory: Self.queueDirectory(), owner: me.id)
            let log = await Self.collect(queue)
            let tooLong = try await queue.enqueuePost(
                CreatePostRequest(kind: .text, body: String(repeating: "a", count: 100_000)))
            let onIt = try await queue.enqueue(.comment(postID: tooLong.reference, body: "hi"))
            let missing = try await queue.enqueue(.like(postID: "123456789"))
            let cancelled = try await queue.enqueue(.comment(postID: "123456789", body: "never sent"))
            let kept = try await queue.enqueuePost(CreatePostRequest(kind: .text, body: "this one lands"))
            #expect(try await queue.cancel(cancelled.id))
            #expect(try await queue.cancel(cancelled.id) == false)
            #expect(await FeedPager(client: ana, source: .home).displayed(with: queue, author: me).count == 2)

            #expect(await queue.sync().finished)
            let events = await log.events(count: 10)
            var refusals: [String: String] = [:]
            for case .refused(let write, let error) in events { refusals[write.id] = "\(error.status) \(error.code)" }
            #expect(refusals[tooLong.id]?.hasPrefix("4") == true)
            #expect(refusals[onIt.id] == "422 depends_on_refused")
            #expect(refusals[missing.id] == "404 not_found")
            #expect(refusals[cancelled.id] == nil && refusals[kept.id] == nil)
            #expect(events.contains { if case .cancelled(let write) = $0 { write.id == cancelled.id } else { false } })
            // The refused post's optimistic copy went with it; the one that landed is on the server.
            #expect(await FeedPager(client: ana, source: .home).displayed(with: queue, author: me).isEmpty)
            #expect(try await ana.feed(.user("ana")).items.map(\.body) == ["this one lands"])
        }
    }

    @Test func cachedPagesRevalidateWithA304() async throws {
        try await withServer { server in
            let proxy = try FlakyProxy(serverPort: { server.port })
            defer { proxy.close() }
            let bob = try await signedUp("bob", on: server)
            let ana = PlazaClient(baseURL: proxy.url, transport: URLSessionTransport())
            _ = try await ana.register(username: "ana", email: "ana@example.com", password: "correct horse battery")
            _ = try await ana.follow("bob")
            for n in 1...3 { _ = try await bob.createPost(CreatePostRequest(kind: .text, body: "post \(n)")) }
            let cache = Self.queueDirectory()
            let feed = FeedPager(client: ana, source: .home, pageSize: 2, cacheDirectory: cache)
            try await feed.reload()
            _ = try await feed.loadMore()
            #expect(try await feed.revalidate() == false)
            #expect(proxy.seen.last?.status == 304)

            // Opened again on launch: the cached page and its tag, still current.
            let reopened = FeedPager(client: ana, source: .home, pageSize: 2, cacheDirectory: cache)
            #expect(await reopened.restore().count == 3)
            #expect(try await reopened.revalidate() == false)

            // A new post and a like: the page changed, the new post comes on top, counts update.
            let fresh = try await bob.createPost(CreatePostRequest(kind: .text, body: "post 4"))
            let older = await reopened.posts[0]
            _ = try await bob.like(older.id)
            #expect(try await reopened.revalidate())
            #expect(proxy.seen.last?.status == 200)
            let posts = await reopened.posts
            #expect(posts.map(\.body) == ["post 4", "post 3", "post 2", "post 1"])
            #expect(posts.first?.id == fresh.id && posts[1].counts.likes == 1)
            // A thread revalidates its post the same way.
            let thread = CommentThread(client: ana, postID: older.id, cacheDirectory: cache)
            try await thread.reload()
            #expect(try await thread.revalidate() == false && proxy.seen.last?.status == 304)
            _ = try await bob.comment(on: older.id, "new comment")
            #expect(try await thread.revalidate())
            #expect(await thread.post?.counts.comments == 1)
            #expect(await thread.comments.map(\.body) == ["new comment"])
            // A deleted post leaves on revalidation.
            try await bob.deletePost(fresh.id)
            #expect(try await reopened.revalidate())
            #expect(await reopened.posts.map(\.body) == ["post 3", "post 2", "post 1"])
        }
    }
}

extension OfflineTests {
    /// A queue is one account's, in one folder, opened by one queue at a time; it sends nothing
    /// while someone else is signed in; files no write names are swept; a write once sent cannot
    /// be cancelled (it may have reached the server).
    @Test func aQueueIsItsAccountsAlone() async throws {
        try await withServer { server in
            let proxy = try FlakyProxy(serverPort: { server.port })
            defer { proxy.close() }
            let bob = try await signedUp("bob", on: server)
            let bobID = try await bob.me().user.id
            let ana = PlazaClient(baseURL: proxy.url, transport: URLSessionTransport())
            _ = try await ana.register(username: "ana", email: "ana@example.com", password: "correct horse battery")
            let anaID = try await ana.me().user.id
            let directory = Self.queueDirectory()
            do {
                let open = try WriteQueue(client: ana, directory: directory, owner: anaID)
                #expect(throws: WriteQueue.OpenError.inUse) {
                    try WriteQueue(client: ana, directory: directory, owner: anaID)
                }
                try await open.enqueue(.follow(username: "bob"))
            }
            #expect(throws: WriteQueue.OpenError.anotherAccount(owner: anaID)) {
                try WriteQueue(client: bob, directory: directory, owner: bobID)
            }
            for stray in ["upload-stray", "body-stray"] {
                try Data("x".utf8).write(to: directory.appendingPathComponent(stray))
            }
            // Bob signed in on the device: Ana's writes wait.
            let elsewhere = try WriteQueue(client: bob, directory: Self.queueDirectory(), owner: anaID)
            try await elsewhere.enqueue(.follow(username: "ana"))
            let result = await elsewhere.sync()
            let stillPending = await elsewhere.pending
            #expect(!result.finished && stillPending.count == 1)
            #expect(await elsewhere.pending.first?.lastError?.contains("@bob") == true)
            #expect(try await bob.user("ana").viewer?.following == false)

            let queue = try WriteQueue(client: ana, directory: directory, owner: anaID)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(!names.contains("upload-stray") && !names.contains("body-stray"))
            // Sent once and lost on the way: it cannot be cancelled any more, and lands on the next sync.
            proxy.setFate { method, path in method == "PUT" && path.hasSuffix("/follow") ? .dropAfterServer : .pass }
            #expect(await queue.sync().finished == false)
            let sent = try #require(await queue.pending.first)
            #expect(try await queue.cancel(sent.id) == false)
            proxy.setFate { _, _ in .pass }
            #expect(await queue.sync().finished)
            #expect(try await ana.user("bob").viewer?.following == true)
        }
    }
}

/// Writes' events as they come.
actor EventLog {
    private var received: [WriteEvent] = []

    func add(_ event: WriteEvent) {
        if case .progress = event { return }
        received.append(event)
    }

    /// The events (not counting upload progress) once `count` have come. A hang guard counted in
    /// looks, not time: a lost event fails the test instead of hanging the suite.
    func events(count: Int) async -> [WriteEvent] {
        for _ in 0..<6_000 where received.count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect(received.count >= count, "only \(received.count) of \(count) events came")
        return received
    }
}

/// Says yes the first time it is asked about each name.
final class LostOnce: @unchecked Sendable {
    // @unchecked: `asked` is guarded by `lock`.
    private let lock = NSLock()
    private var asked: Set<String> = []
    func first(_ name: String) -> Bool { lock.withLock { asked.insert(name).inserted } }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
