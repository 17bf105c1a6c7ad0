import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("History and recommendations")
struct HistoryTests {
    @Test func viewsAreCountedPerPersonAndSortThreeWays() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let old = try await api.post(bob, CreatePostRequest(kind: .text, title: "Old post", body: "gardening tips"))
            let new = try await api.post(bob, CreatePostRequest(kind: .text, title: "New post", body: "cooking tips"))
            #expect(try await api.call(.post, "/posts/\(old.id)/view").status == .unauthorized)
            for _ in 0..<3 { #expect(try await api.call(.post, "/posts/\(old.id)/view", as: ana).status == .noContent) }
            try await Task.sleep(for: .milliseconds(5))
            try await api.call(.post, "/posts/\(new.id)/view", as: ana)

            let byViewed = try await api.page("/me/history", as: ana, of: HistoryItem.self).items
            #expect(byViewed.map(\.post.id) == [new.id, old.id])
            #expect(byViewed[1].views == 3 && byViewed[1].firstViewedAt <= byViewed[1].viewedAt)
            #expect(
                try await api.page("/me/history?sort=postedAt", as: ana, of: HistoryItem.self).items.map(\.post.id) == [
                    new.id, old.id,
                ])
            #expect(
                try await api.page("/me/history?sort=views", as: ana, of: HistoryItem.self).items.map(\.post.id) == [
                    old.id, new.id,
                ])
            let first = try await api.page("/me/history?sort=views&limit=1", as: ana, of: HistoryItem.self)
            #expect(
                try await api.page(
                    "/me/history?sort=views&limit=1&cursor=\(first.nextCursor!)", as: ana, of: HistoryItem.self
                ).items.map(\.post.id) == [new.id])
            #expect(
                try await api.page("/me/history?q=garden", as: ana, of: HistoryItem.self).items.map(\.post.id) == [
                    old.id
                ])
            #expect(try await api.page("/me/history?q=tips&in=title", as: ana, of: HistoryItem.self).items.isEmpty)
            // The web page filters by field too, and keeps the field chosen.
            let page = try await api.page(.get, "/history?q=old&in=title", cookie: ana.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"post-\(old.id)\"") && !page.text.contains("id=\"post-\(new.id)\""))
            #expect(page.text.contains("<option value=\"title\" selected>"))
            #expect(page.text.contains("data-record-clicks"), "opening a post from history counts as a click")
            let byBody = try await api.page(.get, "/history?q=old&in=body", cookie: ana.cookie)
            #expect(!byBody.text.contains("id=\"post-\(old.id)\""))
            #expect(try await api.get("/me/history?sort=random", as: ana).status == .unprocessableContent)

            // Private: Bob's history is his own, and empty.
            #expect(try await api.page("/me/history", as: bob, of: HistoryItem.self).items.isEmpty)
            #expect(try await api.get("/me/history").status == .unauthorized)
            #expect(try await api.get("/me/recommended").status == .unauthorized)
        }
    }

    @Test func onlyVisiblePostsAreViewedAndOnlyViewedOnesClicked() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(bob, "hello")
            #expect(try await api.call(.post, "/posts/999/view", as: ana).status == .notFound)
            #expect(
                try await api.call(.post, "/me/history/\(post.id)/click", as: ana).status == .notFound,
                "not in her history yet")
            try await api.call(.post, "/posts/\(post.id)/view", as: ana)
            #expect(try await api.call(.post, "/me/history/\(post.id)/click", as: ana).status == .noContent)
            #expect(try await api.page("/me/history", as: ana, of: HistoryItem.self).items.first?.clicks == 1)
            try await api.call(.put, "/users/ana/block", as: bob)
            #expect(try await api.call(.post, "/posts/\(post.id)/view", as: ana).status == .notFound)
            #expect(
                try await api.page("/me/history", as: ana, of: HistoryItem.self).items.isEmpty,
                "a blocked author's posts leave the history view")
            try await api.call(.delete, "/users/ana/block", as: bob)
            try await api.call(.delete, "/posts/\(post.id)", as: bob)
            #expect(try await api.page("/me/history", as: ana, of: HistoryItem.self).items.isEmpty)
        }
    }

    static let topics: [String: [String]] = [
        "astronomy": [
            "telescope", "galaxy", "nebula", "orbit", "planet", "comet", "stellar", "eclipse", "asteroid", "cosmos",
        ],
        "baking": ["sourdough", "flour", "oven", "yeast", "croissant", "butter", "dough", "crust", "pastry", "knead"],
        "cycling": ["bicycle", "pedal", "gears", "saddle", "helmet", "chain", "climb", "peloton", "tyres", "spokes"],
        "finance": [
            "budget", "savings", "interest", "stocks", "bonds", "mortgage", "pension", "dividend", "inflation",
            "invest",
        ],
    ]
    static let common = ["today", "really", "great", "about", "question", "anyone", "help", "thanks", "week", "people"]

    /// A person views 60 posts on four topics, then picks astronomy posts from search results a
    /// few times: their recommendations should be mostly astronomy.
    @Test func recommendationsFollowWhatSomeonePicksFromSearch() async throws {
        try await withApp { api async throws in
            let (author, reader) = try await api.register("author", "reader")
            var generator = SeededGenerator(seed: 42)
            var topicOf: [String: String] = [:]
            var posts: [(id: String, topic: String)] = []
            for topic in Self.topics.keys.sorted() {
                for n in 0..<15 {
                    let words = Self.topics[topic]!
                    let body = (0..<12).map { _ in
                        Bool.random(using: &generator)
                            ? words.randomElement(using: &generator)! : Self.common.randomElement(using: &generator)!
                    }
                    let post = try await api.post(
                        author,
                        CreatePostRequest(
                            kind: .text,
                            title:
                                "\(words.randomElement(using: &generator)!) \(Self.common.randomElement(using: &generator)!) \(n)",
                            body: body.joined(separator: " ")))
                    topicOf[post.id] = topic
                    posts.append((post.id, topic))
                }
            }
            for post in posts.shuffled(using: &generator) {
                try await api.call(.post, "/posts/\(post.id)/view", as: reader)
            }
            // Search, then pick five results about astronomy.
            let results = try await api.page("/search/posts?q=galaxy&limit=100", as: reader, of: Post.self).items
            let picked = results.filter { topicOf[$0.id] == "astronomy" }.prefix(5)
            #expect(picked.count == 5)
            for post in picked {
                #expect(try await api.call(.post, "/me/history/\(post.id)/click", as: reader).status == .noContent)
            }

            let top = try await api.page("/me/recommended?limit=5", as: reader, of: HistoryItem.self).items
            let onTopic = top.filter { topicOf[$0.post.id] == "astronomy" }.count
            print(
                "Recommendation evaluation: \(onTopic) of the top 5 are on the clicked topic (astronomy); 60 viewed posts on 4 topics, 5 clicks"
            )
            #expect(onTopic >= 4, "top 5: \(top.map { topicOf[$0.post.id]! })")
            // Without clicks there is no preference: the order is simply the most recent views.
            let other = try await api.register("other")
            for post in posts.prefix(3) { try await api.call(.post, "/posts/\(post.id)/view", as: other) }
            let plain = try await api.page("/me/recommended", as: other, of: HistoryItem.self).items
            #expect(Set(plain.map(\.post.id)) == Set(posts.prefix(3).map(\.id)))
        }
    }

    @Test func aClickOutweighsAnEqualOlderClick() {
        // The same words clicked now weigh twice what they weighed one half-life ago.
        let now = TermModel.clickScale(at: 2_000_000_000_000)
        let earlier = TermModel.clickScale(at: 2_000_000_000_000 - Int64(TermModel.clickHalfLifeMillis))
        #expect(abs(now / earlier - 2) < 1e-9)
        let views = ["galaxy": 5.0, "flour": 5.0]
        let post = ["galaxy": 1.0]
        let liked = TermModel.score(
            post: post, clicks: ["galaxy": 3], clickTotal: 3, views: views, viewTotal: 10, lastViewedAgoMillis: 0)
        let other = TermModel.score(
            post: post, clicks: ["flour": 3], clickTotal: 3, views: views, viewTotal: 10, lastViewedAgoMillis: 0)
        let stale = TermModel.score(
            post: post, clicks: ["galaxy": 3], clickTotal: 3, views: views, viewTotal: 10,
            lastViewedAgoMillis: TermModel.viewHalfLifeMillis)
        #expect(liked > 0 && other < 0 && abs((liked - stale) - log(2)) < 1e-9)
    }
}
