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
        config.linkPreviews.allowList = "127.0.0.0/8"
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
        // A refusal comes at once; the deadline must not stand in for it under a busy suite.
        fetcher.timeout = .seconds(60)
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
