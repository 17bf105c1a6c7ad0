import Foundation
import PlazaAPI

/// A feed to subscribe to in a feed reader, whatever its source (a person, a space, a tag): its
/// title, the page it follows and its newest posts as items, rendered as RSS 2.0 or Atom.
struct SubscriptionFeed: Sendable {
    /// The two formats, named by the suffix of the feed's address (`/@ana.rss`, `/@ana.atom`).
    enum Format: String, Sendable, CaseIterable {
        case rss, atom

        var contentType: String {
            switch self {
            case .rss: "application/rss+xml; charset=utf-8"
            case .atom: "application/atom+xml; charset=utf-8"
            }
        }

        /// `ana.rss` as `("ana", .rss)`; nil for a name with no feed suffix.
        static func split(_ name: String) -> (name: String, format: Format)? {
            for format in allCases where name.hasSuffix("." + format.rawValue) {
                let stem = name.dropLast(format.rawValue.count + 1)
                return stem.isEmpty ? nil : (String(stem), format)
            }
            return nil
        }
    }

    struct Item: Sendable {
        let title: String
        /// The post's page, absolute: the item's link and its stable id.
        let link: String
        let published: Timestamp
        let updated: Timestamp
        /// The post as HTML (escaped again as the XML's text).
        let html: String
        let authorName: String
        let authorPage: String
        let enclosures: [Enclosure]
    }

    struct Enclosure: Sendable {
        let url: String
        let type: String
        /// Bytes; 0 when not known (as RSS 2.0 readers take it).
        let length: Int
    }

    let title: String
    let description: String
    /// The web page the feed follows, absolute.
    let page: String
    /// The feed's address without its suffix, absolute: `…/@ana` serves `…/@ana.rss` and `…/@ana.atom`.
    let address: String
    /// The newest item's last change, or `since` (when the source began) for a feed with none.
    let updated: Timestamp
    let items: [Item]

    init(
        title: String, description: String, page: String, address: String, since: Timestamp, posts: [Post],
        links: PublicLinks
    ) {
        self.title = title
        self.description = description
        self.page = page
        self.address = address
        items = posts.map { Self.item($0, links: links) }
        updated = items.map(\.updated).max() ?? since
    }

    func url(_ format: Format) -> String { address + "." + format.rawValue }

    static func item(_ post: Post, links: PublicLinks) -> Item {
        let media = post.media.filter { $0.state == .ready }
        let pictures = media.map { media in
            let alt = HTMLText.escape(media.description ?? "")
            return "<p><img src=\"\(HTMLText.escape(links.absolute(media.variants.medium)))\" alt=\"\(alt)\"></p>"
        }
        return Item(
            title: title(of: post), link: links.post(id: post.id, author: post.author.username),
            published: post.createdAt, updated: post.editedAt ?? post.createdAt,
            html: warning(of: post) + HTMLText.post(post, links: links) + pictures.joined(),
            authorName: post.author.displayName,
            authorPage: links.person(post.author.username),
            enclosures: media.map { Enclosure(url: links.absolute($0.url), type: $0.contentType, length: 0) })
    }

    /// A post's content warning, first: a reader shows the item whole.
    static func warning(of post: Post) -> String {
        post.contentWarning.map { "<p><strong>⚠️ \(HTMLText.escape($0))</strong></p>" } ?? ""
    }

    /// How long an item's title made of the post's first words may be, in characters.
    static let titleLength = 80

    /// The post's content warning (its text is what the warning hides) or title; else the first
    /// line of its text, shortened; else what it is and who posted it.
    static func title(of post: Post) -> String {
        if let warning = post.contentWarning, !warning.isEmpty { return "⚠️ " + warning }
        if let title = post.title?.trimmingCharacters(in: .whitespacesAndNewlines), !title.isEmpty { return title }
        let line = (post.body ?? "").split(whereSeparator: \.isNewline).lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
        if let line {
            guard line.count > titleLength else { return line }
            let cut = line.prefix(titleLength)
            let words = cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut
            return words.trimmingCharacters(in: .whitespaces) + "…"
        }
        let by = "@" + post.author.username
        if let activity = post.activity { return "\(activity.type) \(activity.progress)% by \(by)" }
        if post.media.contains(where: \.isVideo) { return "Video by \(by)" }
        if !post.media.isEmpty { return "Photo by \(by)" }
        if let link = post.link { return link.title ?? link.url }
        return "Post by \(by)"
    }
}
