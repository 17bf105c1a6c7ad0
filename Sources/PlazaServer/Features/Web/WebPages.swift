import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The pages people read: feeds, spaces, posts, profiles, collections, search, history,
/// notifications and settings. Each calls the API handler of the same data with its own
/// request, so query parameters (`cursor`, `kind`, `q`, `sort` …) mean the same on both.
struct WebPages {
    let web: WebController
    var api: WebController.APIControllers { web.api }
    var stores: WebController.Stores { web.stores }

    func register(to web: RouterGroup<PlazaContext>) {
        web.get("/", use: home)
        web.get("explore", use: explore)
        web.get("spaces", use: spaces)
        web.get("spaces/last", use: lastSpace)
        web.get("s/{slug}", use: space)
        web.get("p/{id}", use: post)
        web.get("p/{id}/likes", use: likers)
        web.get("p/{id}/comments", use: comments)
        web.get("fragments/post/{id}", use: postFragment)
        web.get("u/{username}", use: profile)
        web.get("u/{username}/followers", use: followers)
        web.get("u/{username}/following", use: following)
        web.get("search", use: search)
        let signedIn = web.signedIn
        signedIn.get("compose", use: compose)
        signedIn.get("p/{id}/edit", use: edit)
        signedIn.get("collections", use: collections)
        signedIn.get("collections/{id}", use: collection)
        signedIn.get("history", use: history)
        signedIn.get("recommended", use: recommended)
        signedIn.get("notifications", use: notifications)
        signedIn.get("settings", use: settings)
    }

    /// The same page with `cursor` set: the link to the next page.
    static func next(_ request: Request, cursor: String?) -> String? {
        guard let cursor else { return nil }
        var items = request.uri.queryParameters.filter { $0.key != "cursor" && $0.key != "fragment" }.map {
            "\(encoded(String($0.key)))=\(encoded(String($0.value)))"
        }
        items.append("cursor=\(cursor)")
        return request.uri.path + "?" + items.joined(separator: "&")
    }

    /// A query value percent-encoded for a link.
    static func encoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~,")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A feed page, or just its cards for `?fragment=1`.
    func feed(
        _ page: Page<Post>, template: String = "feed", title: String, nav: String, _ values: [String: Any] = [:],
        request: Request,
        context: PlazaContext
    ) async throws -> Response {
        var values = values
        values["posts"] = WebViews.posts(page, viewer: context.viewerID)
        values["next"] = Self.next(request, cursor: page.nextCursor)
        if request.uri.queryParameters.get("fragment") != nil { return web.fragment("post-list", values) }
        return try await web.page(template, title: title, nav: nav, values, request: request, context: context)
    }

    @Sendable func home(_ request: Request, context: PlazaContext) async throws -> Response {
        guard context.identity != nil else { return try await explore(request, context: context) }
        let page = try await api.feeds.home(request, context: SignedInContext(context: context))
        return try await feed(
            page, title: "Home", nav: "home", ["heading": "Home", "live": "home"], request: request, context: context)
    }

    @Sendable func explore(_ request: Request, context: PlazaContext) async throws -> Response {
        let page = try await api.feeds.global(request, context: context)
        return try await feed(
            page, title: "Explore", nav: "explore", ["heading": "Everyone", "live": "global"], request: request,
            context: context)
    }

    @Sendable func spaces(_ request: Request, context: PlazaContext) async throws -> Response {
        let page = try await api.spaces.list(request, context: context)
        let values: [String: Any] = [
            "spaces": page.items.map(TemplateValue.object), "next": Self.next(request, cursor: page.nextCursor) as Any,
            "q": request.uri.queryParameters.get("q") ?? "",
        ]
        return try await web.page("spaces", title: "Spaces", nav: "spaces", values, request: request, context: context)
    }

    /// Reopens the space the signed-in person last opened (their `lastSpace` preference).
    @Sendable func lastSpace(_ request: Request, context: PlazaContext) async throws -> Response {
        guard let me = context.identity else { return WebController.redirect(to: "/spaces") }
        if case .object(let prefs) = try await stores.accounts.me(userID: me.userID).preferences,
            case .string(let slug)? = prefs["lastSpace"],
            slug.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        {
            return WebController.redirect(to: "/s/\(slug)")
        }
        return WebController.redirect(to: "/spaces")
    }

    @Sendable func space(_ request: Request, context: PlazaContext) async throws -> Response {
        let space = try await api.spaces.get(request, context: context)
        let page = try await api.feeds.spaceFeed(request, context: context)
        let values: [String: Any] = [
            "space": TemplateValue.object(space), "heading": space.name, "live": "space:\(space.slug)",
        ]
        return try await feed(
            page, template: "space", title: space.name, nav: "spaces", values, request: request, context: context)
    }

    @Sendable func compose(_ request: Request, context: SignedInContext) async throws -> Response {
        let kind = request.uri.queryParameters.get("kind").flatMap(PostKind.init(rawValue:)) ?? .text
        let values: [String: Any] = [
            "kind_\(kind.rawValue)": true, "space": request.uri.queryParameters.get("space") ?? "",
        ]
        return try await web.page(
            "compose", title: "New post", nav: "compose", values, request: request, context: context.base)
    }

    @Sendable func post(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let comments = try await api.posts.listComments(request, context: context)
        var values: [String: Any] = ["post": WebViews.post(post, viewer: context.viewerID)]
        values["comments"] = comments.items.map {
            WebViews.comment($0, viewer: context.viewerID, postAuthor: post.author.id)
        }
        values["moreComments"] = Self.next(request, cursor: comments.nextCursor)
        values["after"] =
            comments.items.last.flatMap { c in
                Int64(c.id).map { Cursor(time: c.createdAt.milliseconds, id: $0).encoded }
            } ?? ""
        if let me = context.identity {
            let mine = try await stores.collections.list(owner: me.userID, page: .init(limit: 100))
            values["myCollections"] = mine.items.map(TemplateValue.object)
            values["hasCollections"] = !mine.items.isEmpty
        }
        return try await web.page(
            "post", title: post.title ?? "Post by \(post.author.displayName)", values, request: request,
            context: context)
    }

    @Sendable func edit(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let post = try await api.posts.get(request, context: context.base)
        guard post.author.id == String(me.userID) else {
            throw PlazaError(.forbidden, "forbidden", "Only the author can edit this post.")
        }
        return try await web.page(
            "edit", title: "Edit post", ["post": WebViews.post(post, viewer: me.userID)], request: request,
            context: context.base)
    }

    @Sendable func likers(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let page = try await api.posts.likers(request, context: context)
        return try await people(page, heading: "Liked by", back: "/p/\(post.id)", request: request, context: context)
    }

    /// Comments after `cursor`, as list items: what the post page appends when new ones arrive.
    @Sendable func comments(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        let page = try await api.posts.listComments(request, context: context)
        let items = page.items.map { WebViews.comment($0, viewer: context.viewerID, postAuthor: post.author.id) }
        var response = web.fragment("comment-list", ["comments": items])
        if let last = page.items.last, let id = Int64(last.id) {
            response.headers[HTTPField.Name("X-Next-After")!] =
                Cursor(time: last.createdAt.milliseconds, id: id).encoded
        }
        return response
    }

    @Sendable func postFragment(_ request: Request, context: PlazaContext) async throws -> Response {
        let post = try await api.posts.get(request, context: context)
        return web.fragment("post-list", ["posts": [WebViews.post(post, viewer: context.viewerID)]])
    }

    @Sendable func profile(_ request: Request, context: PlazaContext) async throws -> Response {
        let user = try await api.people.profile(request, context: context)
        let posts = try await api.feeds.userPosts(request, context: context)
        let heatmap = try await api.people.activity(request, context: context)
        var values: [String: Any] = [
            "user": WebViews.user(user, viewer: context.viewerID), "heatmap": WebViews.heatmap(heatmap),
        ]
        values["grid"] = request.uri.queryParameters.get("kind") == "photo"
        return try await feed(
            posts, template: "profile", title: "\(user.displayName) (@\(user.username))",
            nav: user.id == context.viewerID.map(String.init) ? "profile" : "",
            values, request: request, context: context)
    }

    @Sendable func followers(_ request: Request, context: PlazaContext) async throws -> Response {
        let user = try await api.people.profile(request, context: context)
        let page = try await api.people.followers(request, context: context)
        return try await people(
            page, heading: "People following \(user.displayName)", back: "/u/\(user.username)", request: request,
            context: context)
    }

    @Sendable func following(_ request: Request, context: PlazaContext) async throws -> Response {
        let user = try await api.people.profile(request, context: context)
        let page = try await api.people.following(request, context: context)
        return try await people(
            page, heading: "\(user.displayName) follows", back: "/u/\(user.username)", request: request,
            context: context)
    }

    func people(_ page: Page<User>, heading: String, back: String, request: Request, context: PlazaContext) async throws
        -> Response
    {
        let values: [String: Any] = [
            "heading": heading, "back": back, "users": page.items.map { WebViews.user($0, viewer: context.viewerID) },
            "next": Self.next(request, cursor: page.nextCursor) as Any,
        ]
        return try await web.page("people", title: heading, values, request: request, context: context)
    }
}
