import Foundation
import Testing

@testable import PlazaServer

@Suite("Links: page metadata from HTML heads and oEmbed")
struct LinkMetadataTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures/links")
    static let fixtureNames = [
        "instagram.html", "youtube.html", "tiktok.html", "tumblr.html", "bare.html", "titleonly.html", "latin1.html",
    ]

    /// Bytes of a fixture file, as the fetcher would hand them over.
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    static func parse(_ html: String, page: String = "https://example.com/a/page") -> LinkMetadata {
        LinkMetadata.parse(Array(html.utf8), pageURL: URL(string: page)!)
    }

    @Test func instagramSkipsScriptsCommentsAndBody() throws {
        let metadata = LinkMetadata.parse(
            try Self.fixture("instagram.html"), pageURL: URL(string: "https://www.instagram.com/p/C5aBcDeFgHi/")!)
        #expect(metadata.title == "Plaza Team on Instagram: \"Sunset over the harbour 🌅\"")
        #expect(
            metadata.description
                == "1,234 likes, 56 comments - plazateam on April 2, 2025: \"Sunset over the harbour 🌅 #plaza\".")
        #expect(
            metadata.imageURL
                == "https://scontent-lhr8-1.cdninstagram.com/v/t51.29350-15/437123456_n.jpg?stp=dst-jpg_e35_s1080x1080&_nc_ht=scontent-lhr8-1.cdninstagram.com&oh=00_AbC&oe=6612F00D"
        )
        #expect(metadata.siteName == "Instagram")
        #expect(metadata.oEmbedURL == nil)
    }

    @Test func youtubeResolvesTheJSONOEmbedLinkAndIgnoresXML() throws {
        let metadata = LinkMetadata.parse(
            try Self.fixture("youtube.html"), pageURL: URL(string: "http://127.0.0.1:8123/watch?v=dQw4w9WgXcQ")!)
        #expect(
            metadata
                == LinkMetadata(
                    title: "Building Plaza in Swift",
                    description:
                        "A tour of the Plaza server: Hummingbird, SQLite and Postgres, link previews and more.",
                    imageURL: "https://i.ytimg.com/vi/dQw4w9WgXcQ/maxresdefault.jpg", siteName: "YouTube",
                    oEmbedURL:
                        "http://127.0.0.1:8123/oembed?format=json&url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ"
                ))
    }

    @Test func tiktokUsesTwitterTagsAndDecodesEntities() throws {
        let metadata = LinkMetadata.parse(
            try Self.fixture("tiktok.html"),
            pageURL: URL(string: "https://www.tiktok.com/@plazateam/video/7300000000000000000")!)
        #expect(
            metadata
                == LinkMetadata(
                    title: "Tea & toast at dawn 🎵", description: "Morning ritual at the Plaza café – #tea #slowliving",
                    imageURL:
                        "https://p16-sign-va.tiktokcdn.com/obj/tos-maliva-p-0068/oQx123.jpeg?x-expires=1700000000&x-signature=abc%3D",
                    siteName: nil,
                    oEmbedURL:
                        "https://www.tiktok.com/oembed?url=https://www.tiktok.com/@plazateam/video/7300000000000000000")
        )
    }

    @Test func tumblrReadsUppercaseTagsSingleQuotesAndRelativeImages() throws {
        let metadata = LinkMetadata.parse(
            try Self.fixture("tumblr.html"),
            pageURL: URL(string: "https://plazanotes.tumblr.com/post/123/why-we-built-plaza")!)
        #expect(
            metadata
                == LinkMetadata(
                    title: "Why we built Plaza", description: "It's small, it's fast, and it's ours.",
                    imageURL: "https://plazanotes.tumblr.com/images/post.jpg", siteName: "Tumblr", oEmbedURL: nil))
    }

    @Test func pagesWithoutMetadataGiveNothing() throws {
        #expect(
            LinkMetadata.parse(try Self.fixture("bare.html"), pageURL: URL(string: "https://example.com/")!)
                == LinkMetadata())
        #expect(Self.parse("") == LinkMetadata())
    }

    @Test func titleElementAndMetaDescriptionAreTheFallbacks() throws {
        let metadata = LinkMetadata.parse(
            try Self.fixture("titleonly.html"), pageURL: URL(string: "https://example.com/notes")!)
        #expect(
            metadata
                == LinkMetadata(
                    title: "Plaza — Release notes",
                    description: "What changed in Plaza 1.4: faster feeds & link previews."))
    }

    @Test func latin1PagesAreDecodedByTheirDeclaredCharset() throws {
        let metadata = LinkMetadata.parse(try Self.fixture("latin1.html"), pageURL: URL(string: "https://example.fr/")!)
        #expect(metadata.title == "Café Plaza · Menü")
        #expect(metadata.description == "Crème brûlée € 5, tous les jours")
        // Declared after the title, and via http-equiv: still honoured, because values are decoded after the scan.
        let late: [UInt8] =
            Array("<title>Caf".utf8) + [0xE9]
            + Array("</title><meta http-equiv='Content-Type' content='text/html; charset=ISO-8859-1'>".utf8)
        #expect(LinkMetadata.parse(late, pageURL: URL(string: "https://example.fr/")!).title == "Café")
        // Without a declaration the same byte is invalid UTF-8, which becomes a replacement
        // character rather than a crash.
        #expect(
            LinkMetadata.parse(
                Array("<title>Caf".utf8) + [0xE9, 0x21] + Array("</title>".utf8),
                pageURL: URL(string: "https://example.fr/")!
            ).title == "Caf\u{FFFD}!")
    }

    @Test func openGraphBeatsTwitterBeatsPlainTags() {
        let html = """
            <title>Plain</title><meta name="description" content="plain description">
            <meta name="twitter:title" content="Twitter"><meta name="twitter:description" content="twitter description">
            <meta name="twitter:image:src" content="https://img.example/twitter.jpg">
            <meta property="og:title" content="Open Graph"><meta property="og:image:secure_url" content="https://img.example/secure.jpg">
            <meta name="application-name" content="App"><meta property="og:site_name" content="Site">
            """
        #expect(
            Self.parse(html)
                == LinkMetadata(
                    title: "Open Graph", description: "twitter description", imageURL: "https://img.example/secure.jpg",
                    siteName: "Site"))
        #expect(
            Self.parse(#"<meta name="twitter:image:src" content="/t.jpg"><meta name="application-name" content="App">"#)
                == LinkMetadata(imageURL: "https://example.com/t.jpg", siteName: "App"))
    }

    @Test func onlyTheFirstOccurrenceOfAKeyCounts() {
        let html =
            #"<meta property="og:title" content="First"><meta property="og:title" content="Second"><title>One</title><title>Two</title>"#
        #expect(Self.parse(html).title == "First")
        #expect(Self.parse("<title>One</title><title>Two</title>").title == "One")
        // An empty first value is still the first: the next source in precedence order is used instead.
        #expect(
            Self.parse(
                #"<meta property="og:title" content="  "><meta property="og:title" content="Later"><title>Fallback</title>"#
            ).title == "Fallback")
    }

    @Test func attributesMayBeQuotedAnyWayAndInAnyCase() {
        #expect(Self.parse(#"<META Property=og:title Content=Unquoted>"#).title == "Unquoted")
        #expect(Self.parse(#"<meta content='a > b' property='og:title'>"#).title == "a > b")
        #expect(Self.parse(#"<meta property = "og:title" content = "Spaced" />"#).title == "Spaced")
        #expect(Self.parse(#"<meta property="OG:Title" content="Key case">"#).title == "Key case")
        #expect(
            Self.parse(#"<meta property="og:title" property="twitter:title" content="First attribute wins">"#).title
                == "First attribute wins")
    }

    @Test func entitiesAreDecodedAndInvalidCodePointsDropped() {
        let html =
            #"<title>&amp;&lt;&gt;&quot;&#39;&apos;&#65;&#x42;&#X43;|&#0;&#xD800;&#x110000;&#99999999999;|&bogus;&amp|a&nbsp;&nbsp;b</title>"#
        #expect(Self.parse(html).title == #"&<>"''ABC||&bogus;&amp|a b"#)
    }

    @Test func whitespaceCollapsesAndLongValuesAreCapped() {
        #expect(Self.parse("<title>\n\t  Hello \r\n  world \u{0001} </title>").title == "Hello world")
        #expect(Self.parse("<title> \n </title>").title == nil)
        let long = String(repeating: "é", count: 400)
        #expect(Self.parse("<title>\(long)</title>").title == String(repeating: "é", count: 300))
        #expect(
            Self.parse(#"<meta name="description" content="\#(String(repeating: "abc ", count: 400))">"#).description?
                .count == 999)
        let flags = String(repeating: "🇫🇷", count: 150)
        #expect(
            Self.parse(#"<meta property="og:site_name" content="\#(flags)">"#).siteName
                == String(repeating: "🇫🇷", count: 100))
    }

    @Test func commentsScriptsAndBodyContentDoNotCount() {
        #expect(
            Self.parse(#"<!-- <meta property="og:title" content="Hidden"> --><title>Shown</title>"#).title == "Shown")
        #expect(Self.parse(#"<!--><title>After empty comment</title>"#).title == "After empty comment")
        #expect(
            Self.parse(#"<script>document.write('<meta property="og:title" content="No">')</script><title>Yes</title>"#)
                .title == "Yes")
        #expect(Self.parse(#"<style>/*</head>*/</style><title>Still head</title>"#).title == "Still head")
        #expect(Self.parse(#"<head></head><meta property="og:title" content="After head">"#).title == nil)
        #expect(Self.parse(#"<body><meta property="og:title" content="In body">"#).title == nil)
        #expect(
            Self.parse(#"<html><meta property="og:title" content="No head at all"></html>"#).title == "No head at all")
    }

    @Test func onlyHTTPImagesAndJSONOEmbedLinksAreKept() {
        #expect(
            Self.parse(#"<meta property="og:image" content="//cdn.example.net/a.jpg">"#, page: "http://example.com/")
                .imageURL == "http://cdn.example.net/a.jpg")
        #expect(
            Self.parse(#"<meta property="og:image" content="../img/b c.jpg">"#).imageURL
                == "https://example.com/img/b%20c.jpg")
        #expect(
            Self.parse(
                #"<meta property="og:image" content="javascript:alert(1)"><meta name="twitter:image" content="https://ok.example/x.png">"#
            ).imageURL == "https://ok.example/x.png")
        for bad in [
            "data:image/png;base64,AAAA", "ftp://example.com/a.jpg", "", "  ", "http:nohost",
            "https://x.example/\(String(repeating: "a", count: 2100))",
        ] {
            #expect(Self.parse(#"<meta property="og:image" content="\#(bad)">"#).imageURL == nil, "\(bad)")
        }
        #expect(
            Self.parse(#"<link rel="Alternate Other" type="text/json+oembed" href="/o?u=1">"#).oEmbedURL
                == "https://example.com/o?u=1")
        #expect(Self.parse(#"<link rel="alternate" type="text/xml+oembed" href="/o.xml">"#).oEmbedURL == nil)
        #expect(Self.parse(#"<link rel="stylesheet" type="application/json+oembed" href="/o">"#).oEmbedURL == nil)
    }

    @Test func truncatedInputKeepsOnlyWhatWasComplete() throws {
        #expect(
            Self.parse(#"<meta property="og:title" content="Hello"><meta property="og:description" content="Wor"#)
                == LinkMetadata(title: "Hello"))
        #expect(Self.parse(#"<meta property="og:title" content=Hello"#) == LinkMetadata())
        #expect(Self.parse("<title>Cut off mid-title").title == nil)
        #expect(Self.parse("<title>Almost</title").title == nil)
        #expect(Self.parse(#"<!-- never closed <meta property="og:title" content="x">"#) == LinkMetadata())
        #expect(Self.parse(#"<script>never closed <meta property="og:title" content="x">"#) == LinkMetadata())
        // Each prefix of a page yields either nothing or the complete value for each field.
        let page = try Self.fixture("titleonly.html")
        let full = LinkMetadata.parse(page, pageURL: URL(string: "https://example.com/")!)
        for length in 0...page.count {
            let metadata = LinkMetadata.parse(Array(page[..<length]), pageURL: URL(string: "https://example.com/")!)
            #expect(metadata.title == nil || metadata.title == full.title)
            #expect(metadata.description == nil || metadata.description == full.description)
        }
    }

    @Test func hostileInputNeverCrashes() throws {
        var random = SeededGenerator(seed: 0x5EED)
        let alphabet = Array(#"<>/!-"'= &#;xmetaprobdyscihlgkn:"#.utf8) + [0x00, 0x0A, 0xC3, 0xE9, 0xFF]
        for _ in 0..<300 {
            let bytes = (0..<Int(random.next() % 400)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
            _ = LinkMetadata.parse(bytes, pageURL: URL(string: "https://example.com/")!)
        }
        for name in Self.fixtureNames {
            let page = try Self.fixture(name)
            for length in stride(from: 0, through: page.count, by: 7) {
                _ = LinkMetadata.parse(Array(page[..<length]), pageURL: URL(string: "https://example.com/")!)
            }
        }
        let title = Self.parse("<title>" + String(repeating: "&#", count: 50_000) + "</title>").title
        #expect(title == String(repeating: "&#", count: 150))
    }

    @Test func oEmbedFillsOnlyTheGaps() throws {
        let json = try Self.fixture("oembed.json")
        let page = URL(string: "https://www.youtube.com/watch?v=dQw4w9WgXcQ")!
        #expect(
            LinkMetadata().merging(oEmbedJSON: json, pageURL: page)
                == LinkMetadata(
                    title: "Building Plaza in Swift", imageURL: "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg",
                    siteName: "YouTube"))
        let fromPage = LinkMetadata(
            title: "Page title", description: "Page description", imageURL: "https://page.example/i.jpg",
            siteName: "Page site")
        #expect(fromPage.merging(oEmbedJSON: json, pageURL: page) == fromPage)
        let authorOnly = Array(
            #"{"author_name":"  Plaza   Team ","provider_name":"","thumbnail_url":"/thumb.jpg"}"#.utf8)
        #expect(
            LinkMetadata().merging(oEmbedJSON: authorOnly, pageURL: page)
                == LinkMetadata(title: "Plaza Team", imageURL: "https://www.youtube.com/thumb.jpg"))
        let wrongTypes = Array(#"{"title":42,"provider_name":["x"],"thumbnail_url":"javascript:alert(1)"}"#.utf8)
        #expect(LinkMetadata().merging(oEmbedJSON: wrongTypes, pageURL: page) == LinkMetadata())
    }

    @Test(arguments: ["", "not json", "[1,2,3]", "\"title\"", #"{"title":"#, "invalid UTF-8", "deeply nested"])
    func invalidOEmbedJSONChangesNothing(json: String) {
        let bytes: [UInt8] =
            switch json {
            case "invalid UTF-8": Array(#"{"title":"caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
            case "deeply nested": Array(repeating: UInt8(ascii: "["), count: 100_000)
            default: Array(json.utf8)
            }
        let metadata = LinkMetadata(title: nil, description: "kept")
        #expect(metadata.merging(oEmbedJSON: bytes, pageURL: URL(string: "https://example.com/")!) == metadata)
    }
}
