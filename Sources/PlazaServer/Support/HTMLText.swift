import Foundation
import PlazaAPI

/// Plain text as HTML, for the places that write HTML by hand: mail, the account export, the
/// Mastodon API's `content` and the subscription feeds' item content.
package enum HTMLText {
    /// `text` with `&`, `<`, `>` and both quotes escaped. Scalar by scalar: a mark that combines
    /// with `&` or `<` into one `Character` must not hide it from the escaping.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A post's title, activity, text, price, place and link as paragraphs, its text's links,
    /// mentions and hashtags linked at `links`: the Mastodon API's `content` and the
    /// subscription feeds' items.
    package static func post(_ post: Post, links: PublicLinks) -> String {
        var lines: [String] = []
        if let title = post.title { lines.append("<strong>\(escape(title))</strong>") }
        if let activity = post.activity {
            let done = activity.completedAt != nil ? " ✓" : ""
            lines.append(
                escape("\(activity.emoji.map { $0 + " " } ?? "")\(activity.type) \(activity.progress)%\(done)"))
        }
        var html = lines.map { "<p>\($0)</p>" }.joined()
        html += PostTextHTML.render(post.body ?? "", links: links)
        if let price = post.price { html += "<p>\(escape(price))</p>" }
        if let place = post.location?.name { html += "<p>📍 \(escape(place))</p>" }
        if let link = post.link, !(post.body ?? "").contains(link.url) {
            html += "<p>\(PostTextHTML.inline(link.url, links: links))</p>"
        }
        return html
    }
}
