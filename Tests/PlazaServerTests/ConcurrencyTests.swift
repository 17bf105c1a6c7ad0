import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Many people writing on the same few posts at once: comments, likes, boosts, follows (of
/// people and of the posts' tag) and new posts, through several connections and, on PostgreSQL,
/// two app servers on one database. Every
/// answer is a success (nothing here is invalid), and the counts kept on write add up.
@Suite("Concurrent writers on shared rows")
struct ConcurrencyTests {
    static let people = 16
    static let actionsEach = 24

    /// Also on PostgreSQL, no write deadlocks or meets a serialization failure: every
    /// transaction takes its locks in the one order (`PeopleStore.lockInOrder`), so none is
    /// retried. (Retries would hide a lock-order mistake from the status codes: a follow each way
    /// between two people deadlocked until follows locked both people in id order.)
    @Test func manyPeopleWritingOnSharedPostsGetNoServerErrors() async throws {
        try await Self.withTwoServers(Self.run)
    }

    /// Runs `body` with two app servers on one PostgreSQL database (on SQLite, which has one
    /// writer per file, with one server twice), then fails if any write was retried.
    static func withTwoServers(_ body: @Sendable (TestAPI, TestAPI) async throws -> Void) async throws {
        let config = try await TestDatabase.config {
            $0.postgresPoolSize = 8
            $0.logLevel = .debug
        }
        let log = ServerLog()
        let logger = Logger(label: "test") { _ in log }
        let one = try await buildApplication(config: config, logger: logger)
        var second = config
        second.nodeID = 2  // each app server has its own node id, or their ids collide
        let two = config.databaseURL == nil ? nil : try await buildApplication(config: second, logger: logger)
        try await one.test(.router) { first in
            if let two {
                try await two.test(.router) { second in
                    try await body(TestAPI(client: first, config: config), TestAPI(client: second, config: config))
                }
            } else {
                try await body(TestAPI(client: first, config: config), TestAPI(client: first, config: config))
            }
        }
        #expect(log.retries.isEmpty, "writes retried after a conflict: \(log.retries.prefix(5))")
        #expect(log.errors.isEmpty, "errors logged: \(log.errors.prefix(5))")
        TestDatabase.dispose(config)
    }

    /// Boosts, likes and comments of posts their authors delete meanwhile, through two app servers
    /// on PostgreSQL, with both servers' workers entering the boosts: no server errors (a write
    /// that found the post readable keeps it until it commits), no retried writes, and
    /// once the queues are entered no timeline keeps an entry of a deleted post (a batch that
    /// entered a boost while its post went left one behind until it locked the post's author).
    @Test func writesOnPostsBeingDeletedGetNoServerErrors() async throws {
        try await Self.withTwoServers { a, b in
            // Two authors, six boosters, and two readers who follow the boosters alone.
            var accounts: [Account] = []
            for i in 0..<10 { accounts.append(try await a.register("booster\(i)")) }
            let (authors, boosters) = (Array(accounts[0..<2]), Array(accounts[2..<8]))
            for reader in accounts[8...] {
                for booster in boosters { try await a.follow(reader, booster.username) }
            }
            var made: [(Account, String)] = []
            for n in 0..<8 { made.append((authors[n % 2], try await a.textPost(authors[n % 2], "soon gone \(n)").id)) }
            let posts = made
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for (i, account) in boosters.enumerated() {
                    let api = i % 2 == 0 ? a : b
                    group.addTask {
                        var codes: [Int] = []
                        for (_, post) in posts {
                            codes.append(try await api.call(.put, "/posts/\(post)/boost", as: account).status.code)
                            codes.append(try await api.call(.put, "/posts/\(post)/like", as: account).status.code)
                            let comment = CreateCommentRequest(body: "going?")
                            codes.append(
                                try await api.call(.post, "/posts/\(post)/comments", as: account, json: comment).status
                                    .code)
                        }
                        return codes
                    }
                }
                group.addTask {
                    var codes: [Int] = []
                    for (n, (author, post)) in posts.enumerated() {
                        let api = n % 2 == 0 ? b : a
                        codes.append(try await api.call(.delete, "/posts/\(post)", as: author).status.code)
                    }
                    return codes
                }
                var all: [Int] = []
                for try await codes in group { all += codes }
                return all
            }
            // A boost, like or comment of a post already deleted is a 404; nothing else fails.
            #expect(statuses.allSatisfy { (200..<300).contains($0) || $0 == 404 }, "\(statuses)")
            let left = try await a.withDatabase { db in
                while try await db.write({ try await HomeTimeline.enterPendingBoosts(limit: 100, on: $0) }) > 0 {}
                return try await db.read { c in
                    try await c.first(
                        "SELECT COUNT(*) AS n FROM home_entries h WHERE NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = h.post_id)"
                    )?.decode(column: "n", as: Int.self)
                }
            }
            #expect(left == 0)
        }
    }

    /// Follow requests under load: people ask to follow, withdraw, and are approved or denied
    /// while their targets lock and unlock (which accepts what is pending), through two app
    /// servers on PostgreSQL. No server errors, no retried writes; once everyone is unlocked no
    /// request is left, and the kept counts match the lists.
    @Test func followRequestsLocksAndUnlocksAtOnceGetNoServerErrors() async throws {
        try await Self.withTwoServers(Self.runRequests)
    }

    static func runRequests(_ a: TestAPI, _ b: TestAPI) async throws {
        var accounts: [Account] = []
        for i in 0..<12 { accounts.append(try await a.register("asker\(i)")) }
        let names = accounts.map(\.username)
        // The first four are the ones asked; three start locked.
        for target in accounts[0..<3] {
            #expect(try await a.call(.patch, "/me", as: target, json: UpdateMeRequest(locked: true)).status == .ok)
        }
        let results = try await withThrowingTaskGroup(of: [(String, Int)].self) { group in
            for (i, account) in accounts.enumerated() {
                let api = i % 2 == 0 ? a : b
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(100 + i))
                    var answers: [(String, Int)] = []
                    for _ in 0..<20 {
                        let other = names[Int.random(in: 0..<(i < 4 ? names.count : 4), using: &random)]
                        guard other != account.username else { continue }
                        let what: String
                        let response: TestResponse
                        switch Int.random(in: 0..<13, using: &random) {
                        case 0..<5:
                            what = "follow"
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/users/\(other)/follow", as: account)
                        case 5..<8:
                            what = "answer"
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/me/follow-requests/\(other)",
                                as: account)
                        default:
                            what = "lock"
                            response = try await api.call(
                                .patch, "/me", as: account, json: UpdateMeRequest(locked: Bool.random(using: &random)))
                        }
                        answers.append((what, response.status.code))
                    }
                    return answers
                }
            }
            var all: [(String, Int)] = []
            for try await answers in group { all += answers }
            return all
        }
        // An answer to a request that is not (or no longer) there is a 404; nothing else fails.
        let failures = results.filter { !(200..<300).contains($0.1) && !($0.0 == "answer" && $0.1 == 404) }
        #expect(failures.isEmpty, "\(failures.count) of \(results.count) writes failed: \(failures.prefix(20))")
        for account in accounts {
            #expect(try await a.call(.patch, "/me", as: account, json: UpdateMeRequest(locked: false)).status == .ok)
        }
        for account in accounts {
            let left = try await a.page("/me/follow-requests", as: account, of: JoinRequest.self)
            #expect(
                left.items.isEmpty, "\(account.username) still has requests from \(left.items.map(\.user.username))")
            let profile = try await a.get("/users/\(account.username)").decode(User.self)
            let followers = try await a.page("/users/\(account.username)/followers?limit=100", of: User.self)
            let following = try await a.page("/users/\(account.username)/following?limit=100", of: User.self)
            #expect(profile.counts.followers == followers.items.count)
            #expect(profile.counts.following == following.items.count)
        }
    }

    /// Records the driver's "Retrying a write after …" messages and what is logged as an error,
    /// and drops every other line.
    struct ServerLog: LogHandler {
        private let retryBox = NIOLockedValueBox<[String]>([])
        private let errorBox = NIOLockedValueBox<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        var retries: [String] { retryBox.withLockedValue { $0 } }
        /// What the servers logged as errors, such as the database error behind a 500.
        var errors: [String] { errorBox.withLockedValue { $0 } }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let text = event.message.description
            if text.hasPrefix("Retrying a write") { retryBox.withLockedValue { $0.append(text) } }
            if event.level >= .error { errorBox.withLockedValue { $0.append(text) } }
        }
    }

    static func run(_ a: TestAPI, _ b: TestAPI) async throws {
        var accounts: [Account] = []
        for i in 0..<people { accounts.append(try await a.register("writer\(i)")) }
        // Five shared posts by three authors, who follow each other: every write fans out.
        var posts: [Post] = []
        for i in 0..<5 { posts.append(try await a.textPost(accounts[i % 3], "shared post \(i) #shared")) }
        let postIDs = posts.map(\.id)
        let names = accounts.map(\.username)
        let results = try await withThrowingTaskGroup(of: [(String, Int)].self) { group in
            for (i, account) in accounts.enumerated() {
                let api = i % 2 == 0 ? a : b
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(i + 1))
                    var answers: [(String, Int)] = []
                    for n in 0..<actionsEach {
                        let post = postIDs[Int.random(in: 0..<postIDs.count, using: &random)]
                        let response: TestResponse
                        let what: String
                        switch Int.random(in: 0..<13, using: &random) {
                        case 0..<4:
                            what = "comment"
                            response = try await api.call(
                                .post, "/posts/\(post)/comments", as: account,
                                json: CreateCommentRequest(body: "c\(n) @\(names[0])"))
                        case 4..<7:
                            what = "like"
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/posts/\(post)/like", as: account)
                        case 7..<9:
                            what = "follow"
                            // Mostly among the first four, so two people often follow each other at once.
                            let other = names[
                                Int.random(in: 0..<(Bool.random(using: &random) ? 4 : names.count), using: &random)]
                            guard other != account.username else { continue }
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/users/\(other)/follow", as: account)
                        case 9..<11:
                            what = "boost"
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/posts/\(post)/boost", as: account)
                        case 12:
                            // The shared posts' tag: its backfill takes out their boosts' entries.
                            what = "tag"
                            response = try await api.call(
                                Bool.random(using: &random) ? .put : .delete, "/hashtags/shared/follow", as: account)
                        default:
                            what = "post"
                            // Two new tags, written in either order: both are counted for trends.
                            let tags = i % 2 == 0 ? "#alpha #beta" : "#beta #alpha"
                            response = try await api.call(
                                .post, "/posts", as: account,
                                json: CreatePostRequest(kind: .text, body: "new \(n) \(tags)"))
                        }
                        answers.append((what, response.status.code))
                    }
                    return answers
                }
            }
            var all: [(String, Int)] = []
            for try await answers in group { all += answers }
            return all
        }
        let failures = results.filter { !(200..<300).contains($0.1) }
        #expect(failures.isEmpty, "\(failures.count) of \(results.count) writes failed: \(failures.prefix(20))")
        // The counts kept by triggers match the rows.
        for id in postIDs {
            let post = try await a.get("/posts/\(id)").decode(Post.self)
            let comments = try await a.walk("/posts/\(id)/comments?limit=100", of: PlazaAPI.Comment.self).count
            let likers = try await a.page("/posts/\(id)/likes?limit=100", of: User.self)
            let boosters = try await a.page("/posts/\(id)/boosts?limit=100", of: User.self)
            #expect(post.counts.comments == comments)
            #expect(post.counts.likes == likers.items.count)
            #expect(post.counts.boosts == boosters.items.count)
        }
        // Once the queues are entered (both servers' workers may be at it too), every home feed
        // has each post once, whether its author or a boost brought it.
        try await a.withDatabase { db in
            while try await db.write({ try await HomeTimeline.enterPending(limit: 100, on: $0) }) > 0 {}
            while try await db.write({ try await HomeTimeline.enterPendingBoosts(limit: 100, on: $0) }) > 0 {}
        }
        for account in accounts {
            let home = try await a.page("/feed/home?limit=100", as: account, of: Post.self).items.map(\.id)
            #expect(Set(home).count == home.count, "\(account.username)'s home feed repeats a post: \(home)")
        }
    }
}
