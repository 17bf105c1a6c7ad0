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

    /// A post's title, activity, text, price, place and link as paragraphs: the Mastodon API's
    /// `content` and the subscription feeds' items.
    package static func post(_ post: Post) -> String {
        var lines: [String] = []
        if let title = post.title { lines.append("<strong>\(escape(title))</strong>") }
        if let activity = post.activity {
            let done = activity.completedAt != nil ? " ✓" : ""
            lines.append(
                escape("\(activity.emoji.map { $0 + " " } ?? "")\(activity.type) \(activity.progress)%\(done)"))
        }
        var html = lines.map { "<p>\($0)</p>" }.joined()
        html += paragraphs(post.body ?? "")
        if let price = post.price { html += "<p>\(escape(price))</p>" }
        if let place = post.location?.name { html += "<p>📍 \(escape(place))</p>" }
        if let link = post.link, !(post.body ?? "").contains(link.url) { html += "<p>\(linkify(escape(link.url)))</p>" }
        return html
    }

    /// Plain text as paragraphs: `<p>` at blank lines, `<br>` at line breaks, links.
    package static func paragraphs(_ text: String) -> String {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        return
            normalized.components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .newlines) }.filter { !$0.isEmpty }
            .map { "<p>" + linkify(escape($0)).replacingOccurrences(of: "\n", with: "<br>") + "</p>" }
            .joined()
    }

    /// `http(s)://…` in escaped text as links (up to a space or `&lt;`, trailing punctuation left out).
    package static func linkify(_ escaped: String) -> String {
        var out = ""
        var rest = Substring(escaped)
        while let start = rest.range(of: "https://") ?? rest.range(of: "http://") {
            out += rest[..<start.lowerBound]
            var end =
                rest[start.lowerBound...].firstIndex(where: { $0 == " " || $0 == "\n" || $0 == "\t" })
                ?? rest.endIndex
            if let lt = rest[start.lowerBound..<end].range(of: "&lt;") { end = lt.lowerBound }
            var url = rest[start.lowerBound..<end]
            url = trimmed(url)
            if url.count <= rest.distance(from: start.lowerBound, to: start.upperBound) {
                out += url
            } else {
                out += "<a href=\"\(url)\" rel=\"nofollow noopener\" target=\"_blank\">\(url)</a>"
            }
            rest = rest[url.endIndex...]
        }
        return out + rest
    }

    /// A link's end without the punctuation after it, and without a trailing escaped `&`, quote
    /// or `>` as a whole (dropping only its `;` would leave a broken entity).
    private static func trimmed(_ url: Substring) -> Substring {
        var url = url
        while true {
            if let entity = ["&amp;", "&quot;", "&#39;", "&gt;"].first(where: { url.hasSuffix($0) }) {
                url = url.dropLast(entity.count)
            } else if let last = url.last, ".,;:!?)".contains(last) {
                url = url.dropLast()
            } else {
                return url
            }
        }
    }
}
