import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Edit history: each edit of a post's text keeps the version before; those who boosted or
/// commented are told; Mastodon apps read it oldest first, and the source to edit.
@Suite("Edit history")
struct PostHistoryTests {
    @Test func editsKeepTheVersionBeforeAndTellBoostersAndCommenters() async throws {
        try await withApp { api async throws in
            let (ana, bob, cat) = try await api.register("ana", "bob", "cat")
            let post = try await api.textPost(ana, "first words", title: "Soup")
            _ = try await api.call(.put, "/posts/\(post.id)/boost", as: bob)
            #expect(
                try await api.call(
                    .post, "/posts/\(post.id)/comments", as: cat, json: CreateCommentRequest(body: "yum")
                )
                .status == .created)
            let edit = UpdatePostRequest(body: .set("second words"), contentWarning: .set("long"))
            #expect(try await api.call(.patch, "/posts/\(post.id)", as: ana, json: edit).status == .ok)
            let history = try await api.page("/posts/\(post.id)/history", of: PostVersion.self).items
            #expect(history.map(\.body) == ["second words", "first words"])
            #expect(history.map(\.contentWarning) == ["long", nil] && history.map(\.title) == ["Soup", "Soup"])
            #expect(history[0].createdAt >= history[1].createdAt)
            for person in [bob, cat] {
                let notes = try await api.page("/me/notifications", as: person, of: PlazaAPI.Notification.self).items
                #expect(notes.first?.kind == .edited && notes.first?.post?.id == post.id, "\(person.username)")
            }
            // An edit that only changes where or for whom keeps no version and tells nobody.
            #expect(
                try await api.call(.patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(price: .set("$3")))
                    .status == .ok)
            #expect(try await api.page("/posts/\(post.id)/history", of: PostVersion.self).items.count == 2)
            // Readable as the post is.
            let hidden = try await api.post(ana, CreatePostRequest(kind: .text, body: "friends", audience: .followers))
            #expect(try await api.get("/posts/\(hidden.id)/history", as: cat).status == .notFound)

            let token = try await api.mastodonToken(bob)
            let edits = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)/history", token: token).json()
            #expect(edits.array.map { $0["spoiler_text"]?.stringValue } == ["", "long"])
            #expect(edits.array.last?["content"]?.stringValue?.contains("second words") == true)
            let source = try await api.mastodon(.get, "/api/v1/statuses/\(post.id)/source", token: token).json()
            #expect(source["text"]?.stringValue == "second words" && source["spoiler_text"]?.stringValue == "long")
            let notes = try await api.mastodon(.get, "/api/v1/notifications", token: token).json().array
            #expect(notes.first?["type"]?.stringValue == "update")
        }
    }
}
