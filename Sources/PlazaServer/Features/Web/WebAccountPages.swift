import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI

/// The signed-in person's own pages: collections, search, history, recommended,
/// notifications, follow requests and settings.
extension WebPages {
    @Sendable func collections(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.collections.list(request, context: context)
        let body = CollectionsPage(collections: page.items, next: Self.next(request, cursor: page.nextCursor), t: t)
        return try await web.page(
            "collections", title: t("Collections"), nav: .collections, body, request: request, context: context.base)
    }

    @Sendable func collection(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user
        let items = try await api.collections.items(request, context: context)
        let id = try context.parameters.id("id", "Collection")
        let current = try await stores.collections.collection(id: id, owner: me.userID)
        // Where items can move: the newest 100 others (the page is found whatever its age).
        let others = try await stores.collections.list(owner: me.userID, page: .init(limit: 101)).items.filter {
            $0.id != current.id
        }.prefix(100)
        let body = CollectionPage(
            collection: current, items: items.items.map { ItemView($0, viewer: me.userID, t: t) },
            others: Array(others), hasOthers: !others.isEmpty, next: Self.next(request, cursor: items.nextCursor), t: t)
        return try await web.page(
            "collection", title: current.name, nav: .collections, body, request: request, context: context.base)
    }

    /// Posts (ranked, by field, near a place), accounts, or my saved items.
    @Sendable func search(_ request: Request, context: PlazaContext) async throws -> Response {
        let t = web.localizer(context)
        let query = request.uri.queryParameters
        let type = query.get("type") ?? "posts"
        let q = request.query("q") ?? ""
        let kind = query.get("kind") ?? ""
        var body = SearchPage(
            q: q, qParam: PublicLinks.queryValue(q), tab: Choice(type), searchIn: Choice(query.get("in") ?? "all"),
            kind: Choice(kind), anyKind: kind.isEmpty, near: request.query("near"),
            followed: query.get("followed") == "true")
        let asked = !q.trimmingCharacters(in: .whitespaces).isEmpty || (type == "posts" && request.query("near") != nil)
        if asked {
            switch type {
            case "accounts":
                let page = try await api.search.searchUsers(request, context: context)
                body.users = page.items.map { UserView($0, viewer: context.viewerID, t: t) }
                body.next = Self.next(request, cursor: page.nextCursor)
                body.empty = page.items.isEmpty
            case "saved":
                let signedIn = try SignedInContext(context: context)
                let page = try await api.search.searchSaved(request, context: signedIn)
                body.items = page.items.map { ItemView($0, viewer: signedIn.user.userID, t: t) }
                body.next = Self.next(request, cursor: page.nextCursor)
                body.empty = page.items.isEmpty
            default:
                let page = try await api.search.searchPosts(request, context: context)
                let list = Self.postList(page, request: request, context: context, t: t)
                if Self.wantsFragment(request) { return web.fragment("post-list", list, context: context) }
                body.posts = list.posts
                body.next = list.next
                body.empty = page.items.isEmpty
                if let near = try SearchController.near(request.query("near"), radius: request.query("radiusKm")) {
                    body.map = MapView(
                        near: near.latitude, near.longitude, radiusKm: near.radiusKm, posts: page.items,
                        settings: web.map, t: t)
                }
            }
        }
        let title = q.isEmpty ? t("Search") : t("Search: {query}", ["query": q])
        return try await web.page("search", title: title, nav: .search, body, request: request, context: context)
    }

    @Sendable func history(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.history.list(request, context: context)
        let query = request.uri.queryParameters
        let body = HistoryPage(
            entries: page.items.map { HistoryEntryView($0, viewer: context.user.userID, t: t) },
            next: Self.next(request, cursor: page.nextCursor), sort: Choice(query.get("sort") ?? "viewedAt"),
            searchIn: Choice(query.get("in") ?? "all"), q: query.get("q") ?? "", recommended: false)
        return try await web.page(
            "history", title: t("History"), nav: .history, body, request: request, context: context.base)
    }

    /// My activities, by type and progress (the activity tracker's log).
    @Sendable func activities(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.feeds.myActivities(request, context: context)
        let list = Self.postList(page, request: request, context: context.base, t: t)
        if Self.wantsFragment(request) { return web.fragment("post-list", list, context: context.base) }
        let types = try await api.posts.posts.activityTypes(of: context.user.userID)
        let query = request.uri.queryParameters
        let body = ActivitiesPage(
            list, types: types, type: query.get("activity"), progress: query.get("progress"), t: t)
        return try await web.page(
            "activities", title: t("My activities"), nav: .activities, body, request: request, context: context.base)
    }

    @Sendable func recommended(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.history.recommended(request, context: context)
        let body = HistoryPage(
            entries: page.items.map { HistoryEntryView($0, viewer: context.user.userID, t: t) }, next: nil,
            sort: Choice(""), searchIn: Choice("all"), q: "", recommended: true)
        return try await web.page(
            "history", title: t("Recommended"), nav: .history, body, request: request, context: context.base)
    }

    @Sendable func notifications(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.notifications.list(request, context: context)
        let body = NotificationsPage(
            notifications: page.items.map { NotificationView($0, t: t) },
            next: Self.next(request, cursor: page.nextCursor),
            unreadOnly: request.uri.queryParameters.get("unread") == "true")
        return try await web.page(
            "notifications", title: t("Notifications"), nav: .notifications, body, request: request,
            context: context.base)
    }

    /// The people asking to follow me, to approve or deny.
    @Sendable func followRequests(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let page = try await api.people.followRequests(request, context: context)
        let body = FollowRequestsPage(
            requests: page.items.map { FollowRequestView($0, t: t) }, next: Self.next(request, cursor: page.nextCursor))
        return try await web.page(
            "follow-requests", title: t("Follow requests"), nav: .notifications, body, request: request,
            context: context.base)
    }

    @Sendable func settings(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user
        let account = try await stores.accounts.me(userID: me.userID)
        let sessions = try await stores.accounts.sessions(userID: me.userID, current: me.sessionID)
        let linked = try await api.identity.identities.identities(userID: me.userID)
        let hasPassword = try await stores.accounts.passwordHash(userID: me.userID) != nil
        let providers = api.identity.signIn.providers
        var body = SettingsPage(
            user: UserView(account.user, viewer: me.userID, t: t), email: account.email,
            emailVerified: account.emailVerified, pendingEmail: account.pendingEmail, hasPassword: hasPassword,
            identities: linked.map { item in
                .init(
                    provider: item.provider, name: providers.first { $0.id == item.provider }?.name ?? item.provider,
                    email: item.email, removable: hasPassword || linked.count > 1)
            },
            linkable: providers.filter { provider in !linked.contains { $0.provider == provider.id } }.map {
                .init(id: $0.id, name: $0.name)
            },
            statusKind: Choice(account.user.status?.kind ?? "none"),
            sessions: sessions.map { SessionView($0, t: t) },
            twoFactor: try await api.accounts.twoFactorStatus(request, context: context),
            push: .init(
                preferences: account.preferences,
                devices: try await stores.pushDevices.list(user: me.userID, session: me.sessionID), t: t),
            preferences: account.preferences, t: t)
        body.mayInvite = try await api.accounts.instance.mayInvite(me.userID)
        return try await web.page(
            "settings", title: t("Settings"), nav: .settings, body, request: request, context: context.base)
    }
}
