import Foundation
import PlazaAPI

/// The big sites whose pages say little to a server (a sign-in wall, a script-only app) but
/// answer oEmbed at a known endpoint: a link to one of their posts or videos is previewed from
/// that endpoint, chosen by the link's host and path, with no discovery on the page. Endpoints
/// are those of the oEmbed registry (oembed.com) and the sites' documentation.
struct OEmbedProvider: Sendable {
    /// As the sites name themselves; also the key of `LinkPreviewSettings.oEmbedEndpoints`.
    let name: String
    let endpoint: String
    /// Query parameters the endpoint takes besides `url`.
    let parameters: String
    /// The text of the embed's `html` is the post itself (a tweet), a description for the card.
    let textInHTML: Bool
    /// The URL to ask about when `host` and `path` are one of the site's posts; nil otherwise.
    let canonical: @Sendable (_ host: String, _ path: [Substring], _ link: URLComponents) -> String?

    /// The oEmbed request for `link`, when a known site's post: the endpoint (or its stand-in
    /// from `endpoints`, by name) with the post's canonical URL.
    static func request(for link: String, endpoints: [String: String] = [:]) -> (
        provider: OEmbedProvider, url: String
    )? {
        guard link.utf8.count <= 2048, let url = URLComponents(string: link),
            let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = url.host?.lowercased()
        else { return nil }
        let path = url.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: true)
        for provider in known {
            guard let canonical = provider.canonical(host, path, url) else { continue }
            var allowed = CharacterSet.urlQueryAllowed
            allowed.remove(charactersIn: "&=+?#/:")
            guard let encoded = canonical.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
            let endpoint = endpoints[provider.name] ?? provider.endpoint
            return (provider, "\(endpoint)?\(provider.parameters)url=\(encoded)")
        }
        return nil
    }

    static let known: [OEmbedProvider] = [
        OEmbedProvider(
            name: "YouTube", endpoint: "https://www.youtube.com/oembed", parameters: "format=json&", textInHTML: false
        ) { _, _, link in
            link.string.flatMap(VideoEmbed.youTubeID(in:)).map { "https://www.youtube.com/watch?v=\($0)" }
        },
        OEmbedProvider(
            name: "Vimeo", endpoint: "https://vimeo.com/api/oembed.json", parameters: "", textInHTML: false
        ) { host, path, _ in
            guard host == "vimeo.com" || host == "www.vimeo.com" || host == "player.vimeo.com", !path.isEmpty,
                path.count <= 4, path.allSatisfy(safe), path.contains(where: { $0.allSatisfy(\.isNumber) })
            else { return nil }
            return "https://\(host)/" + path.joined(separator: "/")
        },
        OEmbedProvider(
            name: "Instagram", endpoint: "https://graph.facebook.com/v21.0/instagram_oembed", parameters: "",
            textInHTML: false
        ) { host, path, _ in
            guard ["instagram.com", "www.instagram.com", "instagr.am", "www.instagr.am"].contains(host),
                let kind = path.firstIndex(where: { ["p", "reel", "tv"].contains($0) }), kind + 1 < path.count,
                safe(path[kind + 1])
            else { return nil }
            return "https://www.instagram.com/\(path[kind])/\(path[kind + 1])/"
        },
        OEmbedProvider(
            name: "TikTok", endpoint: "https://www.tiktok.com/oembed", parameters: "", textInHTML: false
        ) { host, path, _ in
            guard ["tiktok.com", "www.tiktok.com", "m.tiktok.com"].contains(host), path.count >= 3,
                path[0].hasPrefix("@"), safe(path[0].dropFirst()), path[1] == "video", path[2].allSatisfy(\.isNumber)
            else { return nil }
            return "https://www.tiktok.com/\(path[0])/video/\(path[2])"
        },
        OEmbedProvider(
            name: "Tumblr", endpoint: "https://www.tumblr.com/oembed/1.0", parameters: "", textInHTML: false
        ) { host, path, _ in
            // Posts are `blog.tumblr.com/post/ID/…`, and now also `www.tumblr.com/blog/ID/…`,
            // which the endpoint does not document: asked about in the first form.
            if host == "www.tumblr.com" || host == "tumblr.com" {
                guard path.count >= 2, safe(path[0]), path[1].allSatisfy(\.isNumber) else { return nil }
                return "https://\(path[0]).tumblr.com/post/\(path[1])"
            }
            guard host.hasSuffix(".tumblr.com"), safe(host.dropLast(".tumblr.com".count)), path.count >= 2,
                path[0] == "post", path[1].allSatisfy(\.isNumber)
            else { return nil }
            return "https://\(host)/post/\(path[1])"
        },
        OEmbedProvider(
            name: "X", endpoint: "https://publish.twitter.com/oembed", parameters: "omit_script=1&dnt=1&",
            textInHTML: true
        ) { host, path, _ in
            guard
                ["twitter.com", "www.twitter.com", "mobile.twitter.com", "x.com", "www.x.com", "mobile.x.com"].contains(
                    host), path.count >= 3, safe(path[0]), path[1] == "status" || path[1] == "statuses",
                path[2].allSatisfy(\.isNumber)
            else { return nil }
            return "https://twitter.com/\(path[0])/status/\(path[2])"
        },
        OEmbedProvider(
            name: "Reddit", endpoint: "https://www.reddit.com/oembed", parameters: "", textInHTML: false
        ) { host, path, _ in
            guard ["reddit.com", "www.reddit.com", "old.reddit.com", "new.reddit.com", "np.reddit.com"].contains(host),
                path.count >= 4, path[0] == "r", safe(path[1]), path[2] == "comments", safe(path[3])
            else { return nil }
            // The post, and the comment when the link names one (its slug and id after the post's id).
            let comment = path.count >= 6 && safe(path[4]) && safe(path[5]) ? "\(path[4])/\(path[5])/" : ""
            return "https://www.reddit.com/r/\(path[1])/comments/\(path[3])/" + comment
        },
    ]

    /// A name or code: letters, digits, `_`, `-` and `.`, at most 100.
    private static func safe(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 100
            && text.unicodeScalars.allSatisfy {
                ($0.isASCII && CharacterSet.alphanumerics.contains($0)) || $0 == "_" || $0 == "-" || $0 == "."
            }
    }
}
