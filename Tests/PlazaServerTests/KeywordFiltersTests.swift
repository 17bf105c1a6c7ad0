import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Keyword filters: `/me/filters`, and the server applying them in every feed, thread, search,
/// notification list and stream.
@Suite("Keyword filters")
struct KeywordFiltersTests {
    static func add(
        _ api: TestAPI, _ account: Account, _ phrase: String, contexts: [String] = ["home", "public"],
        action: String = "hide", wholeWord: Bool? = nil, expiresAt: Timestamp? = nil
    ) async throws -> KeywordFilter {
        let response = try await api.call(
            .post, "/me/filters", as: account,
            json: CreateKeywordFilterRequest(
                phrase: phrase, wholeWord: wholeWord, contexts: contexts, action: action, expiresAt: expiresAt))
        #expect(response.status == .created, "add filter: \(response.text)")
        return try response.decode(KeywordFilter.self)
    }

    static func titles(_ api: TestAPI, _ path: String, as account: Account?) async throws -> [String] {
        try await api.page(path, as: account, of: Post.self).items.compactMap(\.body)
    }

    @Test func ownersAloneReadChangeAndRemoveTheirFilters() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(try await api.get("/me/filters").status == .unauthorized)
            let filter = try await Self.add(api, ana, "  Spoilers  ", contexts: ["home", "home", "thread"])
            #expect(filter.phrase == "Spoilers" && filter.wholeWord && filter.contexts == [.home, .thread])
            #expect(filter.action == .hide && filter.expiresAt == nil)
            #expect(try await api.page("/me/filters", as: ana, of: KeywordFilter.self).items == [filter])
            #expect(try await api.page("/me/filters", as: bob, of: KeywordFilter.self).items.isEmpty)
            // Another's filter is not found, whatever is done to it.
            #expect(try await api.get("/me/filters/\(filter.id)", as: bob).status == .notFound)
            let change = UpdateKeywordFilterRequest(phrase: "plot", action: "warn")
            #expect(try await api.call(.patch, "/me/filters/\(filter.id)", as: bob, json: change).status == .notFound)
            #expect(try await api.call(.delete, "/me/filters/\(filter.id)", as: bob).status == .notFound)
            #expect(try await api.call(.patch, "/me/filters/\(filter.id)", json: change).status == .unauthorized)

            let changed = try await api.call(.patch, "/me/filters/\(filter.id)", as: ana, json: change)
            #expect(changed.status == .ok)
            let after = try changed.decode(KeywordFilter.self)
            #expect(after.phrase == "plot" && after.action == .warn && after.contexts == [.home, .thread])
            #expect(try await api.get("/me/filters/\(filter.id)", as: ana).decode(KeywordFilter.self) == after)
            #expect(try await api.call(.delete, "/me/filters/\(filter.id)", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/me/filters/\(filter.id)", as: ana).status == .notFound)
            #expect(try await api.get("/me/filters/nonsense", as: ana).status == .notFound)
        }
    }

    @Test func badFiltersAre422s() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            func refused(_ body: CreateKeywordFilterRequest) async throws -> ErrorBody.Detail? {
                let response = try await api.call(.post, "/me/filters", as: ana, json: body)
                #expect(response.status == .unprocessableContent, "\(response.text)")
                return response.error
            }
            #expect(try await refused(.init(phrase: "   ", contexts: ["home"]))?.field == "phrase")
            #expect(
                try await refused(.init(phrase: String(repeating: "a", count: 101), contexts: ["home"]))?.field
                    == "phrase")
            #expect(try await refused(.init(phrase: "x", contexts: []))?.field == "contexts")
            #expect(try await refused(.init(phrase: "x", contexts: ["account"]))?.field == "contexts")
            #expect(try await refused(.init(phrase: "x", contexts: ["home"], action: "blur"))?.field == "action")
            let past = Timestamp(milliseconds: Timestamp.now.milliseconds - 1000)
            #expect(try await refused(.init(phrase: "x", contexts: ["home"], expiresAt: past))?.field == "expiresAt")
            // A phrase of 100 characters is fine; a 101st active filter is not.
            _ = try await Self.add(api, ana, String(repeating: "é", count: 100))
            for i in 1..<KeywordFilterActions.maxPerPerson { _ = try await Self.add(api, ana, "word\(i)") }
            #expect(try await refused(.init(phrase: "one more", contexts: ["home"]))?.code == "too_many_filters")
            let filter = try await api.page("/me/filters", as: ana, of: KeywordFilter.self).items[0]
            let bad = try await api.call(
                .patch, "/me/filters/\(filter.id)", as: ana, json: UpdateKeywordFilterRequest(contexts: []))
            #expect(bad.status == .unprocessableContent && bad.error?.field == "contexts")
        }
    }

    @Test func wholeWordAndSubstringMatchFoldedText() {
        func matches(_ phrase: String, _ text: String, wholeWord: Bool) -> Bool {
            KeywordFilters.matches(phrase, in: text, wholeWord: wholeWord)
        }
        #expect(matches("cat", "A CAT sat", wholeWord: true))
        #expect(!matches("cat", "concatenate", wholeWord: true))
        #expect(matches("cat", "concatenate", wholeWord: false))
        #expect(matches("cafe", "Meet at the Café!", wholeWord: true))
        #expect(matches("straße", "STRASSE", wholeWord: true))
        #expect(!matches("cat", "cat_name", wholeWord: true))
        #expect(matches("#tag", "see #tag.", wholeWord: true))
        #expect(matches("c++", "I like c++!", wholeWord: true))
        #expect(!matches("über", "überall", wholeWord: true))
        #expect(matches("über", "Ich bin ÜBER dich", wholeWord: true))
        #expect(!matches("", "anything", wholeWord: false))
        #expect(matches("ラーメン", "東京のラーメン", wholeWord: false))
    }

    @Test func feedsHideAndWarnInTheirContexts() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.follow(ana, "bob")
            let spoiler = try await api.textPost(bob, "Big spoilers ahead")
            let warned = try await api.textPost(bob, "Election news today")
            let plain = try await api.textPost(bob, "Nice weather")
            let mine = try await api.textPost(ana, "My own spoilers")
            _ = try await Self.add(api, ana, "spoilers", contexts: ["home"], action: "hide")
            _ = try await Self.add(api, ana, "election", contexts: ["home", "public"], action: "warn")
            let expiring = try await Self.add(
                api, ana, "weather", contexts: ["home"],
                expiresAt: Timestamp(milliseconds: Timestamp.now.milliseconds + 3_600_000))

            let home = try await api.page("/feed/home", as: ana, of: Post.self)
            // Hidden out, warned marked, my own never filtered; the expiring one still hides the weather.
            #expect(home.items.map(\.id) == [mine.id, warned.id])
            #expect(home.items[1].filtered?.map(\.phrase) == ["election"])
            #expect(home.items[0].filtered == nil)
            // Public: only the warning applies there; others see everything, unmarked.
            let global = try await api.page("/feed/global", as: ana, of: Post.self)
            #expect(global.items.map(\.id) == [mine.id, plain.id, warned.id, spoiler.id])
            #expect(global.items.first { $0.id == warned.id }?.filtered?.map(\.action) == [.warn])
            #expect(try await api.page("/feed/global", as: bob, of: Post.self).items.allSatisfy { $0.filtered == nil })
            // A profile is its own context.
            #expect(try await api.page("/users/bob/posts", as: ana, of: Post.self).items.count == 3)
            // Paging: a short page, the cursor still walks every post.
            let walked = try await api.walk("/feed/home?limit=1", as: ana, of: Post.self)
            #expect(walked.map(\.id) == [mine.id, warned.id])

            // Expired (moved into the past behind the API, which takes only future expiries): ignored, still listed.
            let expired = try #require(Int64(expiring.id))
            try await api.withDatabase { db in
                _ = try await db.write("UPDATE keyword_filters SET expires_at = 1 WHERE id = \(bind: expired)")
            }
            #expect(try await api.page("/feed/home", as: ana, of: Post.self).items.map(\.id).contains(plain.id))
            let listed = try await api.page("/me/filters", as: ana, of: KeywordFilter.self).items
            #expect(listed.first { $0.id == expiring.id }?.expiresAt == Timestamp(milliseconds: 1))
            // The maintenance round removes it.
            try await api.withDatabase { db in
                try await KeywordFilterStore(db: db, ids: IDGenerator(node: 0)).pruneExpired(
                    now: Timestamp.now.milliseconds)
            }
            #expect(try await api.page("/me/filters", as: ana, of: KeywordFilter.self).items.count == 2)
        }
    }

    @Test func profilesThreadsSearchAndNotifications() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let spoiler = try await api.textPost(bob, "The butler did it, spoiler")
            let post = try await api.textPost(ana, "What did you think of the film?")
            for text in ["Loved it", "The ending was a spoiler for me", "ok"] {
                let response = try await api.call(
                    .post, "/posts/\(post.id)/comments", as: bob, json: CreateCommentRequest(body: text))
                #expect(response.status == .created)
            }
            _ = try await Self.add(api, ana, "spoiler", contexts: ["profile"], action: "hide")
            #expect(try await api.page("/users/bob/posts", as: ana, of: Post.self).items.isEmpty)
            #expect(try await api.page("/feed/global", as: ana, of: Post.self).items.count == 2)
            // Threads: the post's page carries the match, its comments lose the hidden one.
            _ = try await Self.add(
                api, ana, "spoiler", contexts: ["thread", "notifications", "public"], action: "hide")
            let page = try await api.get("/posts/\(spoiler.id)", as: ana).decode(Post.self)
            #expect(page.filtered?.map(\.action) == [.hide])
            #expect(try await api.get("/posts/\(spoiler.id)", as: bob).decode(Post.self).filtered == nil)
            let comments = try await api.page("/posts/\(post.id)/comments", as: ana, of: PlazaAPI.Comment.self)
            #expect(comments.items.map(\.body) == ["Loved it", "ok"])
            #expect(
                try await api.page("/posts/\(post.id)/comments", as: bob, of: PlazaAPI.Comment.self).items.count == 3)
            // A warning folds the comment instead, in the API, the web page and Mastodon's context.
            _ = try await Self.add(api, ana, "loved", contexts: ["thread"], action: "warn")
            let warned = try await api.page("/posts/\(post.id)/comments", as: ana, of: PlazaAPI.Comment.self).items
            #expect(warned.map(\.body) == ["Loved it", "ok"])
            #expect(warned.map { $0.filtered?.map(\.phrase) } == [["loved"], nil])
            let web = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie).text
            #expect(web.contains(#"<details class="filtered"><summary>Filtered: loved</summary>"#))
            let token = try await api.mastodonToken(ana)
            let context = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)/context", token: token).json()
            let descendants = context["descendants"]?.array ?? []
            #expect(descendants.map { $0["filtered"]?.array.count ?? -1 } == [1, 0])
            // Search is public.
            #expect(try await api.page("/search/posts?q=butler", as: ana, of: Post.self).items.isEmpty)
            #expect(try await api.page("/search/posts?q=butler", as: bob, of: Post.self).items.count == 1)
            // Notifications: the comment that matches is not announced.
            let notes = try await api.page("/me/notifications?limit=100", as: ana, of: PlazaAPI.Notification.self)
            #expect(!notes.items.contains { $0.comment?.body.contains("spoiler") == true })
            #expect(notes.items.contains { $0.comment?.body == "ok" || $0.comment?.body == "Loved it" })
        }
    }

    @Test func mastodonFiltersV2AndV1MapOntoPlazaFilters() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.follow(ana, "bob")
            let token = try await api.mastodonToken(ana)
            let created = try await api.mastodon(
                .post, "/api/v2/filters", token: token,
                json:
                    #"{"title":"Sport","context":["home","account"],"filter_action":"warn","expires_in":3600,"keywords_attributes":[{"keyword":"football","whole_word":true}]}"#
            )
            #expect(created.status == .ok, "\(created.text)")
            let filter = try created.json()
            let id = try #require(filter["id"]?.stringValue)
            #expect(filter["title"]?.stringValue == "football")
            #expect(filter["context"]?.array.compactMap(\.stringValue) == ["home", "account"])
            #expect(filter["keywords"]?.array.first?["keyword"]?.stringValue == "football")
            #expect(filter["expires_at"]?.stringValue != nil)
            // The same filter through Plaza's API, with Plaza's context names.
            let plaza = try await api.get("/me/filters/\(id)", as: ana).decode(KeywordFilter.self)
            #expect(plaza.contexts == [.home, .profile] && plaza.action == .warn && plaza.wholeWord)

            // Several keywords cannot be kept: Mastodon's error shape.
            let several = try await api.mastodon(
                .post, "/api/v2/filters", token: token,
                form: [
                    ("title", "x"), ("context[]", "home"), ("keywords_attributes[][keyword]", "a"),
                    ("keywords_attributes[][keyword]", "b"),
                ])
            #expect(several.status == .unprocessableContent)
            #expect(try several.json()["error"]?.stringValue != nil)
            let badContext = try await api.mastodon(
                .post, "/api/v1/filters", token: token, form: [("phrase", "x"), ("context[]", "nowhere")])
            #expect(badContext.status == .unprocessableContent)

            // A warned status carries `filtered`.
            _ = try await api.textPost(bob, "Football tonight!")
            let home = try await api.mastodon(.get, "/api/v1/timelines/home", token: token).json()
            let result = try #require(home.array.first?["filtered"]?.array.first)
            #expect(result["filter"]?["id"]?.stringValue == id)
            #expect(result["filter"]?["filter_action"]?.stringValue == "warn")
            #expect(result["keyword_matches"]?.array.compactMap(\.stringValue) == ["football"])

            // Keywords: the filter's one, sharing its id; a new one replaces it.
            let keywords = try await api.mastodon(.get, "/api/v2/filters/\(id)/keywords", token: token).json()
            #expect(keywords.array.map { $0["id"]?.stringValue } == [id])
            let replaced = try await api.mastodon(
                .post, "/api/v2/filters/\(id)/keywords", token: token, form: [("keyword", "tennis")])
            #expect(try replaced.json()["keyword"]?.stringValue == "tennis")
            // v1: irreversible is hide.
            let v1 = try await api.mastodon(
                .put, "/api/v1/filters/\(id)", token: token, form: [("irreversible", "true")]
            ).json()
            #expect(v1["phrase"]?.stringValue == "tennis" && v1["irreversible"]?.bool == true)
            // Another person's filter is not found; removing it is the owner's.
            let bobToken = try await api.mastodonToken(bob)
            #expect(try await api.mastodon(.get, "/api/v2/filters/\(id)", token: bobToken).status == .notFound)
            #expect(try await api.mastodon(.delete, "/api/v2/filters/\(id)", token: bobToken).status == .notFound)
            #expect(try await api.mastodon(.delete, "/api/v2/filters/\(id)", token: token).status == .ok)
            #expect(try await api.mastodon(.get, "/api/v2/filters", token: token).json() == .array([]))
        }
    }

    @Test func theWebAppListsFiltersAndFoldsWarnedPosts() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.follow(ana, "bob")
            _ = try await api.textPost(bob, "Election news today")
            let filter = try await Self.add(api, ana, "election", contexts: ["home"], action: "warn")
            let page = try await api.page(.get, "/settings/filters", cookie: ana.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains("election") && page.text.contains("/api/v1/me/filters/\(filter.id)"))
            let home = try await api.page(.get, "/", cookie: ana.cookie)
            #expect(home.text.contains(#"<details class="filtered"><summary>Filtered: election</summary>"#))
            let german = try await api.page(
                .get, "/settings/filters", cookie: ana.cookie, headers: [.acceptLanguage: "de"])
            #expect(german.text.contains("Deine Filter"))
        }
    }

    @Test func aHiddenPostIsNotStreamedToThePersonWhoseFilterHidesIt() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben, eve) = try await api.register("ana", "ben", "eve")
            try await api.follow(ben, "ana")
            try await api.follow(eve, "ana")
            _ = try await Self.add(api, ben, "spoiler", contexts: ["home"], action: "hide")
            _ = try await Self.add(api, eve, "spoiler", contexts: ["home"], action: "warn")
            let bens = try await EventStreamClient.connect(port: port, token: ben.token)
            let eves = try await EventStreamClient.connect(port: port, token: eve.token)
            defer { for client in [bens, eves] { client.close() } }
            #expect(await bens.waitFor(1).map(\.event) == ["ready"])
            #expect(await eves.waitFor(1).map(\.event) == ["ready"])
            _ = try await api.textPost(ana, "A spoiler!")
            let plain = try await api.textPost(ana, "Nothing to hide")
            // Ben hears only the second; Eve, whose filter warns, both (the warning is the client's to show).
            let bensPosts = await bens.waitFor(2).dropFirst()
            #expect(try bensPosts.map { try $0.decode(Post.self).id } == [plain.id])
            #expect(await eves.waitFor(3).dropFirst().map(\.event) == ["post.created", "post.created"])
        }
    }
}
