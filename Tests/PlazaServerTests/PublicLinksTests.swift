import Foundation
import HTTPTypes
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// Every link Plaza hands out opens a page of the web app.
@Suite("Public links")
struct PublicLinksTests {
    /// The web app's answer to `url`, one of this app's public links, for `cookie`'s person.
    static func open(_ url: String, _ api: TestAPI, cookie: String? = nil) async throws -> TestResponse {
        let base = api.config.baseURL
        #expect(url.hasPrefix(base + "/"), "\(url) is at the public URL \(base)")
        let path = url.dropFirst(base.count).prefix { $0 != "#" }
        return try await api.page(.get, String(path), cookie: cookie)
    }

    /// Opens `url` and expects the page: 200, HTML.
    static func expectPage(_ url: String?, _ api: TestAPI, cookie: String? = nil) async throws {
        let url = try #require(url)
        let page = try await open(url, api, cookie: cookie)
        #expect(page.status == .ok, "\(url): \(page.status)")
        #expect(page.headers[.contentType]?.hasPrefix("text/html") == true, "\(url)")
    }

    /// The accounts and statuses of `token`'s person's notifications (a like, a reply as a mention,
    /// a follow), plain and grouped, open their pages.
    static func expectNotificationLinksOpen(_ api: TestAPI, token: String) async throws {
        let notifications = try await api.mastodon(.get, "/api/v1/notifications", token: token).json().array
        #expect(Set(notifications.compactMap { $0["type"]?.stringValue }) == ["favourite", "mention", "follow"])
        for notification in notifications {
            try await expectPage(notification["account"]?["url"]?.stringValue, api)
            if let url = notification["status"]?["url"]?.stringValue { try await expectPage(url, api) }
        }
        let grouped = try await api.mastodon(.get, "/api/v2/notifications", token: token).json()
        for entity in (grouped["accounts"]?.array ?? []) + (grouped["statuses"]?.array ?? []) {
            try await expectPage(entity["url"]?.stringValue, api)
        }
    }

    @Test func everyMastodonURLOpensItsPage() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let anaToken = try await api.mastodonToken(ana)
            let beaToken = try await api.mastodonToken(bea)
            let base = api.config.baseURL
            // setup: a public status with a tag, bea's reply, like and follow
            let status = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken, form: [("status", "Ramen tonight #noodles")]
            ).json()
            let statusID = try #require(status["id"]?.stringValue)
            let reply = try await api.mastodon(
                .post, "/api/v1/statuses", token: beaToken,
                form: [("status", "Save me a bowl"), ("in_reply_to_id", statusID)]
            ).json()
            let commentID = try #require(reply["id"]?.stringValue)
            _ = try await api.mastodon(.post, "/api/v1/statuses/\(statusID)/favourite", token: beaToken)
            _ = try await api.mastodon(.post, "/api/v1/accounts/\(ana.id)/follow", token: beaToken)

            // validate: the shapes Mastodon gives, at the public URL
            let account = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)", token: beaToken).json()
            #expect(account["url"]?.stringValue == "\(base)/@ana")
            #expect(account["uri"]?.stringValue == "\(base)/@ana")
            #expect(status["url"]?.stringValue == "\(base)/@ana/\(statusID)")
            #expect(status["uri"]?.stringValue == "\(base)/@ana/\(statusID)")
            #expect(reply["url"]?.stringValue == "\(base)/@ana/\(statusID)#c-\(commentID)")
            #expect(reply["account"]?["url"]?.stringValue == "\(base)/@bea")

            // validate: each opens, signed out
            try await Self.expectPage(account["url"]?.stringValue, api)
            try await Self.expectPage(status["url"]?.stringValue, api)
            try await Self.expectPage(status["account"]?["url"]?.stringValue, api)
            try await Self.expectPage(status["tags"]?.array.first?["url"]?.stringValue, api)
            try await Self.expectPage(reply["url"]?.stringValue, api)
            let thread = try await Self.open(try #require(reply["url"]?.stringValue), api)
            #expect(thread.text.contains("id=\"c-\(commentID)\""), "the fragment names the comment's anchor")
            let context = try await api.mastodon(.get, "/api/v1/statuses/\(statusID)/context", token: beaToken).json()
            try await Self.expectPage(context["descendants"]?.array.first?["url"]?.stringValue, api)

            try await Self.expectNotificationLinksOpen(api, token: anaToken)

            // validate: a link read back is its status, in any of its forms
            for url in [
                "\(base)/@ana/\(statusID)", "\(base)/p/\(statusID)", "\(base)/posts/\(statusID)",
                "\(base)/@ana/\(statusID)#c-\(commentID)",
            ] {
                let found = try await api.mastodon(
                    .get, "/api/v2/search?q=\(PublicLinks.queryValue(url))", token: beaToken
                ).json()
                #expect(found["statuses"]?.array.compactMap { $0["id"]?.stringValue } == [statusID], "\(url)")
            }
        }
    }

    @Test func aFollowersOnlyStatusOpensOnlyForItsReaders() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            try await api.follow(bea, "ana")
            let anaToken = try await api.mastodonToken(ana)
            // setup
            let status = try await api.mastodon(
                .post, "/api/v1/statuses", token: anaToken,
                form: [("status", "Followers only: the secret ramen place"), ("visibility", "private")]
            ).json()
            #expect(status["visibility"]?.stringValue == "private")
            let url = try #require(status["url"]?.stringValue)
            // MUT + validate: the author and a follower read it; anyone else finds no such page
            try await Self.expectPage(url, api, cookie: ana.cookie)
            try await Self.expectPage(url, api, cookie: bea.cookie)
            for cookie in [nil, cat.cookie] {
                let page = try await Self.open(url, api, cookie: cookie)
                #expect(page.status == .notFound)
                #expect(!page.text.contains("secret ramen"), "nothing of the post leaks")
            }
        }
    }

    @Test func handlePagesAreTheSamePagesAndShadowNoOther() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let post = try await api.textPost(ana, "A bowl of ramen", title: "Ramen")
            #expect(
                try await api.call(
                    .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "noodles", name: "Noodles")
                )
                .status == .created)
            // validate: /@ pages are the /u/ and /p/ pages
            for (handle, short) in [
                ("/@ana", "/u/ana"), ("/@ana/followers", "/u/ana/followers"), ("/@ana/following", "/u/ana/following"),
                ("/@ana/friends", "/u/ana/friends"), ("/@ana/\(post.id)", "/p/\(post.id)"),
                ("/@ANA/\(post.id)", "/p/\(post.id)"),
            ] {
                let page = try await api.page(.get, handle, cookie: bea.cookie)
                let same = try await api.page(.get, short, cookie: bea.cookie)
                #expect(page.status == .ok, "\(handle)")
                #expect(Self.title(page.text) == Self.title(same.text), "\(handle) is \(short)")
            }
            // validate: a post under another name, no one, or no post is not found (as Mastodon answers)
            for path in ["/@bea/\(post.id)", "/@nobody", "/@nobody/\(post.id)", "/@ana/123", "/@ana/ramen", "/@"] {
                #expect(try await api.page(.get, path).status == .notFound, "\(path)")
            }
            // validate: links handed out before these pages go on to the post
            let old = try await api.page(.get, "/posts/\(post.id)")
            #expect(old.status == .movedPermanently)
            #expect(old.headers[.location] == "/p/\(post.id)")
            #expect(try await api.page(.get, "/posts/ramen").status == .notFound)
            // validate: the other pages and routes are theirs still
            for path in ["/login", "/signup", "/search", "/search?q=ramen", "/s/noodles", "/explore", "/spaces", "/"] {
                let page = try await api.page(.get, path)
                #expect(page.status == .ok, "\(path)")
                #expect(page.headers[.contentType]?.hasPrefix("text/html") == true, "\(path)")
            }
            #expect(try await api.page(.get, "/healthz").status == .ok)
            #expect(try await api.get("/users/ana").status == .ok)
            #expect(try await api.page(.get, "/settings").status == .seeOther, "signed-in pages still send to sign in")
        }
    }

    static func title(_ html: String) -> String? {
        guard let start = html.range(of: "<title>"), let end = html.range(of: "</title>") else { return nil }
        return String(html[start.upperBound..<end.lowerBound])
    }

    @Test func linksAreBuiltAtTheBaseAndReadBack() {
        let links = PublicLinks(base: "https://plaza.example/")
        #expect(links.person("ana") == "https://plaza.example/@ana")
        #expect(links.post(id: "12", author: "ana") == "https://plaza.example/@ana/12")
        #expect(links.comment(id: "13", postID: "12", postAuthor: "ana") == "https://plaza.example/@ana/12#c-13")
        #expect(links.tag("ramen") == "https://plaza.example/tags/ramen")
        #expect(links.absolute("/media/1.jpg") == "https://plaza.example/media/1.jpg")
        #expect(links.absolute("https://elsewhere.example/a") == "https://elsewhere.example/a")
        #expect(PublicLinks.paths.postPage("12") == "/p/12")
        #expect(PublicLinks.paths.profilePage("ana") == "/u/ana")
        #expect(PublicLinks.paths.commentPage("13", postID: "12") == "/p/12#c-13")
        #expect(PublicLinks(base: "").invite("abc") == "/join/abc")
        for (url, id) in [
            ("https://plaza.example/@ana/12", Int64(12)), ("https://plaza.example/p/12?x=1", 12),
            ("https://plaza.example/posts/12#comment-3", 12), ("https://plaza.example/@ana/12#c-13", 12),
        ] {
            #expect(links.postID(in: url) == id, "\(url)")
        }
        for url in [
            "https://plaza.example/@/12", "https://plaza.example/u/12", "https://plaza.example/@ana/12/likes",
            "https://plaza.example/@ana/-12", "https://plaza.example/@ana/99999999999999999999",
            "https://other.example/@ana/12", "https://plaza.example.evil/@ana/12", "ramen", "",
        ] {
            #expect(links.postID(in: url) == nil, "\(url)")
        }
        #expect(PublicLinks.paths.postID(in: "/p/12") == nil, "bare paths are not links to read back")
    }
}
