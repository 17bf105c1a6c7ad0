import PlazaAPI

extension SubscriptionFeed {
    /// The feed as XML in `format`.
    func rendered(_ format: Format) -> String {
        switch format {
        case .rss: rss()
        case .atom: atom()
        }
    }

    /// RSS 2.0, with Atom's `self` link and Dublin Core's `creator` (RSS's own `author` is an email address).
    func rss() -> String {
        var xml = XMLWriter()
        xml.open(
            "rss",
            [
                ("version", "2.0"), ("xmlns:atom", "http://www.w3.org/2005/Atom"),
                ("xmlns:dc", "http://purl.org/dc/elements/1.1/"),
            ])
        xml.open("channel")
        xml.element("title", title)
        xml.element("link", page)
        xml.element("description", description)
        xml.empty("atom:link", [("href", url(.rss)), ("rel", "self"), ("type", "application/rss+xml")])
        xml.element("lastBuildDate", Self.rfc822(updated))
        xml.element("generator", "Plaza")
        for item in items {
            xml.open("item")
            xml.element("title", item.title)
            xml.element("link", item.link)
            xml.element("guid", item.link, [("isPermaLink", "true")])
            xml.element("pubDate", Self.rfc822(item.published))
            xml.element("dc:creator", item.authorName)
            xml.element("description", item.html)
            for enclosure in item.enclosures {
                xml.empty(
                    "enclosure",
                    [("url", enclosure.url), ("length", String(enclosure.length)), ("type", enclosure.type)])
            }
            xml.close("item")
        }
        xml.close("channel")
        xml.close("rss")
        return xml.text
    }

    /// Atom (RFC 4287): entries' ids are their posts' addresses, the feed's its own.
    func atom() -> String {
        var xml = XMLWriter()
        xml.open("feed", [("xmlns", "http://www.w3.org/2005/Atom")])
        xml.element("id", url(.atom))
        xml.element("title", title)
        xml.element("subtitle", description)
        xml.element("updated", updated.description)
        xml.empty("link", [("rel", "alternate"), ("type", "text/html"), ("href", page)])
        xml.empty("link", [("rel", "self"), ("type", "application/atom+xml"), ("href", url(.atom))])
        xml.element("generator", "Plaza")
        for item in items {
            xml.open("entry")
            xml.element("id", item.link)
            xml.element("title", item.title)
            xml.empty("link", [("rel", "alternate"), ("type", "text/html"), ("href", item.link)])
            xml.element("published", item.published.description)
            xml.element("updated", item.updated.description)
            xml.open("author")
            xml.element("name", item.authorName)
            xml.element("uri", item.authorPage)
            xml.close("author")
            xml.element("content", item.html, [("type", "html")])
            for enclosure in item.enclosures {
                xml.empty(
                    "link",
                    [
                        ("rel", "enclosure"), ("type", enclosure.type), ("length", String(enclosure.length)),
                        ("href", enclosure.url),
                    ])
            }
            xml.close("entry")
        }
        xml.close("feed")
        return xml.text
    }

    /// RFC 822 (as RFC 1123 writes it, four-digit years): `Sun, 06 Dec 2026 07:18:16 GMT`.
    static func rfc822(_ time: Timestamp) -> String {
        // `description` is RFC 3339 in UTC: `2026-12-06T07:18:16.123Z`.
        let text = Array(time.description.utf8)
        guard text.count >= 19 else { return "Thu, 01 Jan 1970 00:00:00 GMT" }
        func part(_ range: Range<Int>) -> String { String(decoding: text[range], as: UTF8.self) }
        let days = Int((time.milliseconds - ((time.milliseconds % 86_400_000) + 86_400_000) % 86_400_000) / 86_400_000)
        // 1 January 1970 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let month = Int(part(5..<7)).flatMap { months.indices.contains($0 - 1) ? months[$0 - 1] : nil } ?? "Jan"
        return "\(weekday), \(part(8..<10)) \(month) \(part(0..<4)) \(part(11..<19)) GMT"
    }
}
