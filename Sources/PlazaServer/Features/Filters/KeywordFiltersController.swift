import Hummingbird
import PlazaAPI

/// My keyword filters (`/me/filters`): translated to and from `KeywordFilterActions`.
struct KeywordFiltersController: FeatureRoutes {
    let actions: KeywordFilterActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("me/filters", use: list)
        signedIn.post("me/filters", use: create)
        signedIn.get("me/filters/{id}", use: get)
        signedIn.patch("me/filters/{id}", use: update)
        signedIn.delete("me/filters/{id}", use: delete)
        return routes
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<KeywordFilter> {
        Page(items: try await actions.list(by: context.user.userID), nextCursor: nil)
    }

    @Sendable func get(_ request: Request, context: SignedInContext) async throws -> KeywordFilter {
        try await actions.filter(context.parameters.id("id", "Filter"), by: context.user.userID)
    }

    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<KeywordFilter> {
        let body = try await request.decode(as: CreateKeywordFilterRequest.self, context: context)
        return EditedResponse(status: .created, response: try await actions.create(by: context.user.userID, body))
    }

    @Sendable func update(_ request: Request, context: SignedInContext) async throws -> KeywordFilter {
        let id = try context.parameters.id("id", "Filter")
        let body = try await request.decode(as: UpdateKeywordFilterRequest.self, context: context)
        return try await actions.update(id, by: context.user.userID, body)
    }

    @Sendable func delete(_ request: Request, context: SignedInContext) async throws -> Response {
        try await actions.delete(context.parameters.id("id", "Filter"), by: context.user.userID)
        return Response(status: .noContent)
    }
}
