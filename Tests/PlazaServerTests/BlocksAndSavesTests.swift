import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Review findings on blocks and saves (issue 19).
@Suite("Blocks and saves")
struct BlocksAndSavesTests {
    @Test func aPostsAuthorDeletesCommentsByPeopleTheyBlocked() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let post = try await api.textPost(ana, "ana's post")
            let first = try await api.call(
                .post, "/posts/\(post.id)/comments", as: ben, json: CreateCommentRequest(body: "rude")
            ).decode(PlazaAPI.Comment.self)
            let second = try await api.call(
                .post, "/posts/\(post.id)/comments", as: ben, json: CreateCommentRequest(body: "ruder")
            ).decode(PlazaAPI.Comment.self)
            #expect(try await api.call(.put, "/users/ben/block", as: ana).status == .ok)
            #expect(try await api.call(.delete, "/comments/\(first.id)", as: ana).status == .noContent)
            // Its author may still take back their own.
            #expect(try await api.call(.delete, "/comments/\(second.id)", as: ben).status == .noContent)
            #expect(try await api.page("/posts/\(post.id)/comments", of: PlazaAPI.Comment.self).items.isEmpty)
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).counts.comments == 0)
        }
    }

    @Test func aBlockHidesProfilesBothWays() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            let blocked = try await api.call(.put, "/users/ben/block", as: ana)
            #expect(blocked.status == .ok)
            #expect(try blocked.decode(User.self).viewer?.blocking == true, "the blocker sees what they did")
            #expect(try await api.get("/users/ana", as: ben).status == .notFound)
            #expect(try await api.get("/users/ben", as: ana).status == .notFound)
            #expect(try await api.get("/users/ana", as: cat).status == .ok)
            #expect(try await api.get("/users/ana").status == .ok)
            // Ben's own block or unblock of Ana does not show him her profile.
            #expect(try await api.call(.delete, "/users/ana/block", as: ben).status == .notFound)
            #expect(
                try await api.call(.delete, "/users/ben/block", as: ana).decode(User.self).viewer?.blocking == false)
            #expect(try await api.get("/users/ana", as: ben).status == .ok)
        }
    }

    @Test(arguments: [true, false])
    func savedSearchSkipsTheTextOfPostsHiddenByABlock(authorBlocks: Bool) async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let post = try await api.textPost(ben, "a zebra crossing")
            let collection = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "Saved"))
                .decode(SavedCollection.self)
            #expect(
                try await api.call(
                    .post, "/collections/\(collection.id)/items", as: ana, json: SaveItemRequest(postId: post.id)
                ).status == .created)
            #expect(try await api.page("/search/saved?q=zebra", as: ana, of: CollectionItem.self).items.count == 1)
            if authorBlocks {
                #expect(try await api.call(.put, "/users/ana/block", as: ben).status == .ok)
            } else {
                #expect(try await api.call(.put, "/users/ben/block", as: ana).status == .ok)
            }
            #expect(try await api.page("/search/saved?q=zebra", as: ana, of: CollectionItem.self).items.isEmpty)
        }
    }

    @Test func deletingAPostDeletesTheItemsThatSavedIt() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let post = try await api.textPost(ana, "worth keeping")
            let other = try await api.textPost(ana, "also good")
            let collection = try await api.call(.post, "/collections", as: ben, json: CollectionRequest(name: "Saved"))
                .decode(SavedCollection.self)
            for id in [post.id, other.id] {
                #expect(
                    try await api.call(
                        .post, "/collections/\(collection.id)/items", as: ben, json: SaveItemRequest(postId: id)
                    ).status == .created)
            }
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            let items = try await api.page("/collections/\(collection.id)/items", as: ben, of: CollectionItem.self)
                .items
            #expect(items.map { $0.post?.id } == [other.id])
            let collections = try await api.page("/collections", as: ben, of: SavedCollection.self).items
            #expect(collections.first?.counts.items == 1)
        }
    }
}
