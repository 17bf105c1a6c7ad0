import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Many people writing on the same few posts at once: comments, likes, follows and new posts,
/// through several connections and, on PostgreSQL, two app servers on one database. Every
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
        let config = try await TestDatabase.config {
            $0.postgresPoolSize = 8
            $0.logLevel = .debug
        }
        let retries = RetryCounter()
        let logger = Logger(label: "test") { _ in retries }
        let one = try await buildApplication(config: config, logger: logger)
        // SQLite has one writer per database file and one app server; PostgreSQL gets two.
        var second = config
        second.nodeID = 2  // each app server has its own node id, or their ids collide
        let two = config.databaseURL == nil ? nil : try await buildApplication(config: second, logger: logger)
        try await one.test(.router) { first in
            if let two {
                try await two.test(.router) { second in
                    try await Self.run(TestAPI(client: first, config: config), TestAPI(client: second, config: config))
                }
            } else {
                try await Self.run(TestAPI(client: first, config: config), TestAPI(client: first, config: config))
            }
        }
        #expect(retries.messages.isEmpty, "writes retried after a conflict: \(retries.messages.prefix(5))")
        TestDatabase.dispose(config)
    }

    /// Records the driver's "Retrying a write after …" messages, and drops every other line.
    struct RetryCounter: LogHandler {
        private let box = NIOLockedValueBox<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        var messages: [String] { box.withLockedValue { $0 } }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let text = event.message.description
            if text.hasPrefix("Retrying a write") { box.withLockedValue { $0.append(text) } }
        }
    }

    static func run(_ a: TestAPI, _ b: TestAPI) async throws {
        var accounts: [Account] = []
        for i in 0..<people { accounts.append(try await a.register("writer\(i)")) }
        // Five shared posts by three authors, who follow each other: every write fans out.
        var posts: [Post] = []
        for i in 0..<5 { posts.append(try await a.textPost(accounts[i % 3], "shared post \(i)")) }
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
                        switch Int.random(in: 0..<10, using: &random) {
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
                        default:
                            what = "post"
                            response = try await api.call(
                                .post, "/posts", as: account, json: CreatePostRequest(kind: .text, body: "new \(n)"))
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
            var comments = 0
            var cursor: String?
            repeat {
                let page = try await a.page(
                    "/posts/\(id)/comments?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""),
                    of: PlazaAPI.Comment.self)
                comments += page.items.count
                cursor = page.nextCursor
            } while cursor != nil
            let likers = try await a.page("/posts/\(id)/likes?limit=100", of: User.self)
            #expect(post.counts.comments == comments)
            #expect(post.counts.likes == likers.items.count)
        }
    }
}
