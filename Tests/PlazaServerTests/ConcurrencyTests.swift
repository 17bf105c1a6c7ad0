import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
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

    @Test func manyPeopleWritingOnSharedPostsGetNoServerErrors() async throws {
        let config = try await TestDatabase.config { $0.postgresPoolSize = 8 }
        let one = try await buildApplication(config: config, logger: Logger(label: "test"))
        // SQLite has one writer per database file and one app server; PostgreSQL gets two.
        var second = config
        second.nodeID = 2  // each app server has its own node id, or their ids collide
        let two = config.databaseURL == nil ? nil : try await buildApplication(config: second, logger: Logger(label: "test"))
        try await one.test(.router) { first in
            if let two {
                try await two.test(.router) { second in
                    try await Self.run(TestAPI(client: first, config: config), TestAPI(client: second, config: config))
                }
            } else {
                try await Self.run(TestAPI(client: first, config: config), TestAPI(client: first, config: config))
            }
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
                            response = try await api.call(.post, "/posts/\(post)/comments", as: account, json: CreateCommentRequest(body: "c\(n) @\(names[0])"))
                        case 4..<7:
                            what = "like"
                            response = try await api.call(Bool.random(using: &random) ? .put : .delete, "/posts/\(post)/like", as: account)
                        case 7..<9:
                            what = "follow"
                            let other = names[Int.random(in: 0..<names.count, using: &random)]
                            guard other != account.username else { continue }
                            response = try await api.call(Bool.random(using: &random) ? .put : .delete, "/users/\(other)/follow", as: account)
                        default:
                            what = "post"
                            response = try await api.call(.post, "/posts", as: account, json: CreatePostRequest(kind: .text, body: "new \(n)"))
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
                let page = try await a.page("/posts/\(id)/comments?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""), of: PlazaAPI.Comment.self)
                comments += page.items.count
                cursor = page.nextCursor
            } while cursor != nil
            let likers = try await a.page("/posts/\(id)/likes?limit=100", of: User.self)
            #expect(post.counts.comments == comments)
            #expect(post.counts.likes == likers.items.count)
        }
    }
}
