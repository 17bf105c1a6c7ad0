import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Link previews fetched from the local fixture server (loopback allow-listed), through the
/// real worker, fetcher and media pipeline.
@Suite("Link previews")
struct LinkPreviewTests {
    /// Settings that keep the slow cases quick: retries 100 ms apart. The timeout only guards
    /// against a hang, so a busy test run never turns a quick page into a timed-out attempt (hit
    /// counts are checked): with ~200 tests at once on two busy cores, a loopback fetch of the
    /// huge page took 2 s to its response head (the body, 21 chunks, 60 ms) and in one CI run
    /// more than 10. Only the slow page's test shortens it.
    static func configure(_ config: inout PlazaConfig) {
        config.linkPreviews.allowed = AddressPolicy(allowing: [IPBlock("127.0.0.0/8")!])
        config.linkPreviews.timeout = .seconds(60)
        config.linkPreviews.retryDelay = .milliseconds(100)
        config.linkPreviews.pollInterval = .milliseconds(50)
        config.linkPreviews.attempts = 3
    }

    /// Saves `url` into a new collection of `account` and waits until its preview is no longer pending.
    static func savedLink(_ api: TestAPI, _ account: Account, _ url: String) async throws -> CollectionItem {
        let collection = try await api.call(.post, "/collections", as: account, json: CollectionRequest(name: "Links"))
            .decode(SavedCollection.self)
        let saved = try await api.call(
            .post, "/collections/\(collection.id)/items", as: account,
            json: SaveItemRequest(url: url, note: "read later"))
        #expect(saved.status == .created, "save: \(saved.text)")
        var item = try saved.decode(CollectionItem.self)
        let deadline = ContinuousClock.now + .seconds(30)
        while item.state == .pending, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            item = try await api.get("/collections/\(collection.id)/items", as: account).decode(
                Page<CollectionItem>.self
            ).items[0]
        }
        return item
    }

    @Test(
        arguments: [
            ("instagram", "Plaza Team on Instagram: \"Sunset over the harbour 🌅\"", "Instagram", true),
            ("youtube", "Building Plaza in Swift", "YouTube", true),
            ("tiktok", "Tea & toast at dawn 🎵", "TikTok", true),
            ("tumblr", "Why we built Plaza", "Tumblr", true),
            ("titleonly", "Plaza — Release notes", nil, false),
            ("latin1", "Café Plaza · Menü", nil, false),
            ("bare", nil, nil, false),
        ] as [(String, String?, String?, Bool)])
    func previewsFromFixturePages(page: String, title: String?, siteName: String?, image: Bool) async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, "\(base)/page/\(page)")
                #expect(item.state == .ready, "\(page): \(item)")
                #expect(item.link?.title == title)
                #expect(item.note == "read later")
                // Without a site name of its own, the preview shows the domain.
                #expect(item.link?.siteName == (siteName ?? "127.0.0.1"))
                #expect(item.link?.fetchedAt != nil)
                if image {
                    let url = try #require(item.link?.imageURL)
                    #expect(
                        url.hasPrefix("/media/") && url.contains("/medium?k="),
                        "a processed copy, not the remote URL: \(url)")
                    let served = try await api.fetch(url)
                    #expect(served.status == .ok && served.headers[.contentType]?.hasPrefix("image/") == true)
                } else {
                    #expect(item.link?.imageURL == nil)
                }
            }
        }
    }

    /// The big sites whose pages say little to a server are previewed from their oEmbed
    /// endpoints, known by the link's host and path (served here from loopback with the sites'
    /// recorded answers; their pages, on the sites' real hosts, are never fetched in tests).
    @Test(
        arguments: [
            (
                "https://m.youtube.com/watch?v=eiHXASgRTcA&t=1m5s", "YouTube",
                "https://www.youtube.com/watch?v=eiHXASgRTcA", "Noisy kittens waiting for dinner!", "YouTube", true,
                nil
            ),
            (
                "https://vimeo.com/235352744", "Vimeo", "https://vimeo.com/235352744", "Vimeo Live is here", "Vimeo",
                true, nil
            ),
            (
                "https://www.instagram.com/natgeo/p/CARbvuYDm3Q/?igsh=x", "Instagram",
                "https://www.instagram.com/p/CARbvuYDm3Q/", "natgeo", "Instagram", true, nil
            ),
            (
                "https://www.tiktok.com/@a3noticias/video/6806030056956251397?lang=es", "TikTok",
                "https://www.tiktok.com/@a3noticias/video/6806030056956251397",
                "Nuestro #AplausoSanitario más sincero. Para todos. Y recuerda, #QuédateEnCasa", "TikTok", true, nil
            ),
            (
                "https://www.tumblr.com/he-who-photographs-rather-ok/165326273724/a-slug", "Tumblr",
                "https://he-who-photographs-rather-ok.tumblr.com/post/165326273724", "He-who-photographs-rather-OK",
                "Tumblr", false, nil
            ),
            (
                "https://x.com/pepephone/status/436461658601713664?s=20", "X",
                "https://twitter.com/pepephone/status/436461658601713664", "Pepephone", "Twitter", false,
                "RT @PabloHerreros Pepephone rompe la baraja - http://t.co/mFn7mcB1vy — Pepephone (@pepephone) February 20, 2014"
            ),
            (
                "https://old.reddit.com/r/investing/comments/7pfpeq/buffett_on_cyrptocurrencies_i_can_say_almost_with/",
                "Reddit", "https://www.reddit.com/r/investing/comments/7pfpeq/",
                "Buffett on cyrptocurrencies: 'I can say almost with certainty that they will come to a bad ending'",
                "reddit", false, nil
            ),
        ] as [(String, String, String, String, String, Bool, String?)])
    func knownSitesArePreviewedFromTheirOEmbedEndpoints(
        link: String, site: String, asked: String, title: String, siteName: String, image: Bool, description: String?
    ) async throws {
        try await FixtureServer.run { base, _ in
            try await withApp({
                Self.configure(&$0)
                $0.linkPreviews.oEmbedEndpoints = FixtureServer.knownEndpoints(base)
            }) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, link)
                #expect(FixtureServer.asked.withLockedValue { $0[site.lowercased()] } == asked)
                #expect(item.state == .ready, "\(site): \(item)")
                #expect(item.link?.title == title)
                #expect(item.link?.siteName == siteName)
                #expect(item.link?.description == description)
                #expect(
                    (item.link?.imageURL?.hasPrefix("/media/") ?? false) == image, "\(item.link?.imageURL ?? "none")")
            }
        }
    }

    @Test func linksToOtherPagesOfTheKnownSitesAreNotAskedAbout() {
        for link in [
            "https://www.youtube.com/", "https://www.youtube.com/@smshdchrb", "https://youtu.be/short",
            "https://vimeo.com/about", "https://www.instagram.com/natgeo/", "https://www.tiktok.com/@a3noticias",
            "https://www.tiktok.com/@a3/video/12ab", "https://www.tumblr.com/dashboard", "https://x.com/pepephone",
            "https://x.com/i/../status/1", "https://www.reddit.com/r/investing/",
            "https://evil.example/watch?v=eiHXASgRTcA",
            "https://www.youtube.com.evil.example/watch?v=eiHXASgRTcA", "ftp://www.youtube.com/watch?v=eiHXASgRTcA",
            "https://x.com/pepe%2Fphone/status/1", "https://notreddit.com/r/a/comments/b/",
        ] {
            #expect(OEmbedProvider.request(for: link) == nil, "\(link)")
        }
        let youtube = OEmbedProvider.request(for: "https://youtu.be/eiHXASgRTcA?si=abc")
        #expect(youtube?.provider.name == "YouTube")
        #expect(
            youtube?.url
                == "https://www.youtube.com/oembed?format=json&url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DeiHXASgRTcA"
        )
    }

    /// YouTube and Vimeo videos play in the page, from the sites' own players only.
    @Test func videoLinksHaveAPlayerOnTheSitesOwnDomains() {
        let players: [(String, String?)] = [
            ("https://www.youtube.com/watch?v=eiHXASgRTcA", "https://www.youtube-nocookie.com/embed/eiHXASgRTcA"),
            ("https://youtu.be/eiHXASgRTcA?t=76", "https://www.youtube-nocookie.com/embed/eiHXASgRTcA?start=76"),
            (
                "https://m.youtube.com/watch?v=eiHXASgRTcA&t=1m16s",
                "https://www.youtube-nocookie.com/embed/eiHXASgRTcA?start=76"
            ),
            ("https://www.youtube.com/shorts/eiHXASgRTcA", "https://www.youtube-nocookie.com/embed/eiHXASgRTcA"),
            ("https://www.youtube.com/watch?v=eiHXASgRTc", nil),
            ("https://www.youtube.com/watch?v=eiHXASgRTcA%22%3E", nil),
            ("https://www.youtube.com/watch?v=eiHXASg\"TcA", nil),
            ("https://www.youtube.com/playlist?list=PL4qTakKkQATKOyZPJG_cAMnRtF7fAIdST", nil),
            ("https://vimeo.com/235352744", "https://player.vimeo.com/video/235352744"),
            ("https://vimeo.com/814385915/06fc1c0a52", "https://player.vimeo.com/video/814385915?h=06fc1c0a52"),
            (
                "https://player.vimeo.com/video/814385915?h=06fc1c0a52",
                "https://player.vimeo.com/video/814385915?h=06fc1c0a52"
            ),
            ("https://vimeo.com/channels/staffpicks/235352744", "https://player.vimeo.com/video/235352744"),
            ("https://vimeo.com/235352744/a%22b", nil),
            ("https://vimeo.evil.example/235352744", nil),
            ("javascript:alert(1)//youtu.be/eiHXASgRTcA", nil),
            ("https://youtu.be/eiHXASgRTcA/extra", nil),
        ]
        for (link, player) in players {
            #expect(VideoEmbed.playerURL(for: link) == player, "\(link)")
        }
        #expect(LinkPreview(url: "https://vimeo.com/235352744").embedURL == "https://player.vimeo.com/video/235352744")
        #expect(
            VideoEmbed.seconds("1h2m3s") == 3723 && VideoEmbed.seconds("m") == nil
                && VideoEmbed.seconds("99999999") == nil)
    }

    @Test func linkPostsGetTheirPreviewAndLaterSavesReuseIt() async throws {
        try await FixtureServer.run { base, hits in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let url = "\(base)/page/youtube"
                let post = try await api.post(
                    ana, CreatePostRequest(kind: .link, body: "Watch this", link: LinkInput(url: url)))
                #expect(post.link?.url == url && post.link?.fetchedAt == nil)
                var shown = post
                let deadline = ContinuousClock.now + .seconds(30)
                while shown.link?.fetchedAt == nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                    shown = try await api.get("/posts/\(post.id)").decode(Post.self)
                }
                #expect(shown.link?.title == "Building Plaza in Swift" && shown.link?.siteName == "YouTube")
                #expect(shown.link?.imageURL?.hasPrefix("/media/") == true)
                #expect(
                    try await api.page("/me/media", as: ana, of: Media.self).items.isEmpty,
                    "a preview's image is not one of Ana's uploads")
                // Known and fresh: copied at once, not fetched again.
                let collection = try await api.call(
                    .post, "/collections", as: ana, json: CollectionRequest(name: "Videos")
                ).decode(SavedCollection.self)
                let item = try await api.call(
                    .post, "/collections/\(collection.id)/items", as: ana, json: SaveItemRequest(url: url)
                ).decode(CollectionItem.self)
                #expect(item.state == .ready && item.link?.title == "Building Plaza in Swift")
                #expect(hits.count("/page/youtube") == 1)
            }
        }
    }

    @Test(arguments: ["/redirect/private", "/redirect/metadata"])
    func redirectsToPrivateAddressesAreRefused(path: String) async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + path)
                #expect(item.state == .failed)
                #expect(
                    item.link?.title == nil && item.link?.siteName == "127.0.0.1" && item.link?.url == base + path,
                    "the clean fallback")
                let status = try #require(
                    try await api.withDatabase { try await LinkPreviewStore(db: $0).status(base + path) })
                #expect(status.state == "failed" && status.attempts == 1, "refusals are not retried")
                #expect(status.error?.contains("refused") == true, "\(status.error ?? "")")
            }
        }
    }

    @Test func aSlowPageTimesOutAndIsRetriedThenFallsBack() async throws {
        try await FixtureServer.run { base, hits in
            try await withApp({
                Self.configure(&$0)
                $0.linkPreviews.timeout = .seconds(2)
            }) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + "/slow")
                // The 4 s page would have loaded had the 2 s timeout not cut each attempt: it
                // failed, three times, timed out.
                #expect(item.state == .failed && item.link?.siteName == "127.0.0.1")
                #expect(hits.count("/slow") == 3)
                let status = try await api.withDatabase { try await LinkPreviewStore(db: $0).status(base + "/slow") }
                #expect(status?.error?.contains("timed out") == true)
            }
        }
    }

    @Test func aHugePageIsCutOffAtTheCap() async throws {
        try await FixtureServer.run { base, _ in
            var fetcher = SafeFetcher(policy: try AddressPolicy.parse(allowList: "127.0.0.1"))
            fetcher.timeout = .seconds(60)  // a hang guard: the cap is the behaviour under test, not the time
            let page = try await fetcher.fetch(base + "/huge", maxBytes: 1_048_576, accept: "text/html")
            #expect(page.truncated && page.body.count == 1_048_576)
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + "/huge")
                #expect(
                    item.state == .ready && item.link?.title == "A huge page",
                    "what came before the cap, nothing after it")
                #expect(item.link?.description == "Big")
            }
        }
    }

    @Test func aFlakyPageIsRetriedWithBackoff() async throws {
        try await FixtureServer.run { base, hits in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + "/flaky")
                #expect(item.state == .ready && item.link?.title == "Second time lucky")
                #expect(hits.count("/flaky") == 2)
            }
        }
    }

    /// An image that fails for a moment retries the preview: it is not kept without its image for good.
    @Test func aFlakyImageIsRetriedWithItsPreview() async throws {
        try await FixtureServer.run { base, hits in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + "/flaky-image")
                #expect(item.state == .ready && item.link?.title == "Its image comes second")
                #expect(item.link?.imageURL?.hasPrefix("/media/") == true)
                #expect(hits.count("/flaky.png") == 2)
            }
        }
    }

    @Test(arguments: ["/gone", "/picture.png", "/redirect/loop"])
    func pagesThatGiveNoPreviewFallBackAtOnce(path: String) async throws {
        try await FixtureServer.run { base, hits in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + path)
                #expect(item.state == .failed && item.link?.siteName == "127.0.0.1" && item.link?.title == nil)
                if path == "/redirect/loop" { #expect(hits.count(path) == 4, "the first request and three redirects") }
            }
        }
    }

    @Test func aRedirectWithinTheAllowListIsFollowed() async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(Self.configure) { api async throws in
                let ana = try await api.register("ana")
                let item = try await Self.savedLink(api, ana, base + "/redirect/ok")
                #expect(item.state == .ready && item.link?.title == "Plaza — Release notes")
                #expect(item.link?.url == base + "/redirect/ok", "the item keeps the URL that was saved")
            }
        }
    }

    @Test func withoutPublicAddressesOnlyTheAllowListIsFetchedAndNoNameIsLookedUp() async throws {
        let closed = SafeFetcher(policy: try AddressPolicy.parse(allowList: "127.0.0.0/8"), publicAddresses: false)
        #expect(try await closed.checkedAddress(host: "127.0.0.1") == IPAddress("127.0.0.1"))
        #expect(try await closed.checkedAddress(host: "localhost") == IPAddress("127.0.0.1"))
        for host in ["8.8.8.8", "example.com", "2606:4700::1111"] {
            await #expect(throws: SafeFetcher.Failure.self, "\(host)") {
                _ = try await closed.checkedAddress(host: host)
            }
        }
    }

    /// Refusals happen on the resolved address, before any connection: none of these hosts is
    /// ever contacted.
    @Test(arguments: [
        "localhost", "127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "0x7f.1", "2130706433", "[fd00:ec2::254]",
        "192.168.0.1",
    ])
    func privateHostsAreRefusedWithoutAnAllowList(host: String) async throws {
        var fetcher = SafeFetcher(policy: AddressPolicy())
        // A refusal comes at once; the deadline must not stand in for it under a busy suite
        // (a minute was not enough when the suite's other tests kept both cores' tasks busy).
        fetcher.timeout = .seconds(3600)
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        await #expect(throws: SafeFetcher.Failure.self) { _ = try await fetcher.checkedAddress(host: bare) }
        do {
            _ = try await fetcher.fetch(
                "http://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)/", maxBytes: 10,
                accept: "*/*")
            Issue.record("\(host) was fetched")
        } catch let failure as SafeFetcher.Failure {
            guard case .refused = failure else {
                Issue.record("\(host): \(failure)")
                return
            }
        }
    }
}
