import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Collections")
struct CollectionsTests {
    func collection(_ api: TestAPI, _ account: Account, _ name: String) async throws -> SavedCollection {
        let response = try await api.call(.post, "/collections", as: account, json: CollectionRequest(name: name))
        #expect(response.status == .created, "create collection: \(response.text)")
        return try response.decode(SavedCollection.self)
    }

    func save(_ api: TestAPI, _ account: Account, _ collection: SavedCollection, _ body: SaveItemRequest) async throws
        -> CollectionItem
    {
        let response = try await api.call(.post, "/collections/\(collection.id)/items", as: account, json: body)
        #expect(response.status == .created, "save: \(response.text)")
        return try response.decode(CollectionItem.self)
    }

    @Test func ownerCreatesRenamesListsAndDeletes() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let recipes = try await collection(api, ana, "Recipes")
            let trips = try await collection(api, ana, "  Trips  ")
            #expect(trips.name == "Trips" && trips.counts.items == 0)
            #expect(
                try await api.page("/collections", as: ana, of: SavedCollection.self).items.map(\.id) == [
                    trips.id, recipes.id,
                ])
            let first = try await api.page("/collections?limit=1", as: ana, of: SavedCollection.self)
            let second = try await api.page(
                "/collections?limit=1&cursor=\(first.nextCursor!)", as: ana, of: SavedCollection.self)
            #expect(
                first.items.map(\.id) == [trips.id] && second.items.map(\.id) == [recipes.id]
                    && second.nextCursor == nil)

            let renamed = try await api.call(
                .patch, "/collections/\(recipes.id)", as: ana, json: CollectionRequest(name: "Dinner"))
            #expect(try renamed.decode(SavedCollection.self).name == "Dinner")
            let empty = try await api.call(
                .patch, "/collections/\(recipes.id)", as: ana, json: CollectionRequest(name: " "))
            #expect(empty.status == .unprocessableContent && empty.error?.field == "name")
            let long = try await api.call(
                .post, "/collections", as: ana, json: CollectionRequest(name: String(repeating: "x", count: 101)))
            #expect(long.status == .unprocessableContent && long.error?.field == "name")

            #expect(try await api.call(.delete, "/collections/\(trips.id)", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/collections/\(trips.id)", as: ana).status == .notFound)
            #expect(
                try await api.page("/collections", as: ana, of: SavedCollection.self).items.map(\.name) == ["Dinner"])
        }
    }

    @Test func collectionsAndItemsNeverReachAnotherUser() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(bob, "worth keeping")
            let secret = try await collection(api, ana, "Secret")
            let item = try await save(api, ana, secret, SaveItemRequest(postId: post.id, note: "private note"))
            let bobs = try await collection(api, bob, "Bob's")

            // Anonymous: 401 everywhere.
            for (method, path) in [
                (HTTPRequest.Method.get, "/collections"), (.post, "/collections"),
                (.patch, "/collections/\(secret.id)"),
                (.delete, "/collections/\(secret.id)"), (.get, "/collections/\(secret.id)/items"),
                (.post, "/collections/\(secret.id)/items"),
                (.patch, "/collections/items/\(item.id)"), (.delete, "/collections/items/\(item.id)"),
            ] {
                #expect(
                    try await api.call(method, path, raw: #"{"name":"x","postId":"1"}"#).status == .unauthorized,
                    "\(method) \(path)")
            }
            // Another user: 404, as if nothing were there.
            #expect(try await api.page("/collections", as: bob, of: SavedCollection.self).items.map(\.id) == [bobs.id])
            #expect(try await api.get("/collections/\(secret.id)/items", as: bob).status == .notFound)
            #expect(
                try await api.call(.patch, "/collections/\(secret.id)", as: bob, json: CollectionRequest(name: "mine"))
                    .status == .notFound)
            #expect(try await api.call(.delete, "/collections/\(secret.id)", as: bob).status == .notFound)
            #expect(
                try await api.call(
                    .post, "/collections/\(secret.id)/items", as: bob, json: SaveItemRequest(postId: post.id)
                ).status == .notFound)
            #expect(
                try await api.call(
                    .patch, "/collections/items/\(item.id)", as: bob, json: UpdateItemRequest(note: "hi")
                ).status == .notFound)
            #expect(
                try await api.call(
                    .patch, "/collections/items/\(item.id)", as: bob, json: UpdateItemRequest(collectionId: bobs.id)
                ).status == .notFound)
            #expect(try await api.call(.delete, "/collections/items/\(item.id)", as: bob).status == .notFound)
            // Ana cannot move her item into Bob's collection either.
            let steal = try await api.call(
                .patch, "/collections/items/\(item.id)", as: ana, json: UpdateItemRequest(collectionId: bobs.id))
            #expect(steal.status == .unprocessableContent && steal.error?.field == "collectionId")
            // "saved" is the viewer's own: Bob, the author, does not see Ana's save.
            #expect(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).viewer.saved)
            #expect(try await api.get("/posts/\(post.id)", as: bob).decode(Post.self).viewer.saved == false)
            #expect(try await api.page("/feed/global", as: bob, of: Post.self).items.allSatisfy { !$0.viewer.saved })
            #expect(try await api.page("/feed/global", of: Post.self).items.allSatisfy { !$0.viewer.saved })
            #expect(
                try await api.page("/collections/\(secret.id)/items", as: ana, of: CollectionItem.self).items.map(
                    \.note) == ["private note"])
        }
    }

    @Test func savingAPostTwiceIsAConflictAndItemsMove() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "soup")
            let dinner = try await collection(api, ana, "Dinner")
            let lunch = try await collection(api, ana, "Lunch")
            let item = try await save(api, ana, dinner, SaveItemRequest(postId: post.id))
            #expect(
                item.post?.id == post.id && item.state == .ready && item.collectionId == dinner.id && item.note == "")
            let again = try await api.call(
                .post, "/collections/\(dinner.id)/items", as: ana, json: SaveItemRequest(postId: post.id))
            #expect(again.status == .conflict && again.error?.code == "already_saved")
            // The same post may be in another collection.
            let inLunch = try await save(api, ana, lunch, SaveItemRequest(postId: post.id))
            let moveOnto = try await api.call(
                .patch, "/collections/items/\(inLunch.id)", as: ana, json: UpdateItemRequest(collectionId: dinner.id))
            #expect(moveOnto.status == .conflict, "moving onto a collection that has the post")
            #expect(try await api.call(.delete, "/collections/items/\(inLunch.id)", as: ana).status == .noContent)

            // A documentation address: refused without any traffic.
            let link = try await save(
                api, ana, dinner, SaveItemRequest(url: "https://192.0.2.7/soup", note: "try this"))
            #expect(
                link.link?.url == "https://192.0.2.7/soup" && link.link?.siteName == "192.0.2.7" && link.post == nil)
            #expect(
                try await api.page("/collections/\(dinner.id)/items", as: ana, of: CollectionItem.self).items.map(\.id)
                    == [link.id, item.id])

            let moved = try await api.call(
                .patch, "/collections/items/\(item.id)", as: ana,
                json: UpdateItemRequest(collectionId: lunch.id, note: "for Monday"))
            let movedItem = try moved.decode(CollectionItem.self)
            #expect(
                movedItem.collectionId == lunch.id && movedItem.note == "for Monday"
                    && movedItem.savedAt == item.savedAt)
            #expect(
                try await api.page("/collections/\(dinner.id)/items", as: ana, of: CollectionItem.self).items.map(\.id)
                    == [link.id])
            #expect(
                try await api.page("/collections/\(lunch.id)/items", as: ana, of: CollectionItem.self).items.map(\.id)
                    == [item.id])
            let counts = try await api.page("/collections", as: ana, of: SavedCollection.self).items.map(\.counts.items)
            #expect(counts == [1, 1], "counts follow moves and removals")

            // Deleting a collection takes its items with it.
            #expect(try await api.call(.delete, "/collections/\(lunch.id)", as: ana).status == .noContent)
            #expect(
                try await api.call(.patch, "/collections/items/\(item.id)", as: ana, json: UpdateItemRequest(note: "x"))
                    .status == .notFound)
            #expect(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).viewer.saved == false)
        }
    }

    /// A deleted post's items go with it (API.md: "its comments, likes, saves go too"); a post
    /// hidden by a block leaves its item, shown as unavailable.
    @Test func aDeletedPostTakesItsItemsAndAHiddenOneLeavesAnUnavailableItem() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            let deleted = try await api.textPost(bob, "soon gone")
            let hidden = try await api.textPost(carol, "soon hidden")
            let saved = try await collection(api, ana, "Saved")
            _ = try await save(api, ana, saved, SaveItemRequest(postId: deleted.id))
            _ = try await save(api, ana, saved, SaveItemRequest(postId: hidden.id))
            #expect(try await api.call(.delete, "/posts/\(deleted.id)", as: bob).status == .noContent)
            try await api.call(.put, "/users/ana/block", as: carol)
            let items = try await api.page("/collections/\(saved.id)/items", as: ana, of: CollectionItem.self).items
            #expect(items.map(\.state) == [.unavailable])
            #expect(items.allSatisfy { $0.post == nil && $0.link == nil })
            #expect(try await api.call(.delete, "/collections/items/\(items[0].id)", as: ana).status == .noContent)
        }
    }

    @Test func badSavesAreRefusedAndLoseNothing() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "x")
            let hidden = try await api.textPost(bob, "blocked")
            try await api.call(.put, "/users/ana/block", as: bob)
            let saved = try await collection(api, ana, "Saved")
            for (body, status, field) in [
                (SaveItemRequest(), HTTPResponse.Status.unprocessableContent, "postId"),
                (SaveItemRequest(postId: post.id, url: "https://example.com"), .unprocessableContent, "postId"),
                (SaveItemRequest(postId: "abc"), .unprocessableContent, "postId"),
                (SaveItemRequest(url: "ftp://example.com/x"), .unprocessableContent, "url"),
                (SaveItemRequest(url: "javascript:alert(1)"), .unprocessableContent, "url"),
                (
                    SaveItemRequest(url: "https://example.com", note: String(repeating: "n", count: 2001)),
                    .unprocessableContent, "note"
                ),
                (SaveItemRequest(postId: "999999"), .notFound, nil),
                (SaveItemRequest(postId: hidden.id), .notFound, nil),
            ] as [(SaveItemRequest, HTTPResponse.Status, String?)] {
                let response = try await api.call(.post, "/collections/\(saved.id)/items", as: ana, json: body)
                #expect(response.status == status && response.error?.field == field, "\(body): \(response.text)")
            }
            #expect(
                try await api.call(.post, "/collections/123/items", as: ana, json: SaveItemRequest(postId: post.id))
                    .status == .notFound)
            #expect(
                try await api.call(.post, "/collections/\(saved.id)/items", as: ana, raw: "{not json").status
                    == .badRequest)
            #expect(
                try await api.page("/collections/\(saved.id)/items", as: ana, of: CollectionItem.self).items.isEmpty)
            #expect(
                try await api.page("/collections", as: ana, of: SavedCollection.self).items.map(\.counts.items) == [0])
        }
    }
}
