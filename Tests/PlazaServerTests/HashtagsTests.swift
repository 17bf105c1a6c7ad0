import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Hashtags: read from text as Mastodon reads them, folded as search folds text, a tag's public
/// posts by keyset, and followed tags in the home feed.
@Suite("Hashtags")
struct HashtagsTests {
    @Test func textIsReadIntoLinksMentionsAndTags() {
        #expect(
            PostText.segments(of: "Ramen at @bob's #東京 https://x.test/#top (see http://a.test/b_(c)).")
                == [
                    .text("Ramen at "), .mention("bob"), .text("'s "), .hashtag("東京"), .text(" "),
                    .link("https://x.test/#top"), .text(" (see "), .link("http://a.test/b_(c)"), .text(")."),
                ])
        #expect(
            PostText.hashtags(in: "#Ramen #2024 a#b #東京 &#38; x/#no (#yes) #café_2 #") == [
                "Ramen", "東京", "yes", "café_2",
            ])
        #expect(PostText.mentions(in: "ana@example.com @Bob https://x.test/@carol @al") == ["bob"])
        let long = String(repeating: "a", count: PostText.maxTagLength)
        #expect(PostText.hashtags(in: "#\(long) #\(long)b") == [long])
        // Tags fold as search does: one key for each spelling.
        #expect(Hashtag.tags(in: "#Café #CAFE #cafe #ＲＡＭＥＮ").map(\.key) == ["cafe", "ramen"])
        #expect(Hashtag("ramen")?.key == "ramen")
        #expect(Hashtag("1234") == nil && Hashtag("a b") == nil && Hashtag("") == nil)
    }

    @Test func aTagsPageHasItsPublicPostsNewestFirst() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            let first = try await api.textPost(ana, "Slurp #Ramen")
            let second = try await api.post(bob, CreatePostRequest(kind: .text, title: "Best #ramen", body: "in town"))
            _ = try await api.post(bob, CreatePostRequest(kind: .text, body: "#ramen friends", audience: .followers))
            _ = try await api.textPost(carol, "#udon")
            #expect(second.tags == ["ramen"])
            for path in ["/hashtags/ramen/posts", "/hashtags/RAMEN/posts", "/hashtags/%23Ramen/posts"] {
                #expect(try await api.page(path, of: Post.self).items.map(\.id) == [second.id, first.id])
            }
            // The followers-only post is not on the tag's page, even for a follower.
            try await api.follow(carol, "bob")
            #expect(
                try await api.walk("/hashtags/ramen/posts?limit=1", as: carol, of: Post.self).map(\.id) == [
                    second.id, first.id,
                ])
            let tag = try await api.get("/hashtags/RAMEN").decode(HashtagSummary.self)
            #expect(tag == HashtagSummary(name: "Ramen", key: "ramen", following: false))
            #expect(try await api.get("/hashtags/1234/posts").status == .notFound)
            #expect(try await api.get("/hashtags/%E6%9D%B1%E4%BA%AC/posts").decode(Page<Post>.self).items.isEmpty)
            // Blocks hide a person's tagged posts from the blocker.
            #expect(try await api.call(.put, "/users/ana/block", as: carol).status == .ok)
            #expect(
                try await api.page("/hashtags/ramen/posts", as: carol, of: Post.self).items.map(\.id) == [second.id])
        }
    }

    @Test func editsAndDeletesKeepTagsTrue() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "#soup")
            let edited = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(body: .set("now #noodles")))
            #expect(try edited.decode(Post.self).tags == ["noodles"])
            #expect(try await api.page("/hashtags/soup/posts", of: Post.self).items.isEmpty)
            #expect(try await api.page("/hashtags/noodles/posts", of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await api.page("/hashtags/noodles/posts", of: Post.self).items.isEmpty)
            let many = (1...11).map { "#t\($0)" }.joined(separator: " ")
            let refused = try await api.call(.post, "/posts", as: ana, json: CreatePostRequest(kind: .text, body: many))
            #expect(refused.status == .unprocessableContent && refused.error?.code == "too_many_tags")
            let other = try await api.textPost(ana, "#one")
            let tooMany = try await api.call(
                .patch, "/posts/\(other.id)", as: ana, json: UpdatePostRequest(title: .set(many)))
            #expect(tooMany.error?.code == "too_many_tags")
        }
    }

    @Test func aFollowedTagBringsItsPublicPostsHome() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            let old = try await api.textPost(bob, "older #ramen")
            #expect(try await api.call(.put, "/hashtags/Ramen/follow").status == .unauthorized)
            #expect(try await api.call(.put, "/hashtags/Ramen/follow", as: ana).status == .noContent)
            #expect(try await api.call(.put, "/hashtags/ramen/follow", as: ana).status == .noContent)
            #expect(try await home(api, ana) == [old.id])
            let new = try await api.textPost(carol, "new #RAMEN")
            _ = try await api.post(carol, CreatePostRequest(kind: .text, body: "#ramen", audience: .followers))
            let both = try await api.textPost(carol, "#ramen #udon")
            #expect(try await home(api, ana) == [both.id, new.id, old.id])
            let followed = try await api.page("/me/followed-hashtags", as: ana, of: HashtagSummary.self).items
            #expect(followed == [HashtagSummary(name: "ramen", key: "ramen", following: true)])
            #expect(try await api.get("/hashtags/ramen", as: ana).decode(HashtagSummary.self).following)
            // Unfollowing takes out what the tag brought, not what another followed tag or a follow brings.
            try await api.follow(ana, "bob")
            #expect(try await api.call(.put, "/hashtags/udon/follow", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/hashtags/ramen/follow", as: ana).status == .noContent)
            #expect(try await home(api, ana) == [both.id, old.id])
            #expect(
                try await api.page("/me/followed-hashtags", as: ana, of: HashtagSummary.self).items.map(\.key) == [
                    "udon"
                ])
            // A deleted post leaves its tag followers' timelines too.
            #expect(try await api.call(.delete, "/posts/\(both.id)", as: carol).status == .noContent)
            let left = try await api.withDatabase { db in
                try await db.read { c in
                    let post = Int64(both.id)!
                    return try await c.first(
                        """
                        SELECT (SELECT COUNT(*) FROM home_entries WHERE post_id = \(bind: post))
                            + (SELECT COUNT(*) FROM home_pending WHERE post_id = \(bind: post)) AS n
                        """)?.decode(column: "n", as: Int.self)
                }
            }
            #expect(left == 0)
        }
    }

    @Test func theComposerSuggestsTagsByPrefix() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.textPost(ana, "#ramen #Rambutan #rice #東京")
            let found = try await api.page("/hashtags?q=%23RAM", of: HashtagSummary.self).items
            #expect(found.map(\.name) == ["Rambutan", "ramen"])
            #expect(try await api.page("/hashtags?q=%E6%9D%B1", of: HashtagSummary.self).items.map(\.key) == ["東京"])
            #expect(try await api.page("/hashtags?q=", of: HashtagSummary.self).items.isEmpty)
            #expect(
                try await api.get("/hashtags?q=" + String(repeating: "a", count: 101)).status == .unprocessableContent)
        }
    }

    @Test func tagsWrittenBeforeTheMigrationAreIndexed() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "#vintage")
            try await api.withDatabase { db in
                try await db.write { c in
                    try await c.exec("DELETE FROM post_tags")
                    try await Migration026.indexTags(on: c)
                }
            }
            #expect(try await api.page("/hashtags/vintage/posts", of: Post.self).items.map(\.id) == [post.id])
        }
    }

    /// Mastodon apps: a tag's timeline, the tag, following it, search, linked text, spoilers.
    @Test func mastodonAppsSeeTagsAndWarnings() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let (anaToken, bobToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bob))
            let created = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [("status", "Slurp #Ramen with @bob"), ("spoiler_text", "food"), ("sensitive", "true")]
            ).json()
            let id = try #require(created["id"]?.stringValue)
            #expect(created["spoiler_text"]?.stringValue == "food" && created["sensitive"] == .bool(true))
            #expect(created["tags"]?.array.first?["url"]?.stringValue == "\(api.config.baseURL)/tags/Ramen")
            let content = try #require(created["content"]?.stringValue)
            #expect(content.contains(#"class="mention hashtag" rel="tag">#<span>Ramen</span></a>"#))
            #expect(content.contains(#"class="u-url mention">@<span>bob</span>"#) && !content.contains("food"))
            let post = try await api.get("/posts/\(id)").decode(Post.self)
            #expect(post.contentWarning == "food" && post.sensitive && post.body == "Slurp #Ramen with @bob")
            let timeline = try await api.mastodon(.get, "/api/v1/timelines/tag/ramen", token: bobToken).json()
            #expect(timeline.array.map { $0["id"]?.stringValue } == [id])
            let follow = try await api.mastodon(.post, "/api/v1/tags/RAMEN/follow", token: bobToken).json()
            #expect(follow["following"] == .bool(true))
            let tag = try await api.mastodon(.get, "/api/v1/tags/ramen", token: bobToken).json()
            #expect(tag["name"]?.stringValue == "Ramen" && tag["following"] == .bool(true))
            #expect(tag["history"]?.array.first?["uses"]?.stringValue == "1")
            #expect(tag["history"]?.array.count == 7)
            let followed = try await api.mastodon(.get, "/api/v1/followed_tags", token: bobToken).json()
            #expect(followed.array.map { $0["name"]?.stringValue } == ["Ramen"])
            // Apps search for tags without their `#`.
            let found = try await api.mastodon(.get, "/api/v2/search?q=ram&type=hashtags", token: bobToken).json()
            #expect(found["hashtags"]?.array.map { $0["name"]?.stringValue } == ["Ramen"])
            let edited = try await api.mastodon(
                .put, "/api/v1/statuses/\(id)", token: anaToken, form: [("status", "now #udon"), ("spoiler_text", "")]
            ).json()
            #expect(edited["spoiler_text"]?.stringValue == "" && edited["sensitive"] == .bool(true))
            #expect(try await api.mastodon(.get, "/api/v1/timelines/tag/ramen", token: bobToken).json().array.isEmpty)
            #expect(try await api.mastodon(.post, "/api/v1/tags/ramen/unfollow", token: bobToken).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/tags/1234", token: bobToken).status == .notFound)
        }
    }

    /// Trends count people, not posts: one person's ten posts weigh as one; today counts most;
    /// moderators keep a tag out; Mastodon apps read them with their week.
    @Test func trendsCountPeopleAndModeratorsHideTags() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            for n in 0..<5 { _ = try await api.textPost(ana, "#spam\(n % 1) again") }
            for person in [ana, bob, cat] { _ = try await api.textPost(person, "#Ramen for all") }
            _ = try await api.textPost(bob, "#udon")
            _ = try await api.post(cat, CreatePostRequest(kind: .text, body: "#secret", audience: .followers))
            let trends = try await api.page("/trending/hashtags", of: HashtagSummary.self).items
            #expect(trends.map(\.key) == ["ramen", "spam0", "udon"])
            let admin = try await api.register("root")
            try await api.withDatabase { db in
                try await db.write { c in try await c.exec("UPDATE users SET is_admin = TRUE WHERE username = 'root'") }
            }
            #expect(try await api.call(.delete, "/admin/hashtags/spam0/trendable", as: bob).status == .forbidden)
            #expect(try await api.call(.delete, "/admin/hashtags/spam0/trendable", as: admin).status == .noContent)
            #expect(
                try await api.page("/trending/hashtags", of: HashtagSummary.self).items.map(\.key) == ["ramen", "udon"])
            let token = try await api.mastodonToken(bob)
            let tags = try await api.mastodon(.get, "/api/v1/trends/tags", token: token).json().array
            #expect(tags.map { $0["name"]?.stringValue } == ["Ramen", "udon"])
            #expect(tags.first?["history"]?.array.first?["accounts"]?.stringValue == "3")
            // Posts trend by the people who like or boost them; links by the people who share them.
            let liked = try await api.textPost(ana, "liked by two")
            let once = try await api.textPost(bob, "liked by one")
            for person in [bob, cat] { _ = try await api.call(.put, "/posts/\(liked.id)/like", as: person) }
            _ = try await api.call(.put, "/posts/\(once.id)/boost", as: ana)
            _ = try await api.call(.put, "/posts/\(once.id)/like", as: ana)
            let hot = try await api.page("/trending/posts", of: Post.self).items.map(\.id)
            #expect(hot == [liked.id, once.id])
            #expect(try await api.call(.put, "/users/ana/block", as: cat).status == .ok)
            #expect(try await api.page("/trending/posts", as: cat, of: Post.self).items.map(\.id) == [once.id])
            for person in [ana, bob] {
                _ = try await api.post(
                    person, CreatePostRequest(kind: .link, link: LinkInput(url: "https://example.org/ramen")))
            }
            _ = try await api.post(
                ana, CreatePostRequest(kind: .link, link: LinkInput(url: "https://example.org/udon")))
            let links = try await api.page("/trending/links", of: LinkPreview.self).items.map(\.url)
            #expect(links == ["https://example.org/ramen", "https://example.org/udon"])
            let cards = try await api.mastodon(.get, "/api/v1/trends/links", token: token).json().array
            #expect(cards.first?["url"]?.stringValue == "https://example.org/ramen")
            let statuses = try await api.mastodon(.get, "/api/v1/trends/statuses", token: token).json().array
            #expect(statuses.map { $0["id"]?.stringValue } == [liked.id, once.id])
            // Pruned after a week.
            try await api.withDatabase { db in
                try await Trends.prune(now: Timestamp.now.milliseconds + 8 * 86_400_000, on: db)
            }
            #expect(try await api.page("/trending/hashtags", of: HashtagSummary.self).items.isEmpty)
        }
    }

    private func home(_ api: TestAPI, _ account: Account) async throws -> [String] {
        try await api.page("/feed/home?limit=50", as: account, of: Post.self).items.map(\.id)
    }
}
