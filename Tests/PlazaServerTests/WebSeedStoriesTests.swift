import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The web app's pieces of the seed apps' stories that a browser test would only repeat:
/// rendered pages, checked as HTML.
@Suite("Web app: seed stories")
struct WebSeedStoriesTests {
    /// The meme feed's explore: photos and videos alone, as a grid of thumbnails, which scrolls on.
    @Test func exploreHasAPhotosOnlyGrid() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            var photos: [Post] = []
            for i in 0..<3 {
                let media = try await api.uploaded(try MediaFixtures.sample(.jpeg, width: 64 + i, height: 64), as: ana)
                photos.append(
                    try await api.post(ana, CreatePostRequest(kind: .photo, body: "meme \(i)", mediaIds: [media.id])))
            }
            let text = try await api.textPost(ana, "no picture here")
            let grid = try await api.page(.get, "/explore?kind=photo&limit=2")
            #expect(grid.status == .ok)
            #expect(grid.text.contains("<div class=\"photo-grid\">"))
            #expect(grid.text.contains("aria-current=\"page\">Photos</a>"))
            for post in photos.suffix(2) {
                #expect(grid.text.contains("href=\"/p/\(post.id)\" class=\"tile\""))
                #expect(grid.text.contains(try #require(post.media.first).variants.thumbnail))
            }
            #expect(!grid.text.contains("/p/\(text.id)"))
            #expect(!grid.text.contains("/p/\(photos[0].id)"), "on the next page")
            // The next page comes as tiles, for the page's infinite scroll.
            let more = try #require(
                grid.text.range(of: #"href="([^"]+)" data-more"#, options: .regularExpression).map {
                    String(grid.text[$0].dropFirst(6).prefix { $0 != "\"" })
                })
            let next = try await api.page(.get, more.replacingOccurrences(of: "&amp;", with: "&") + "&fragment=1")
            #expect(next.text.contains("href=\"/p/\(photos[0].id)\" class=\"tile\""), "\(more): \(next.text)")
            #expect(!next.text.contains("<article"))
            // Everything is the default tab, with cards.
            let all = try await api.page(.get, "/explore")
            #expect(
                all.text.contains("aria-current=\"page\">Everything</a>") && all.text.contains("id=\"post-\(text.id)\"")
            )
        }
    }

    /// The activity tracker: a person's status ("safe", …) goes with them onto their cards and
    /// comments, in the API and the web app, and leaves them when cleared.
    @Test func aPersonsStatusShowsOnTheirCards() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let me = try await api.call(
                .patch, "/me", as: ana,
                json: UpdateMeRequest(status: .set(StatusInput(kind: "safe", text: "Home by 8"))))
            #expect(me.status == .ok)
            let post = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .activity, body: "Evening hike", activity: ActivityInput(type: "Hiking", progress: 40)))
            #expect(post.author.status?.kind == "safe", "the created post's author")
            _ = try await api.call(
                .post, "/posts/\(post.id)/comments", as: ana, json: CreateCommentRequest(body: "Halfway"))
            let feed: Page<Post> = try await api.page("/users/ana/posts", as: bea)
            #expect(feed.items.first?.author.status?.text == "Home by 8")
            let comments: Page<PlazaAPI.Comment> = try await api.page("/posts/\(post.id)/comments", as: bea)
            #expect(comments.items.first?.author.status?.kind == "safe")
            let card = try await api.page(.get, "/p/\(post.id)", cookie: bea.cookie)
            #expect(card.text.contains(#"<span class="status" data-status="safe">Safe: Home by 8</span>"#))
            #expect(card.text.components(separatedBy: "data-status=\"safe\"").count == 3, "card and comment")
            #expect(card.text.contains(#"stroke-dasharray="40 100""#), "the progress ring, drawn without a script")

            _ = try await api.call(.patch, "/me", as: ana, raw: #"{"status": null}"#)
            let cleared: Page<Post> = try await api.page("/users/ana/posts", as: bea)
            #expect(cleared.items.first?.author.status == nil)
            #expect(!(try await api.page(.get, "/p/\(post.id)", cookie: bea.cookie)).text.contains("data-status="))
        }
    }

    /// The food app's maps: a post's place and the results around a search point, pinned by
    /// their coordinates; tiles come from the configured server, which the page policy allows.
    /// With tiles off (as the browser tests run) a post's place is its card alone, and search
    /// results keep their markers, placed against each other.
    @Test(arguments: [MapSettings.openStreetMap, "off"])
    func placesAreOnAMapFromTheConfiguredTileServer(tiles: String) async throws {
        try await withApp({ $0.map.tiles = try? MapSettings.tiles(tiles) }) { api async throws in
            let ana = try await api.register("ana")
            let nata = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .text, title: "Nata",
                    location: Location(latitude: 38.7139, longitude: -9.1394, name: "Manteigaria")))
            let belem = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .text, title: "Belém", location: Location(latitude: 38.6975, longitude: -9.2063)))
            _ = try await api.textPost(ana, "nowhere")
            let page = try await api.page(.get, "/p/\(nata.id)")
            #expect(page.text.contains(#"<section class="card place-card">"#) && page.text.contains("38.7139, -9.1394"))
            let policy = page.headers[.contentSecurityPolicy] ?? ""
            if tiles == "off" {
                #expect(!page.text.contains("data-map") && !page.text.contains("OpenStreetMap"))
                #expect(policy.contains("img-src 'self' data: blob:;"))
            } else {
                #expect(page.text.contains(#"data-map data-lat="38.7139" data-lon="-9.1394" data-zoom="15""#))
                #expect(
                    page.text.contains(
                        #"<li class="marker" data-lat="38.7139" data-lon="-9.1394"><span>Manteigaria</span>"#))
                #expect(page.text.contains(#"data-tiles="https://tile.openstreetmap.org/{z}/{x}/{y}.png""#))
                #expect(page.text.contains("© OpenStreetMap contributors"))
                #expect(policy.contains("img-src 'self' data: blob: https://tile.openstreetmap.org;"))
            }
            #expect(!(try await api.page(.get, "/p/\(belem.id)")).text.contains("Manteigaria"))

            let near = try await api.page(.get, "/search?type=posts&near=38.7223,-9.1393&radiusKm=10")
            #expect(near.text.contains(#"data-map data-lat="38.7223" data-lon="-9.1393" data-zoom="10""#))
            #expect(near.text.contains(#"<li class="marker here" data-lat="38.7223" data-lon="-9.1393">"#))
            #expect(
                near.text.contains(#"data-lat="38.7139" data-lon="-9.1394"><a href="/p/\#(nata.id)">Manteigaria</a>"#))
            #expect(near.text.contains(#"data-lat="38.6975" data-lon="-9.2063"><a href="/p/\#(belem.id)">Belém</a>"#))
            #expect(!(try await api.page(.get, "/search?type=posts&q=nowhere")).text.contains("data-map"))
        }
    }

    /// The crate: a saved YouTube or Vimeo video plays in the post page, from the site's own
    /// player, which only that page's policy lets in; other pages and links frame nothing.
    @Test func aVideoLinkPlaysInItsPostPageOnly() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let video = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .link, body: "Kittens", link: LinkInput(url: "https://youtu.be/eiHXASgRTcA?t=30")))
            #expect(video.link?.embedURL == "https://www.youtube-nocookie.com/embed/eiHXASgRTcA?start=30")
            let other = try await api.post(
                ana, CreatePostRequest(kind: .link, body: "Read", link: LinkInput(url: "https://example.com/a")))
            #expect(other.link?.embedURL == nil)
            let page = try await api.page(.get, "/p/\(video.id)")
            #expect(page.text.contains(#"data-embed="https://www.youtube-nocookie.com/embed/eiHXASgRTcA?start=30""#))
            #expect(
                page.headers[.contentSecurityPolicy]?.hasSuffix(
                    "; frame-src https://www.youtube-nocookie.com https://player.vimeo.com") == true)
            let plain = try await api.page(.get, "/p/\(other.id)")
            #expect(
                !plain.text.contains("data-embed")
                    && plain.headers[.contentSecurityPolicy]?.contains("frame-src") == false)
            let feed = try await api.page(.get, "/explore")
            #expect(
                !feed.text.contains("data-embed")
                    && feed.headers[.contentSecurityPolicy]?.contains("frame-src") == false)
        }
    }

    @Test func mapSettingsTakeATileTemplateOrOff() throws {
        #expect(try MapSettings.tiles("off") == nil)
        var settings = MapSettings()
        settings.tiles = try MapSettings.tiles("http://127.0.0.1:8081/tiles/{z}/{x}/{y}.png")
        #expect(settings.origin == "http://127.0.0.1:8081")
        for bad in [
            "ftp://tiles.example/{z}/{x}/{y}", "https://tiles.example/{z}/{x}.png", "{z}/{x}/{y}",
            "https://tiles.example/{z}/{x}/{y}.png' data:", "https:///{z}/{x}/{y}",
            "https://{s}.tile.example/{z}/{x}/{y}.png", "https://{z}.tile.example/{x}/{y}.png",
            "https://tile.example/{z}/{x}/{y}/{r}.png",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try MapSettings.tiles(bad) }
        }
        #expect(MapView.zoom(showing: 10, at: 38.7) == 10)
        #expect(MapView.zoom(showing: 500, at: 0) == 5)
        #expect(MapView.zoom(showing: 0.1, at: 89.9) == 13, "the poles are clamped to 85°")
        #expect(MapView.zoom(showing: 0.01, at: 0) == 17)
    }

    /// The activity tracker: an activity may carry a photo, shown on its card.
    @Test func anActivityCardShowsItsPhoto() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg, width: 80, height: 60), as: ana)
            let post = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .activity, body: "Morning run", mediaIds: [media.id],
                    activity: ActivityInput(type: "Running", emoji: "🏃", progress: 100)))
            let page = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie)
            #expect(page.text.contains("<img src=\"\(post.media[0].variants.medium)\""))
            let compose = try await api.page(.get, "/compose?kind=activity", cookie: ana.cookie)
            #expect(compose.text.contains("data-for=\"photo activity\""))
            #expect(compose.text.contains("capture=\"environment\""), "phones open the camera")
        }
    }
}

extension WebSeedStoriesTests {
    /// Signs in through the web form (a fresh browser), optionally with `next`; the answer.
    static func signInThroughTheForm(_ api: TestAPI, _ login: String, next: String? = nil) async throws -> TestResponse
    {
        let loginPage = try await api.page(.get, "/login")
        let nonceCookie = try #require(loginPage.setCookie(WebSession.nonceCookie))
        let nonce = String(nonceCookie.dropFirst(WebSession.nonceCookie.count + 1).prefix { $0 != ";" })
        var fields = ["login": login, "password": "correct horse battery", "_csrf": try #require(loginPage.pageCSRF)]
        if let next { fields["next"] = next }
        return try await api.page(
            .post, "/login", cookie: "\(WebSession.nonceCookie)=\(nonce)", form: formEncode(fields))
    }

    /// The course Q&A: upon signing in, a student lands in the course they viewed last.
    @Test func signingInOpensTheLastCourse() async throws {
        try await withApp { api async throws in
            let (teacher, ana) = try await api.register("teacher", "ana")
            #expect(
                try await api.call(
                    .post, "/spaces", as: teacher, json: CreateSpaceRequest(slug: "cs101", name: "CS 101")
                ).status == .created)
            // No course viewed yet: home.
            #expect(try await Self.signInThroughTheForm(api, "ana").headers[.location] == "/")
            #expect(try await api.get("/spaces/cs101", as: ana).status == .ok)
            #expect(try await Self.signInThroughTheForm(api, "ana").headers[.location] == "/s/cs101")
            // A page that sent the person to sign in still wins.
            #expect(
                try await Self.signInThroughTheForm(api, "ana", next: "/collections").headers[.location]
                    == "/collections")
            // A course she may no longer open (made private, and she is no member) is not where she lands.
            #expect(
                try await api.call(
                    .patch, "/spaces/cs101", as: teacher, json: UpdateSpaceRequest(visibility: .private)
                ).status == .ok)
            #expect(try await Self.signInThroughTheForm(api, "ana").headers[.location] == "/")
            #expect(try await api.page(.get, "/spaces/last", cookie: ana.cookie).headers[.location] == "/spaces")
        }
    }
}

extension WebSeedStoriesTests {
    /// The crate: a post is saved from its page, into a collection picked or made in the same
    /// form; Saved has the same form for a pasted link.
    @Test func theSaveFormOffersMyCollectionsAndANewOne() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "worth keeping")
            let first = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie)
            #expect(first.text.contains("<input type=\"hidden\" name=\"postId\" value=\"\(post.id)\">"))
            #expect(
                first.text.contains("<label class=\"grow\" data-new-collection >"), "no collection yet: the name shows")
            #expect(try await api.call(.post, "/collections", as: ana, json: ["name": "Crate"]).status == .created)
            let again = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie)
            #expect(again.text.contains(">Crate</option>") && again.text.contains("data-new-collection hidden"))
            let saved = try await api.page(.get, "/collections", cookie: ana.cookie)
            #expect(saved.text.contains("name=\"url\" required") && saved.text.contains(">Crate</option>"))
            #expect(
                try await api.page(.get, "/p/\(post.id)").text.contains("data-save") == false, "signed out: no form")
        }
    }
}

extension WebSeedStoriesTests {
    /// A new person's home: people and spaces to follow, and the newest posts meanwhile.
    @Test func anEmptyHomeSuggestsPeopleAndSpacesAndShowsWhatIsNew() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            _ = try await api.register("dan")
            let eve = try await api.register("eve")
            #expect(
                try await api.call(.post, "/spaces", as: ben, json: CreateSpaceRequest(slug: "cs101", name: "CS 101"))
                    .status == .created)
            // Ana follows Ben; Ben follows Cat and Dan; Eve blocked Ana.
            for (who, whom) in [(ana, "ben"), (ben, "cat"), (ben, "dan")] {
                #expect(try await api.call(.put, "/users/\(whom)/follow", as: who).status == .ok)
            }
            #expect(try await api.call(.put, "/users/ana/block", as: eve).status == .ok)
            let news = try await api.textPost(eve, "eve posts lately")
            let catPost = try await api.textPost(cat, "cat posts lately")
            let suggestions = try await api.get("/me/suggestions", as: ana).decode(Suggestions.self)
            let names = suggestions.people.map(\.username)
            #expect(names.prefix(2).sorted() == ["cat", "dan"], "followed by Ben, whom Ana follows: \(names)")
            #expect(!names.contains("ana") && !names.contains("ben") && !names.contains("eve"), "\(names)")
            #expect(suggestions.spaces.map(\.slug) == ["cs101"], "Ben, whom Ana follows, is in it")
            #expect(try await api.get("/me/suggestions").status == .unauthorized)
            // Someone Ana muted is not suggested.
            #expect(try await api.call(.put, "/users/dan/mute", as: ana).status == .noContent)
            let afterMute = try await api.get("/me/suggestions", as: ana).decode(Suggestions.self)
            #expect(!afterMute.people.map(\.username).contains("dan"))

            // The page: Ana's home has Ben's nothing, so it welcomes her.
            let home = try await api.page(.get, "/", cookie: ana.cookie)
            #expect(home.text.contains("People to follow") && home.text.contains("data-follow=\"cat\""))
            #expect(home.text.contains("href=\"/s/cs101\""))
            #expect(home.text.contains("Newest on Plaza") && home.text.contains("id=\"post-\(catPost.id)\""))
            #expect(!home.text.contains("id=\"post-\(news.id)\""), "Eve blocked Ana")
            // Once the home has posts, it is the home alone, and whom to follow moves to the side.
            for i in 0..<3 { _ = try await api.textPost(ben, "ben \(i)") }
            let full = try await api.page(.get, "/", cookie: ana.cookie)
            #expect(!full.text.contains("suggestions-heading") && !full.text.contains("Newest on Plaza"))
            #expect(full.text.contains(#"id="side-people-heading""#) && full.text.contains("data-follow=\"cat\""))
        }
    }
}
