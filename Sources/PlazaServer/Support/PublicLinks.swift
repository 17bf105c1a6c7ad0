import Foundation

/// Every link Plaza hands out to a page of its web app, made in one place so that each one opens
/// a page the web app serves (`WebPages` registers both forms below).
///
/// A person and a post each have two addresses that serve the same page: the canonical
/// `/@{username}` and `/@{username}/{id}`, which Mastodon clients and the API hand out, and the
/// short `/u/{username}` and `/p/{id}` the web app uses in its own pages (its service worker keeps
/// offline copies of those).
package struct PublicLinks: Sendable {
    /// Put before every path: the public URL without a trailing slash, or "" for bare paths.
    let base: String

    package init(base: String) {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        self.base = String(base)
    }

    /// Bare paths, for links inside the web app's own pages.
    static let paths = PublicLinks(base: "")

    /// A path of this server (`/…`) made absolute; anything else (a URL elsewhere) as it is.
    package func absolute(_ pathOrURL: String) -> String { pathOrURL.hasPrefix("/") ? base + pathOrURL : pathOrURL }

    // MARK: canonical addresses

    /// A person's page: `/@{username}`.
    package func person(_ username: String) -> String { "\(base)/@\(username)" }

    /// A post's page: `/@{author}/{id}`.
    package func post(id: String, author username: String) -> String { "\(person(username))/\(id)" }

    /// A comment, on its post's page: `/@{author}/{post}#c-{id}` (the page's anchor for it).
    package func comment(id: String, postID: String, postAuthor username: String) -> String {
        post(id: postID, author: username) + Self.commentAnchor(id)
    }

    /// A hashtag's page: `/tags/{name}` (the page folds the name to its key).
    package func tag(_ name: String) -> String { "\(base)/tags/" + Self.queryValue(name) }

    /// A space's page.
    func space(_ slug: String) -> String { "\(base)/s/\(slug)" }

    /// The page that takes a space's invite.
    func invite(_ code: String) -> String { "\(base)/join/\(code)" }

    /// A file the web app serves as it is (`/assets/…`).
    package func asset(_ name: String) -> String { "\(base)/assets/\(name)" }

    // MARK: the web app's short forms

    /// A person's page as the web app links to it: `/u/{username}`.
    func profilePage(_ username: String) -> String { "\(base)/u/\(username)" }

    /// A post's page as the web app links to it: `/p/{id}`.
    func postPage(_ id: String) -> String { "\(base)/p/\(id)" }

    /// A comment on the web app's page of its post: `/p/{post}#c-{id}`.
    func commentPage(_ id: String, postID: String) -> String { postPage(postID) + Self.commentAnchor(id) }

    static func commentAnchor(_ id: String) -> String { "#c-\(id)" }

    // MARK: reading links back

    /// The id of the post a link to one of this server's post pages names: `/@{username}/{id}`,
    /// `/p/{id}`, or `/posts/{id}` (what Mastodon entities carried before the pages above), with
    /// any `#fragment` or `?query`. Nil for anything else.
    package func postID(in url: String) -> Int64? {
        guard !base.isEmpty, url.hasPrefix(base + "/") else { return nil }
        let path = url.dropFirst(base.count + 1).prefix { $0 != "#" && $0 != "?" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let first = parts[0]
        guard first == "p" || first == "posts" || (first.hasPrefix("@") && first.count > 1) else { return nil }
        guard parts[1].utf8.count <= 19, parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(parts[1])
    }

    /// A query value percent-encoded for a link.
    package static func queryValue(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
