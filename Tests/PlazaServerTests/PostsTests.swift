import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Posts, comments and likes")
struct PostsTests {
    @Test func createsEachKindWithEveryField() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let text = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .text, title: "  Question  ", body: "Why?",
                    location: Location(latitude: 40.7, longitude: -74, name: "NYC"), price: "$5"))
            #expect(text.kind == .text)
            #expect(text.title == "Question")
            #expect(text.body == "Why?")
            #expect(text.location == Location(latitude: 40.7, longitude: -74, name: "NYC"))
            #expect(text.price == "$5")
            #expect(text.author.username == "ana")
            #expect(text.counts == Post.Counts(likes: 0, comments: 0))
            #expect(text.viewer == Post.Viewer(liked: false, saved: false))
            #expect(
                text.spaces.isEmpty && text.media.isEmpty && text.link == nil && text.activity == nil
                    && text.editedAt == nil)

            let link = try await api.post(
                ana, CreatePostRequest(kind: .link, body: "Look", link: LinkInput(url: "https://example.com/a")))
            #expect(link.link?.url == "https://example.com/a")
            #expect(link.link?.fetchedAt == nil)

            let activity = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .activity, body: "Run",
                    activity: ActivityInput(type: "Running", emoji: "🏃", color: "#FF8800", progress: 100)))
            #expect(activity.activity?.type == "Running")
            #expect(activity.activity?.color == "#ff8800")
            #expect(activity.activity?.progress == 100)
            #expect(activity.activity?.completedAt != nil)

            #expect(try await api.get("/posts/\(text.id)").decode(Post.self) == text)
            #expect(try await api.get("/users/ana").decode(User.self).counts.posts == 3)
            // Explicit nulls for empty fields, as the contract lists them.
            let raw = try await api.get("/posts/\(link.id)").text
            #expect(
                raw.contains(#""activity":null"#) && raw.contains(#""title":null"#) && raw.contains(#""editedAt":null"#)
            )
        }
    }

    @Test func createValidatesInput() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let cases: [(String, Int, String?)] = [
                (#"{"kind": "text"}"#, 422, "body"),
                (#"{"kind": "text", "body": "   "}"#, 422, "body"),
                (#"{"kind": "poem", "body": "x"}"#, 422, "kind"),
                (#"{"body": "x"}"#, 422, "kind"),
                (#"{"kind": "text", "title": "\#(String(repeating: "t", count: 301))"}"#, 422, "title"),
                (#"{"kind": "text", "body": 12}"#, 422, "body"),
                (#"{"kind": "link"}"#, 422, "link.url"),
                (#"{"kind": "link", "link": {"url": "javascript:alert(1)"}}"#, 422, "link.url"),
                (#"{"kind": "activity", "activity": {"type": "Run", "progress": 101}}"#, 422, "activity.progress"),
                (#"{"kind": "activity", "activity": {"type": "Run", "color": "red"}}"#, 422, "activity.color"),
                (#"{"kind": "activity", "activity": {"progress": 5}}"#, 422, "activity.type"),
                (#"{"kind": "text", "body": "x", "activity": {"type": "Run"}}"#, 422, "activity"),
                (
                    #"{"kind": "text", "body": "x", "location": {"latitude": 91, "longitude": 0}}"#, 422,
                    "location.latitude"
                ),
                (
                    #"{"kind": "text", "body": "x", "location": {"latitude": 0, "longitude": -181}}"#, 422,
                    "location.longitude"
                ),
                (#"{"kind": "text", "body": "x", "spaces": ["nowhere"]}"#, 422, "spaces"),
                (#"{"kind": "photo", "mediaIds": []}"#, 422, "mediaIds"),
                (#"{"kind": "text", "body": "x""#, 400, nil),
                (#"[1, 2]"#, 400, nil),
                ("", 400, nil),
            ]
            for (body, status, field) in cases {
                let response = try await api.call(.post, "/posts", as: ana, raw: body)
                #expect(response.status.code == status, "\(body): \(response.text)")
                #expect(response.error?.field == field, "\(body): \(response.text)")
            }
            #expect(try await api.get("/users/ana").decode(User.self).counts.posts == 0)
            #expect(
                try await api.call(.post, "/posts", json: CreatePostRequest(kind: .text, body: "anon")).status
                    == .unauthorized)
            let form = try await api.call(
                .post, "/posts", as: ana, raw: "kind=text", headers: [.contentType: "application/x-www-form-urlencoded"]
            )
            #expect(form.status == .unsupportedMediaType)
        }
    }

    @Test func onlyTheAuthorEditsAndPatchKeepsOrClearsFields() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .text, title: "T", body: "B", location: Location(latitude: 1, longitude: 2), price: "$1"))
            #expect(try await api.call(.patch, "/posts/\(post.id)", raw: #"{"body": "x"}"#).status == .unauthorized)
            #expect(
                try await api.call(.patch, "/posts/\(post.id)", as: bob, raw: #"{"body": "x"}"#).status == .forbidden)
            let edited = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, raw: #"{"body": "New", "price": null, "location": null}"#)
            #expect(edited.status == .ok)
            let after = try edited.decode(Post.self)
            #expect(after.title == "T")
            #expect(after.body == "New")
            #expect(after.price == nil && after.location == nil)
            #expect(after.editedAt != nil)
            #expect(
                try await api.call(.patch, "/posts/\(post.id)", as: ana, raw: #"{"title": null, "body": null}"#).status
                    == .unprocessableContent)
            #expect(
                try await api.call(.patch, "/posts/\(post.id)", as: ana, raw: #"{"activity": {"progress": 5}}"#).status
                    == .unprocessableContent)
            #expect(try await api.call(.patch, "/posts/123", as: ana, raw: #"{"body": "x"}"#).status == .notFound)
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).body == "New")
        }
    }

    @Test func activityProgressSetsAndClearsCompletion() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.post(
                ana, CreatePostRequest(kind: .activity, activity: ActivityInput(type: "Read", progress: 10)))
            #expect(post.activity?.completedAt == nil)
            let done = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 100))
            ).decode(Post.self)
            let completedAt = try #require(done.activity?.completedAt)
            #expect(done.activity?.type == "Read")
            let again = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 100))
            ).decode(Post.self)
            #expect(again.activity?.completedAt == completedAt)
            let reopened = try await api.call(
                .patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(activity: ActivityInput(progress: 60))
            ).decode(Post.self)
            #expect(reopened.activity?.progress == 60)
            #expect(reopened.activity?.completedAt == nil)
            #expect(
                try await api.call(.patch, "/posts/\(post.id)", as: ana, raw: #"{"activity": {"progress": -1}}"#).status
                    == .unprocessableContent)
        }
    }

    @Test func deletingAPostTakesItsCommentsAndLikes() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "bye soon")
            let comment = try await api.call(
                .post, "/posts/\(post.id)/comments", as: bob, json: CreateCommentRequest(body: "hi")
            ).decode(PlazaAPI.Comment.self)
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: bob)
            #expect(try await api.call(.delete, "/posts/\(post.id)").status == .unauthorized)
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: bob).status == .forbidden)
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await api.get("/posts/\(post.id)").status == .notFound)
            #expect(try await api.get("/posts/\(post.id)/comments").status == .notFound)
            #expect(try await api.call(.delete, "/comments/\(comment.id)", as: bob).status == .notFound)
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .notFound)
            #expect(try await api.get("/users/ana").decode(User.self).counts.posts == 0)
        }
    }

    @Test func commentsAreOldestFirstAndDeletableByTheirOrPostsAuthor() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            let post = try await api.textPost(ana, "question")
            var ids: [String] = []
            for (who, text) in [(bob, "first"), (carol, "second"), (bob, "third")] {
                let response = try await api.call(
                    .post, "/posts/\(post.id)/comments", as: who, json: CreateCommentRequest(body: text))
                #expect(response.status == .created)
                let comment = try response.decode(PlazaAPI.Comment.self)
                #expect(comment.postId == post.id && comment.author.username == who.username && comment.body == text)
                ids.append(comment.id)
            }
            let first = try await api.page("/posts/\(post.id)/comments?limit=2", of: PlazaAPI.Comment.self)
            #expect(first.items.map(\.body) == ["first", "second"])
            let rest = try await api.page(
                "/posts/\(post.id)/comments?limit=2&cursor=\(try #require(first.nextCursor))", of: PlazaAPI.Comment.self
            )
            #expect(rest.items.map(\.body) == ["third"])
            #expect(rest.nextCursor == nil)
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).counts.comments == 3)

            #expect(
                try await api.call(.post, "/posts/\(post.id)/comments", json: CreateCommentRequest(body: "anon")).status
                    == .unauthorized)
            #expect(
                try await api.call(.post, "/posts/\(post.id)/comments", as: bob, json: CreateCommentRequest(body: " "))
                    .status == .unprocessableContent)
            #expect(
                try await api.call(.post, "/posts/999/comments", as: bob, json: CreateCommentRequest(body: "x")).status
                    == .notFound)
            #expect(try await api.call(.delete, "/comments/\(ids[0])").status == .unauthorized)
            #expect(try await api.call(.delete, "/comments/\(ids[0])", as: carol).status == .forbidden)
            #expect(try await api.call(.delete, "/comments/\(ids[0])", as: bob).status == .noContent)
            #expect(try await api.call(.delete, "/comments/\(ids[1])", as: ana).status == .noContent)
            #expect(
                try await api.page("/posts/\(post.id)/comments", of: PlazaAPI.Comment.self).items.map(\.body) == [
                    "third"
                ])
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).counts.comments == 1)
        }
    }

    @Test func likesAreIdempotentCountedAndListed() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            let post = try await api.textPost(ana, "like me")
            for _ in 0..<2 {
                #expect(
                    try await api.call(.put, "/posts/\(post.id)/like", as: bob).decode(LikeState.self)
                        == LikeState(liked: true, likes: 1))
            }
            #expect(
                try await api.call(.put, "/posts/\(post.id)/like", as: carol).decode(LikeState.self)
                    == LikeState(liked: true, likes: 2))
            #expect(try await api.get("/posts/\(post.id)", as: bob).decode(Post.self).viewer.liked)
            #expect(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).viewer.liked == false)
            #expect(
                try await api.page("/posts/\(post.id)/likes", of: User.self).items.map(\.username) == ["carol", "bob"])
            for _ in 0..<2 {
                #expect(
                    try await api.call(.delete, "/posts/\(post.id)/like", as: bob).decode(LikeState.self)
                        == LikeState(liked: false, likes: 1))
            }
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).counts.likes == 1)
            #expect(try await api.call(.put, "/posts/\(post.id)/like").status == .unauthorized)
            #expect(try await api.call(.put, "/posts/12345/like", as: bob).status == .notFound)
        }
    }

    @Test func concurrentWritesKeepCountsExact() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "popular")
            var fans: [Account] = []
            for i in 0..<12 { fans.append(try await api.register("fan\(i)")) }
            let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
                for fan in fans {
                    group.addTask {
                        [
                            try await api.call(.put, "/posts/\(post.id)/like", as: fan).status,
                            try await api.call(
                                .post, "/posts/\(post.id)/comments", as: fan, json: CreateCommentRequest(body: "me too")
                            ).status,
                            try await api.call(.put, "/users/ana/follow", as: fan).status,
                        ]
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.allSatisfy { $0 == .ok || $0 == .created }, "\(statuses)")
            let after = try await api.get("/posts/\(post.id)").decode(Post.self)
            #expect(after.counts == Post.Counts(likes: 12, comments: 12))
            #expect(try await api.get("/users/ana").decode(User.self).counts.followers == 12)
        }
    }

    @Test func oversizedBodiesAre413AndNothingIsStored() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let huge = #"{"kind": "text", "body": "\#(String(repeating: "x", count: 70_000))"}"#
            let response = try await api.call(.post, "/posts", as: ana, raw: huge)
            #expect(response.status == .contentTooLarge)
            #expect(response.error?.code == "payload_too_large")
            #expect(try await api.get("/users/ana").decode(User.self).counts.posts == 0)
        }
    }

    @Test func unknownRoutesAndIDsAreJSON404s() async throws {
        try await withApp { api async throws in
            for path in ["/nothing-here", "/posts/abc", "/posts/-1", "/posts/99999999999999999999"] {
                let response = try await api.get(path)
                #expect(response.status == .notFound, "\(path)")
                #expect(response.error?.code == "not_found", "\(path)")
            }
        }
    }
}
