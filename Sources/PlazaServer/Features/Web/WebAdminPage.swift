import Hummingbird
import PlazaAPI

/// `/admin`: the moderation page for admins and the moderators of spaces: the queue (the
/// API's list, so the same people see the same reports), each report's content and, for admins,
/// the person's recent content and the audit log. Actions go through the JSON API.
struct WebAdminPage: FeatureRoutes {
    let web: WebController

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("admin", use: admin)
        return routes
    }

    @Sendable func admin(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user.userID
        let moderation = web.stores.moderation
        let page = try await web.api.moderation.list(request, context: context)
        // Admins and the instance's moderators see and do everything here; admins also run the
        // instance (the dashboard and its settings).
        let moderatesAll = try await moderation.scope(of: me) == .instance
        let isAdmin = try await web.api.accounts.instance.isAdmin(me)
        let commentPosts = try await moderation.posts(
            ofComments: page.items.filter { $0.targetType == .comment }.compactMap { Int64($0.targetId) })
        var recentByPerson: [String: [RecentView]] = [:]
        if moderatesAll {
            for person in Set(page.items.compactMap { $0.targetUser?.id }) {
                guard let id = Int64(person) else { continue }
                recentByPerson[person] = try await moderation.unfilteredRecentContent(of: id, viewer: me).map {
                    RecentView($0, t: t)
                }
            }
        }
        let reports = page.items.map { report in
            ReportView(
                report, link: Self.link(report, commentPosts: commentPosts), isAdmin: moderatesAll,
                recent: report.targetUser.flatMap { recentByPerson[$0.id] } ?? [], t: t)
        }
        let audit = moderatesAll ? try await moderation.audit(page: .init(limit: 20), viewer: me).items : []
        let body = AdminPage(
            reports: reports, next: WebPages.next(request, cursor: page.nextCursor),
            resolved: request.uri.queryParameters.get("state") == ReportState.resolved.rawValue, isAdmin: isAdmin,
            moderatesAll: moderatesAll,
            audit: audit.map { AuditView($0, t: t) })
        return try await web.page(
            "admin", title: t("Moderation"), nav: .admin, body, request: request, context: context.base)
    }

    static func link(_ report: Report, commentPosts: [Int64: Int64]) -> String? {
        switch report.targetType {
        case .post: return PublicLinks.paths.postPage(report.targetId)
        case .user: return report.targetUser.map { PublicLinks.paths.profilePage($0.username) }
        case .comment:
            return Int64(report.targetId).flatMap { commentPosts[$0] }.map {
                PublicLinks.paths.commentPage(report.targetId, postID: String($0))
            }
        }
    }
}
