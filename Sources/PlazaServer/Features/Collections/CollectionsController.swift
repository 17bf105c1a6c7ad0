import Hummingbird
import PlazaAPI

/// The caller's collections and the posts and links saved in them. Every route is private:
/// another person's collection or item is a 404, never a 403, so ids reveal nothing.
struct CollectionsController: FeatureRoutes {
    let collections: CollectionStore
    let posts: PostStore
    let actions: CollectionActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("collections", use: list)
        signedIn.post("collections", use: create)
        signedIn.patch("collections/{id}", use: rename)
        signedIn.delete("collections/{id}", use: delete)
        signedIn.get("collections/{id}/items", use: items)
        signedIn.post("collections/{id}/items", use: save)
        signedIn.patch("collections/items/{id}", use: updateItem)
        signedIn.delete("collections/items/{id}", use: deleteItem)
        return routes
    }

    private func name(_ request: Request, context: some RequestContext) async throws -> String {
        let body = try await request.decode(as: CollectionRequest.self, context: context)
        return try Validate.requiredText(body.name, field: "name", max: CollectionRules.maxNameLength)
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<SavedCollection> {
        try await collections.list(owner: context.user.userID, page: request.pageRequest())
    }

    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<SavedCollection>
    {
        let me = context.user
        return EditedResponse(
            status: .created,
            response: try await actions.create(by: me.userID, name: name(request, context: context)))
    }

    @Sendable func rename(_ request: Request, context: SignedInContext) async throws -> SavedCollection {
        let me = context.user
        let id = try context.parameters.id("id", "Collection")
        return try await actions.rename(id, by: me.userID, name: name(request, context: context))
    }

    @Sendable func delete(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        try await actions.delete(context.parameters.id("id", "Collection"), by: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func items(_ request: Request, context: SignedInContext) async throws -> Page<CollectionItem> {
        let me = context.user
        let id = try context.parameters.id("id", "Collection")
        return try await collections.items(collection: id, owner: me.userID, page: request.pageRequest(), posts: posts)
    }

    @Sendable func save(_ request: Request, context: SignedInContext) async throws -> EditedResponse<CollectionItem> {
        let me = context.user
        let collection = try context.parameters.id("id", "Collection")
        let body = try await request.decode(as: SaveItemRequest.self, context: context)
        let note = try Validate.text(body.note, field: "note", max: CollectionRules.maxNoteLength) ?? ""
        let saved: CollectionStore.Saved
        switch (body.postId, body.url) {
        case (let post?, nil): saved = .post(try Validate.id(post, field: "postId"))
        case (nil, let url?): saved = .link(try Validate.url(url, field: "url"))
        default: throw PlazaError.invalid("postId", "Send either postId or url.")
        }
        return EditedResponse(
            status: .created, response: try await actions.save(saved, note: note, into: collection, by: me.userID))
    }

    @Sendable func updateItem(_ request: Request, context: SignedInContext) async throws -> CollectionItem {
        let me = context.user
        let id = try context.parameters.id("id", "Item")
        let body = try await request.decode(as: UpdateItemRequest.self, context: context)
        let target = try body.collectionId.map { try Validate.id($0, field: "collectionId") }
        let note = try body.note.map { try Validate.text($0, field: "note", max: CollectionRules.maxNoteLength) ?? "" }
        return try await actions.updateItem(id, by: me.userID, moveTo: target, note: note)
    }

    @Sendable func deleteItem(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        try await actions.deleteItem(context.parameters.id("id", "Item"), by: me.userID)
        return Response(status: .noContent)
    }
}
