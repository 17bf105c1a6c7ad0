import OpenAPIKit

extension OpenAPIDocument {
    /// Collections and saved items.
    static var collectionOperations: [(String, Operation)] {
        [collectionsOperations, collectionsItemsIdOperations].flatMap { $0 }
    }

    private static var collectionsOperations: [(String, Operation)] {
        [
            (
                "\(v1)/collections",
                Operation(
                    method: .get, summary: "My collections, newest first", auth: .required, query: Params.page,
                    response: pageOf("SavedCollection"))
            ),
            (
                "\(v1)/collections",
                Operation(
                    method: .post, summary: "Create a collection", auth: .required, body: "CollectionRequest",
                    status: 201,
                    response: ref("SavedCollection"), links: collectionLinks)
            ),
            (
                "\(v1)/collections/{id}",
                Operation(
                    method: .patch, summary: "Rename my collection", auth: .required, body: "CollectionRequest",
                    response: ref("SavedCollection"), errors: [404])
            ),
            (
                "\(v1)/collections/{id}",
                Operation(
                    method: .delete, summary: "Delete my collection with its items", auth: .required, status: 204,
                    errors: [404])
            ),
            (
                "\(v1)/collections/{id}/items",
                Operation(
                    method: .get, summary: "Items of my collection, newest first", auth: .required, query: Params.page,
                    response: pageOf("CollectionItem"), errors: [404])
            ),
            (
                "\(v1)/collections/{id}/items",
                Operation(
                    method: .post,
                    summary: """
                        Save a post or a link (its preview is fetched in the background; a new link counts against the \
                        daily cap of link previews, 429 daily_link_preview_limit)
                        """,
                    auth: .required, body: "SaveItemRequest", status: 201, response: ref("CollectionItem"),
                    errors: [404, 409],
                    links: [
                        (operationID: "patchCollectionsItemsId", parameter: "id", pointer: "/id"),
                        (operationID: "deleteCollectionsItemsId", parameter: "id", pointer: "/id"),
                    ])
            ),
        ]
    }

    private static var collectionsItemsIdOperations: [(String, Operation)] {
        [
            (
                "\(v1)/collections/items/{id}",
                Operation(
                    method: .patch, summary: "Move my item to another of my collections and/or edit its note",
                    auth: .required, body: "UpdateItemRequest", response: ref("CollectionItem"), errors: [404, 409])
            ),
            (
                "\(v1)/collections/items/{id}",
                Operation(
                    method: .delete, summary: "Remove my item", auth: .required, status: 204, errors: [404])
            ),
        ]
    }
}
