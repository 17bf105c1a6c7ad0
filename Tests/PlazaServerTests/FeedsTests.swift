import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Feeds")
struct FeedsTests {
    @Test func homeHasMyPostsAndThoseOfPeopleIFollow() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            try await api.follow(ana, "bob")
            let mine = try await api.textPost(ana, "mine")
            let bobs = try await api.textPost(bob, "bob's")
            _ = try await api.textPost(carol, "carol's")
            let home = try await api.page("/feed/home", as: ana, of: Post.self)
            #expect(home.items.map(\.id) == [bobs.id, mine.id])
            #expect(try await api.get("/feed/home").status == .unauthorized)
            #expect(try await api.page("/feed/global", of: Post.self).items.count == 3)
            #expect(try await api.page("/users/bob/posts", of: Post.self).items.map(\.id) == [bobs.id])
            #expect(try await api.get("/users/nobody/posts").status == .notFound)
        }
    }

    @Test func feedsFilterByKindAndDateRange() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let text = try await api.textPost(ana, "text")
            let activity = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Run")))
            #expect(try await api.page("/feed/global?kind=activity", of: Post.self).items.map(\.id) == [activity.id])
            #expect(try await api.page("/users/ana/posts?kind=text", of: Post.self).items.map(\.id) == [text.id])
            let kind = try await api.get("/feed/global?kind=poem")
            #expect(kind.status == .unprocessableContent && kind.error?.field == "kind")

        }
    }

    @Test(arguments: ["/feed/global", "/users/ana/posts", "/feed/home"])
    func pagingWalksEveryPostOnceWhileNewOnesArrive(path: String) async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var expected: [String] = []
            for i in 0..<25 { expected.append(try await api.textPost(ana, "post \(i)").id) }
            expected.reverse()
            let seen = try await withThrowingTaskGroup(of: [String].self) { group in
                // New posts keep arriving while the walk goes on; they must not shift what it sees.
                group.addTask {
                    for i in 0..<15 { _ = try await api.textPost(ana, "late \(i)") }
                    return []
                }
                group.addTask {
                    var seen: [String] = []
                    var cursor: String?
                    repeat {
                        let page = try await api.page(
                            path + "?limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""), as: ana, of: Post.self)
                        seen += page.items.map(\.id)
                        cursor = page.nextCursor
                        await Task.yield()
                    } while cursor != nil
                    return seen
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(Set(seen).count == seen.count, "no post twice")
            // Posts made after the walk began may only show up ahead of the older ones.
            let original = Set(expected)
            #expect(seen.filter(original.contains) == expected, "every older post once, in order")
            #expect(seen.drop(while: { !original.contains($0) }).allSatisfy(original.contains))
        }
    }

    @Test func sinceAndUntilSelectADateRange() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let first = try await api.textPost(ana, "first")
            try await Task.sleep(for: .milliseconds(20))
            let second = try await api.textPost(ana, "second")
            try await Task.sleep(for: .milliseconds(20))
            let third = try await api.textPost(ana, "third")
            let since = second.createdAt.description
            let until = third.createdAt.description
            #expect(
                try await api.page("/feed/global?since=\(since)", of: Post.self).items.map(\.id) == [
                    third.id, second.id,
                ])
            #expect(
                try await api.page("/feed/global?until=\(until)", of: Post.self).items.map(\.id) == [
                    second.id, first.id,
                ])
            #expect(
                try await api.page("/feed/global?since=\(since)&until=\(until)", of: Post.self).items.map(\.id) == [
                    second.id
                ])
            let bad = try await api.get("/feed/global?since=yesterday")
            #expect(bad.status == .unprocessableContent && bad.error?.field == "since")
        }
    }

    @Test func limitAndCursorAreChecked() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for i in 0..<3 { _ = try await api.textPost(ana, "p\(i)") }
            #expect(try await api.page("/feed/global?limit=2", of: Post.self).items.count == 2)
            #expect(try await api.page("/feed/global", of: Post.self).nextCursor == nil)
            for limit in ["0", "101", "abc", "-5"] {
                let response = try await api.get("/feed/global?limit=\(limit)")
                #expect(response.status == .unprocessableContent, "limit=\(limit)")
                #expect(response.error?.field == "limit")
            }
            let cursor = try await api.get("/feed/global?cursor=garbage!")
            #expect(cursor.status == .badRequest && cursor.error?.code == "invalid_cursor")
            #expect(try await api.page("/feed/global?limit=100", of: Post.self).items.count == 3)
        }
    }
}
