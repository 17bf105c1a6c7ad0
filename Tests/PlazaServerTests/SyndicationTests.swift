import Foundation
import HTTPTypes
import Testing

@testable import PlazaAPI
@testable import PlazaServer

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An element of a parsed document: what the tests read feeds back with (Foundation's parser).
final class ParsedXML {
    let name: String
    let attributes: [String: String]
    var text = ""
    var children: [ParsedXML] = []

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    /// The children named `name`.
    func all(_ name: String) -> [ParsedXML] { children.filter { $0.name == name } }
    func first(_ name: String) -> ParsedXML? { children.first { $0.name == name } }
    func value(_ name: String) -> String? { first(name)?.text }

    /// `bytes` as a tree, or nil when Foundation's parser finds them not well-formed.
    static func parse(_ bytes: [UInt8]) -> ParsedXML? {
        let builder = Builder()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = builder
        guard parser.parse() else { return nil }
        return builder.root.children.first
    }

    private final class Builder: NSObject, XMLParserDelegate {
        let root = ParsedXML(name: "", attributes: [:])
        lazy var stack = [root]

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String]
        ) {
            let node = ParsedXML(name: name, attributes: attributes)
            stack.last?.children.append(node)
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { stack.last?.text += string }
    }
}

@Suite("Feeds to subscribe: RSS and Atom")
struct SyndicationTests {
    static let base = "https://plaza.example"

    /// An app whose public URL is `base`, so that the feeds' links can be checked whole.
    func withFeedsApp(_ body: @Sendable (TestAPI) async throws -> Void) async throws {
        try await withApp({ $0.publicURL = Self.base }, body)
    }

    /// The feed at `path`, parsed; a failed expectation when it is not a well-formed 200.
    func feed(_ api: TestAPI, _ path: String) async throws -> ParsedXML {
        let response = try await api.fetch(path)
        #expect(response.status == .ok, "\(path): \(response.text)")
        let type = path.hasSuffix(".rss") ? "application/rss+xml" : "application/atom+xml"
        #expect(response.headers[.contentType] == "\(type); charset=utf-8")
        return try #require(ParsedXML.parse(Array(response.body.readableBytesView)), "\(path): \(response.text)")
    }

    /// The items' links of an RSS channel, newest first.
    func rssLinks(_ rss: ParsedXML) -> [String] {
        rss.first("channel")?.all("item").compactMap { $0.value("link") } ?? []
    }

    func atomLinks(_ atom: ParsedXML) -> [String] { atom.all("entry").compactMap { $0.value("id") } }

    func postURL(_ post: Post) -> String { "\(Self.base)/@\(post.author.username)/\(post.id)" }

    func suspend(_ api: TestAPI, _ username: String) async throws {
        try await api.withDatabase { db in
            try await db.write { conn in
                try await conn.exec("UPDATE users SET suspended_at = 1 WHERE username = \(bind: username)")
            }
        }
    }

    @Test func aPersonsFeedsHoldTheirPublicPostsWithPhotosAsEnclosures() async throws {
        try await withFeedsApp { api in
            let (ana, bob) = try await api.register("ana", "bob")
            let hello = try await api.textPost(ana, "Hello there\nsecond line", title: nil)
            _ = try await api.post(ana, CreatePostRequest(kind: .text, body: "friends only", audience: .followers))
            let image = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let photo = try await api.post(ana, CreatePostRequest(kind: .photo, mediaIds: [image.id]))
            _ = try await api.textPost(bob, "bob's own")
            // MUT
            let rss = try await feed(api, "/@ana.rss")
            let atom = try await feed(api, "/@ana.atom")
            // validate
            #expect(rssLinks(rss) == [postURL(photo), postURL(hello)])
            #expect(atomLinks(atom) == [postURL(photo), postURL(hello)])
            let channel = try #require(rss.first("channel"))
            #expect(channel.value("title") == "Posts by ana (@ana)")
            #expect(channel.value("link") == "\(Self.base)/@ana")
            #expect(channel.first("link", ofNamespace: "atom")?.attributes["href"] == "\(Self.base)/@ana.rss")
            let items = channel.all("item")
            #expect(items.map { $0.value("title") } == ["Photo by @ana", "Hello there"])
            #expect(items[1].value("guid") == postURL(hello))
            #expect(items[1].value("pubDate") == SubscriptionFeed.rfc822(hello.createdAt))
            let enclosure = try #require(items[0].first("enclosure"))
            #expect(enclosure.attributes["url"]?.hasPrefix("\(Self.base)/media/\(image.id)/original") == true)
            #expect(enclosure.attributes["type"] == "image/jpeg" && enclosure.attributes["length"] == "0")
            #expect(items[0].value("description")?.contains("<img src=\"\(Self.base)/media/") == true)
            let entry = try #require(atom.all("entry").first)
            #expect(entry.value("published") == photo.createdAt.description)
            #expect(entry.first("author")?.value("uri") == "\(Self.base)/@ana")
            let links = entry.all("link").filter { $0.attributes["rel"] == "enclosure" }
            #expect(links.count == 1 && links[0].attributes["type"] == "image/jpeg")
            #expect(atom.value("id") == "\(Self.base)/@ana.atom")
        }
    }

    @Test func aSpacesFeedsHoldItsPublicPostsAndClosedSpacesHaveNone() async throws {
        try await withFeedsApp { api in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            for (slug, visibility) in [("ramen", SpaceVisibility.open), ("club", .closed), ("den", .private)] {
                let response = try await api.call(
                    .post, "/spaces", as: ana,
                    json: CreateSpaceRequest(slug: slug, name: "Space \(slug)", visibility: visibility))
                #expect(response.status == .created, "\(response.text)")
            }
            for member in [bob, cat] {
                #expect(try await api.call(.put, "/spaces/ramen/membership", as: member).status == .ok)
            }
            let open = try await api.post(ana, CreatePostRequest(kind: .text, body: "broth", spaces: ["ramen"]))
            _ = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "members", spaces: ["ramen"], audience: .members))
            _ = try await api.post(bob, CreatePostRequest(kind: .text, body: "suspended soon", spaces: ["ramen"]))
            let cats = try await api.post(cat, CreatePostRequest(kind: .text, body: "noodles", spaces: ["ramen"]))
            try await suspend(api, "bob")
            #expect(rssLinks(try await feed(api, "/s/ramen.rss")) == [postURL(cats), postURL(open)])
            let atom = try await feed(api, "/s/ramen.atom")
            #expect(atomLinks(atom) == [postURL(cats), postURL(open)])
            #expect(atom.value("title")?.hasPrefix("Space ramen") == true)
            for path in ["/s/club.rss", "/s/club.atom", "/s/den.rss", "/s/nowhere.atom", "/@nobody.rss", "/@bob.rss"] {
                #expect(try await api.fetch(path).status == .notFound, "\(path)")
            }
            // Bob's posts are gone with him; Ana's profile page still answers as a page.
            #expect(try await api.fetch("/@ana").status == .ok)
        }
    }

    @Test func aTagsFeedsHoldItsPublicPostsWithTheirWarnings() async throws {
        try await withFeedsApp { api in
            let (ana, bob) = try await api.register("ana", "bob")
            let first = try await api.textPost(ana, "Slurp #Ramen")
            _ = try await api.post(bob, CreatePostRequest(kind: .text, body: "#ramen friends", audience: .followers))
            let warned = try await api.post(
                bob, CreatePostRequest(kind: .text, body: "The end of the film #ramen", contentWarning: "spoilers"))
            let rss = try await feed(api, "/tags/RAMEN.rss")
            #expect(rssLinks(rss) == [postURL(warned), postURL(first)])
            let item = try #require(rss.first("channel")?.all("item").first)
            #expect(item.value("title") == "⚠️ spoilers")
            #expect(item.value("description")?.contains("<strong>⚠️ spoilers</strong>") == true)
            #expect(atomLinks(try await feed(api, "/tags/%E6%9D%B1%E4%BA%AC.atom")).isEmpty)
            #expect(try await api.fetch("/tags/1234.rss").status == .notFound)
            let page = try await api.fetch("/tags/ramen")
            #expect(page.text.contains(#"<link rel="alternate" type="application/rss+xml""#))
            #expect(page.text.contains(#"href="/tags/Ramen.atom""#))
        }
    }

    @Test func anETagAnswersA304UntilTheFeedChanges() async throws {
        try await withFeedsApp { api in
            let ana = try await api.register("ana")
            _ = try await api.textPost(ana, "first")
            let first = try await api.fetch("/@ana.rss")
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
            #expect(first.headers[.cacheControl]?.hasPrefix("public, max-age=") == true)
            // MUT
            for match in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let again = try await api.fetch("/@ana.rss", headers: [.ifNoneMatch: match])
                #expect(again.status == .notModified, "\(match)")
                #expect(again.body.readableBytes == 0)
                #expect(again.headers[.eTag] == etag)
            }
            #expect(try await api.fetch("/@ana.rss", headers: [.ifNoneMatch: "\"stale\""]).status == .ok)
            _ = try await api.textPost(ana, "second")
            // validate
            let changed = try await api.fetch("/@ana.rss", headers: [.ifNoneMatch: etag])
            #expect(changed.status == .ok && changed.headers[.eTag] != etag)
            #expect(try await api.fetch("/@ana.atom").headers[.eTag] != changed.headers[.eTag])
        }
    }

    @Test func hostileTextStaysWellFormed() async throws {
        try await withFeedsApp { api in
            let hostile = "<script>alert('x')</script> & \"q\" ]]> \u{1}\u{8}\u{B} done 😀 مرحبا بالعالم\r\nend"
            let response = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(
                    username: "ana", email: "ana@example.com", password: "correct horse battery",
                    displayName: "Ana ]]> <b>&amp;</b>"))
            let ana = Account(
                token: try response.decode(AuthResponse.self).token, me: try response.decode(AuthResponse.self).user,
                password: "correct horse battery")
            let post = try await api.post(ana, CreatePostRequest(kind: .text, title: "T <i>&</i> ]]>", body: hostile))
            _ = try await api.post(ana, CreatePostRequest(kind: .text, body: hostile))
            // The API keeps the control character: it is the feed that must leave it out.
            #expect(post.body?.unicodeScalars.contains("\u{1}") == true)
            for path in ["/@ana.rss", "/@ana.atom"] {
                // MUT
                let xml = try await feed(api, path)
                // validate
                let items = xml.first("channel")?.all("item") ?? xml.all("entry")
                #expect(items.count == 2)
                let html = items[1].value("description") ?? items[1].value("content") ?? ""
                #expect(items[1].value("title") == "T <i>&</i> ]]>")
                #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot; ]]&gt;"))
                #expect(html.contains("😀 مرحبا بالعالم") && !html.contains("\u{1}") && !html.contains("<script"))
                #expect(items[0].value("title")?.hasPrefix("<script>alert('x')</script> & \"q\" ]]>") == true)
            }
        }
    }

    @Test func profileAndOpenSpacePagesLinkTheirFeeds() async throws {
        try await withFeedsApp { api in
            let ana = try await api.register("ana")
            for (slug, visibility) in [("ramen", SpaceVisibility.open), ("club", .closed)] {
                _ = try await api.call(
                    .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: slug, name: slug, visibility: visibility))
            }
            let rss =
                #"<link rel="alternate" type="application/rss+xml" title="RSS feed of ana (@ana)" href="/@ana.rss">"#
            #expect(try await api.page(.get, "/@ana").text.contains(rss))
            #expect(try await api.page(.get, "/u/ana").text.contains(#"type="application/atom+xml""#))
            #expect(try await api.page(.get, "/s/ramen").text.contains(#"href="/s/ramen.atom""#))
            #expect(try await api.page(.get, "/s/club").text.contains("application/rss+xml") == false)
        }
    }

    @Test func datesAndTitles() throws {
        #expect(SubscriptionFeed.rfc822(Timestamp(milliseconds: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        let sunday = try #require(Timestamp(rfc3339: "2026-12-06T07:18:16.123Z"))
        #expect(SubscriptionFeed.rfc822(sunday) == "Sun, 06 Dec 2026 07:18:16 GMT")
        let leap = try #require(Timestamp(rfc3339: "2024-02-29T23:59:59Z"))
        #expect(SubscriptionFeed.rfc822(leap) == "Thu, 29 Feb 2024 23:59:59 GMT")
        let rss = SubscriptionFeed.Format.split("ana.rss")
        #expect(rss?.name == "ana" && rss?.format == .rss)
        let atom = SubscriptionFeed.Format.split("ana_b.atom")
        #expect(atom?.name == "ana_b" && atom?.format == .atom)
        #expect(SubscriptionFeed.Format.split("ana") == nil && SubscriptionFeed.Format.split(".rss") == nil)
        #expect(ETag.matches(nil, "\"a\"") == false)
    }
}

extension ParsedXML {
    /// A child with a namespace prefix (`atom:link`), as Foundation reports names without namespace processing.
    func first(_ name: String, ofNamespace prefix: String) -> ParsedXML? { first("\(prefix):\(name)") }
}
