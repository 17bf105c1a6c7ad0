import Hummingbird
import PlazaAPI

/// Reading history, search clicks and recommendations: all private to the signed-in person.
struct HistoryController: FeatureRoutes {
    let history: HistoryStore

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.post("posts/{id}/view", use: view)
        signedIn.get("me/history", use: list)
        signedIn.post("me/history/{postId}/click", use: click)
        signedIn.get("me/recommended", use: recommended)
        return routes
    }

    @Sendable func view(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        try await history.view(post: context.parameters.id("id", "Post"), by: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func click(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        try await history.click(post: context.parameters.id("postId", "Post"), by: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<HistoryItem> {
        let me = context.user
        var query = HistoryStore.HistoryQuery(
            sort: try request.enumParameter("sort", as: HistoryStore.Sort.self) ?? .viewedAt,
            field: try request.enumParameter("in", as: SearchText.Field.self) ?? .all, page: try request.pageRequest())
        if let q = request.query("q") { query.text = try SearchController.text(q) }
        return try await history.history(of: me.userID, query)
    }

    @Sendable func recommended(_ request: Request, context: SignedInContext) async throws -> Page<HistoryItem> {
        let me = context.user
        let page = try request.pageRequest()
        return Page(items: try await history.recommended(for: me.userID, limit: page.limit), nextCursor: nil)
    }
}
