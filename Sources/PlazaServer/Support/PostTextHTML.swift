import Foundation
import PlazaAPI

/// A post's or a comment's plain text as HTML, the same for every door that shows it (the web
/// app, Mastodon apps, feed readers): paragraphs at blank lines, `<br>` at line breaks, and the
/// links, mentions and hashtags `PostText` reads linked as Mastodon links them (its `mention` and
/// `hashtag` classes, which its apps look for). Everything else is escaped.
package enum PostTextHTML {
    package static func render(_ text: String, links: PublicLinks) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .newlines) }.filter { !$0.isEmpty }
            .map { "<p>" + inline($0, links: links) + "</p>" }
            .joined()
    }

    /// One paragraph's pieces, its line breaks as `<br>`.
    package static func inline(_ text: String, links: PublicLinks) -> String {
        PostText.segments(of: text).map { segment in
            switch segment {
            case .text(let text):
                return HTMLText.escape(text).replacingOccurrences(of: "\n", with: "<br>")
            case .link(let url):
                let escaped = HTMLText.escape(url)
                return #"<a href="\#(escaped)" rel="nofollow noopener ugc" target="_blank">\#(escaped)</a>"#
            case .mention(let name):
                let href = HTMLText.escape(links.person(name))
                return
                    #"<span class="h-card"><a href="\#(href)" class="u-url mention">@<span>\#(HTMLText.escape(name))</span></a></span>"#
            case .hashtag(let name):
                let href = HTMLText.escape(links.tag(name))
                return
                    #"<a href="\#(href)" class="mention hashtag" rel="tag">#<span>\#(HTMLText.escape(name))</span></a>"#
            }
        }.joined()
    }
}
