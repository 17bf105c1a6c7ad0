import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The signed-in person's own pages: collections, search, history, recommended,
/// notifications and settings.
extension WebPages {
    @Sendable func collections(_ request: Request, context: SignedInContext) async throws -> Response {
        let page = try await api.collections.list(request, context: context)
        let values: [String: Any] = [
            "collections": page.items.map(TemplateValue.object),
            "next": Self.next(request, cursor: page.nextCursor) as Any,
        ]
        return try await web.page(
            "collections", title: "Collections", nav: "collections", values, request: request, context: context.base)
    }

    @Sendable func collection(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let items = try await api.collections.items(request, context: context)
        let id = try context.parameters.id("id", "Collection")
        let current = try await stores.collections.collection(id: id, owner: me.userID)
        // Where items can move: the newest 100 others (the page is found whatever its age).
        let others = try await stores.collections.list(owner: me.userID, page: .init(limit: 101)).items.filter {
            $0.id != current.id
        }.prefix(100)
        let values: [String: Any] = [
            "collection": TemplateValue.object(current), "items": items.items.map { item(_: $0, viewer: me.userID) },
            "others": others.map(TemplateValue.object), "hasOthers": !others.isEmpty, "movable": true,
            "next": Self.next(request, cursor: items.nextCursor) as Any,
        ]
        return try await web.page(
            "collection", title: current.name, nav: "collections", values, request: request, context: context.base)
    }

    func item(_ item: CollectionItem, viewer: Int64) -> [String: Any] {
        var values = TemplateValue.object(item)
        if let post = item.post { values["post"] = WebViews.post(post, viewer: viewer) }
        values["state_\(item.state.rawValue)"] = true
        values["when"] = TemplateValue.readableTime(values["savedAt"])
        if let link = item.link { values["linkTitle"] = link.title ?? link.url }
        return values
    }

    /// Posts (ranked, by field, near a place), accounts, or my saved items.
    @Sendable func search(_ request: Request, context: PlazaContext) async throws -> Response {
        let query = request.uri.queryParameters
        let type = query.get("type") ?? "posts"
        let q = request.query("q") ?? ""
        var values: [String: Any] = [
            "q": q, "qParam": WebPages.encoded(q), "type_\(type)": true, "in_\(query.get("in") ?? "all")": true,
        ]
        if let near = request.query("near") { values["near"] = near }
        values["kind_\(query.get("kind") ?? "")"] = true
        let asked = !q.trimmingCharacters(in: .whitespaces).isEmpty || (type == "posts" && request.query("near") != nil)
        if asked {
            switch type {
            case "accounts":
                let page = try await api.search.searchUsers(request, context: context)
                values["users"] = page.items.map { WebViews.user($0, viewer: context.viewerID) }
                values["next"] = Self.next(request, cursor: page.nextCursor)
                values["empty"] = page.items.isEmpty
            case "saved":
                let signedIn = try SignedInContext(context: context)
                let page = try await api.search.searchSaved(request, context: signedIn)
                values["items"] = page.items.map { item($0, viewer: signedIn.user.userID) }
                values["next"] = Self.next(request, cursor: page.nextCursor)
                values["empty"] = page.items.isEmpty
            default:
                let page = try await api.search.searchPosts(request, context: context)
                values["posts"] = WebViews.posts(page, viewer: context.viewerID)
                values["next"] = Self.next(request, cursor: page.nextCursor)
                values["empty"] = page.items.isEmpty
                if request.uri.queryParameters.get("fragment") != nil { return web.fragment("post-list", values) }
            }
        }
        let title = q.isEmpty ? "Search" : "Search: \(q)"
        return try await web.page("search", title: title, nav: "search", values, request: request, context: context)
    }

    @Sendable func history(_ request: Request, context: SignedInContext) async throws -> Response {
        let page = try await api.history.list(request, context: context)
        let sort = request.uri.queryParameters.get("sort") ?? "viewedAt"
        let values: [String: Any] = [
            "entries": page.items.map { historyItem($0, viewer: context.user.userID) },
            "next": Self.next(request, cursor: page.nextCursor) as Any,
            "sort_\(sort)": true, "q": request.uri.queryParameters.get("q") ?? "",
        ]
        return try await web.page(
            "history", title: "History", nav: "history", values, request: request, context: context.base)
    }

    @Sendable func recommended(_ request: Request, context: SignedInContext) async throws -> Response {
        let page = try await api.history.recommended(request, context: context)
        let values: [String: Any] = [
            "entries": page.items.map { historyItem($0, viewer: context.user.userID) }, "recommended": true,
        ]
        return try await web.page(
            "history", title: "Recommended", nav: "history", values, request: request, context: context.base)
    }

    func historyItem(_ item: HistoryItem, viewer: Int64) -> [String: Any] {
        var values = TemplateValue.object(item)
        values["post"] = WebViews.post(item.post, viewer: viewer)
        values["viewed"] = TemplateValue.readableTime(values["viewedAt"])
        return values
    }

    @Sendable func notifications(_ request: Request, context: SignedInContext) async throws -> Response {
        let page = try await api.notifications.list(request, context: context)
        let values: [String: Any] = [
            "notifications": page.items.map(WebViews.notification),
            "next": Self.next(request, cursor: page.nextCursor) as Any,
            "unreadOnly": request.uri.queryParameters.get("unread") == "true",
        ]
        return try await web.page(
            "notifications", title: "Notifications", nav: "notifications", values, request: request,
            context: context.base)
    }

    @Sendable func settings(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let account = try await stores.accounts.me(userID: me.userID)
        let sessions = try await stores.accounts.sessions(userID: me.userID, current: me.sessionID)
        var values: [String: Any] = [
            "account": TemplateValue.object(account), "user": WebViews.user(account.user, viewer: me.userID),
        ]
        values["status_\(account.user.status?.kind ?? "none")"] = true
        values["sessions"] = sessions.map { session -> [String: Any] in
            var values = TemplateValue.object(session)
            values["lastUsed"] = TemplateValue.readableTime(values["lastUsedAt"])
            return values
        }
        return try await web.page(
            "settings", title: "Settings", nav: "settings", values, request: request, context: context.base)
    }
}
