import Hummingbird
import PlazaAPI

extension HistoryItem: ResponseEncodable {}

/// Reading history, search clicks and recommendations: all private to the signed-in person.
struct HistoryController {
    let history: HistoryStore

    func register(to api: RouterGroup<PlazaContext>) {
        api.post("posts/{id}/view", use: view)
        api.get("me/history", use: list)
        api.post("me/history/{postId}/click", use: click)
        api.get("me/recommended", use: recommended)
    }

    @Sendable func view(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.requireUser()
        try await history.view(post: context.parameters.id("id", "Post"), by: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func click(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.requireUser()
        try await history.click(post: context.parameters.id("postId", "Post"), by: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func list(_ request: Request, context: PlazaContext) async throws -> Page<HistoryItem> {
        let me = try context.requireUser()
        var query = HistoryStore.HistoryQuery(
            sort: try request.enumParameter("sort", as: HistoryStore.Sort.self) ?? .viewedAt,
            field: try request.enumParameter("in", as: SearchText.Field.self) ?? .all, page: try request.pageRequest())
        if let q = request.query("q") { query.text = try SearchController.text(q) }
        return try await history.history(of: me.userID, query)
    }

    @Sendable func recommended(_ request: Request, context: PlazaContext) async throws -> Page<HistoryItem> {
        let me = try context.requireUser()
        let page = try request.pageRequest()
        return Page(items: try await history.recommended(for: me.userID, limit: page.limit), nextCursor: nil)
    }
}
