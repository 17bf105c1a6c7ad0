import Hummingbird
import PlazaAPI

extension Post: ResponseEncodable {}
extension Comment: ResponseEncodable {}
extension LikeState: ResponseEncodable {}

/// Posts, their comments and likes.
struct PostsController {
    let posts: PostStore
    let comments: CommentStore
    let likes: LikeStore
    let people: PeopleStore
    let storage: any MediaStorage
    let previews: WorkSignal

    func register(to api: RouterGroup<PlazaContext>) {
        api.get("posts/{id}", use: get)
        api.get("posts/{id}/comments", use: listComments)
        api.get("posts/{id}/likes", use: likers)
        let signedIn = api.signedIn
        signedIn.post("posts", use: create)
        signedIn.patch("posts/{id}", use: update)
        signedIn.delete("posts/{id}", use: delete)
        signedIn.post("posts/{id}/comments", use: createComment)
        signedIn.delete("comments/{id}", use: deleteComment)
        signedIn.put("posts/{id}/like", use: like)
        signedIn.delete("posts/{id}/like", use: unlike)
        signedIn.post("posts/{id}/recommend", use: recommend)
    }

    /// The post named in the path if the viewer may see it, else 404.
    private func visiblePost(_ context: some RequestContext, viewer: Int64?) async throws -> PostRecord {
        let id = try context.parameters.id("id", "Post")
        guard let record = try await posts.record(id: id, viewer: viewer) else { throw PlazaError.notFound("Post") }
        return record
    }

    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Post> {
        let me = context.user
        let body = try await request.decode(as: CreatePostRequest.self, context: context)
        let draft = try PostRules.draft(body)
        let post = try await posts.create(author: me.userID, draft)
        if post.link?.fetchedAt == nil, post.link != nil { previews.wake() }
        return EditedResponse(status: .created, response: post)
    }

    /// Sends the post to people who follow me, as a notification: all or none of them (those who
    /// may not read it are passed over silently).
    @Sendable func recommend(_ request: Request, context: SignedInContext) async throws -> HTTPResponse.Status {
        let id = try context.parameters.id("id", "Post")
        let body = try await request.decode(as: RecommendPostRequest.self, context: context)
        guard (1...20).contains(body.to.count) else { throw PlazaError.invalid("to", "Name 1 to 20 people.") }
        guard let refused = try await posts.recommend(post: id, by: context.user.userID, to: body.to) else {
            throw PlazaError.notFound("Post")
        }
        guard refused.isEmpty else {
            throw PlazaError(
                .unprocessableContent, "cannot_recommend",
                "Only people who follow you can get it: not \(refused.joined(separator: ", ")).",
                field: "to")
        }
        return .noContent
    }

    @Sendable func get(_ request: Request, context: PlazaContext) async throws -> Post {
        try await visiblePost(context, viewer: context.viewerID).post
    }

    @Sendable func update(_ request: Request, context: SignedInContext) async throws -> Post {
        let me = context.user
        let record = try await visiblePost(context, viewer: me.userID)
        guard record.authorID == me.userID else {
            throw PlazaError(.forbidden, "not_author", "Only the author can edit this post.")
        }
        let body = try await request.decode(as: UpdatePostRequest.self, context: context)
        let changes = try PostRules.changes(body, to: record.post)
        try await posts.update(record, changes)
        return try await posts.post(id: record.id, viewer: me.userID)
    }

    @Sendable func delete(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let record = try await visiblePost(context, viewer: me.userID)
        guard record.authorID == me.userID else {
            throw PlazaError(.forbidden, "not_author", "Only the author can delete this post.")
        }
        let media = try await posts.delete(id: record.id, author: me.userID)
        await storage.deleteFiles(ofMedia: media, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listComments(_ request: Request, context: PlazaContext) async throws -> Page<Comment> {
        let record = try await visiblePost(context, viewer: context.viewerID)
        return try await comments.comments(post: record.id, page: request.pageRequest(), viewer: context.viewerID)
    }

    @Sendable func createComment(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Comment> {
        let me = context.user
        let post = try context.parameters.id("id", "Post")
        let body = try await request.decode(as: CreateCommentRequest.self, context: context)
        let text = try Validate.requiredText(body.body, field: "body", max: PostRules.maxCommentLength)
        return EditedResponse(
            status: .created, response: try await comments.create(post: post, author: me.userID, body: text))
    }

    @Sendable func deleteComment(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let id = try context.parameters.id("id", "Comment")
        guard let owners = try await comments.owners(comment: id, viewer: me.userID) else {
            throw PlazaError.notFound("Comment")
        }
        guard owners.commentAuthor == me.userID || owners.postAuthor == me.userID else {
            throw PlazaError(.forbidden, "not_allowed", "Only the comment's author or the post's author can delete it.")
        }
        try await comments.delete(comment: id)
        return Response(status: .noContent)
    }

    @Sendable func like(_ request: Request, context: SignedInContext) async throws -> LikeState {
        let me = context.user
        return try await likes.set(post: context.parameters.id("id", "Post"), user: me.userID, liked: true)
    }

    @Sendable func unlike(_ request: Request, context: SignedInContext) async throws -> LikeState {
        let me = context.user
        return try await likes.set(post: context.parameters.id("id", "Post"), user: me.userID, liked: false)
    }

    @Sendable func likers(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        let record = try await visiblePost(context, viewer: context.viewerID)
        return try await likes.likers(
            post: record.id, page: request.pageRequest(), viewer: context.viewerID, people: people)
    }
}
