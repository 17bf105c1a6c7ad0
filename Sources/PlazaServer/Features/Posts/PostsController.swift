import Hummingbird
import PlazaAPI

/// Posts, their comments and likes: reads from the stores, changes through `PostActions`.
struct PostsController: FeatureRoutes {
    let actions: PostActions
    let people: PeopleStore
    var posts: PostStore { actions.posts }
    var comments: CommentStore { actions.comments }

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("posts/{id}", use: get)
        routes.get("posts/{id}/comments", use: listComments)
        routes.get("posts/{id}/likes", use: likers)
        routes.get("posts/{id}/boosts", use: boosters)
        routes.get("posts/{id}/history", use: history)
        signedIn.post("posts", use: create)
        signedIn.patch("posts/{id}", use: update)
        signedIn.delete("posts/{id}", use: delete)
        signedIn.post("posts/{id}/comments", use: createComment)
        signedIn.delete("comments/{id}", use: deleteComment)
        signedIn.put("posts/{id}/boost") { request, context in
            try await actions.boost(try context.parameters.id("id", "Post"), by: context.user.userID, true)
        }
        signedIn.delete("posts/{id}/boost") { request, context in
            try await actions.boost(try context.parameters.id("id", "Post"), by: context.user.userID, false)
        }
        signedIn.put("posts/{id}/like", use: like)
        signedIn.delete("posts/{id}/like", use: unlike)
        signedIn.post("posts/{id}/recommend", use: recommend)
        return routes
    }

    /// The post named in the path if the viewer may see it, else 404.
    private func visiblePost(_ context: some RequestContext, viewer: Int64?) async throws -> PostRecord {
        let id = try context.parameters.id("id", "Post")
        guard let record = try await posts.record(id: id, viewer: viewer) else { throw PlazaError.notFound("Post") }
        return record
    }

    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Post> {
        let body = try await request.decode(as: CreatePostRequest.self, context: context)
        let post = try await actions.create(by: context.user.userID, try PostRules.draft(body))
        return EditedResponse(status: .created, response: post)
    }

    /// Sends the post to people who follow me, as a notification: all or none of them (those who
    /// may not read it are passed over silently).
    @Sendable func recommend(_ request: Request, context: SignedInContext) async throws -> HTTPResponse.Status {
        let id = try context.parameters.id("id", "Post")
        let body = try await request.decode(as: RecommendPostRequest.self, context: context)
        guard (1...PostRules.maxRecipients).contains(body.to.count) else {
            throw PlazaError.invalid("to", "Name 1 to \(PostRules.maxRecipients) people.")
        }
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
        try await posts.shown(id: context.parameters.id("id", "Post"), viewer: context.viewerID)
    }

    @Sendable func update(_ request: Request, context: SignedInContext) async throws -> Post {
        let id = try context.parameters.id("id", "Post")
        let body = try await request.decode(as: UpdatePostRequest.self, context: context)
        return try await actions.update(id, by: context.user.userID) { try PostRules.changes(body, to: $0) }
    }

    @Sendable func delete(_ request: Request, context: SignedInContext) async throws -> Response {
        try await actions.delete(
            try context.parameters.id("id", "Post"), by: context.user.userID, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listComments(_ request: Request, context: PlazaContext) async throws -> Page<Comment> {
        let record = try await visiblePost(context, viewer: context.viewerID)
        return try await comments.comments(post: record.id, page: request.pageRequest(), viewer: context.viewerID)
    }

    @Sendable func createComment(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Comment> {
        let post = try context.parameters.id("id", "Post")
        let body = try await request.decode(as: CreateCommentRequest.self, context: context)
        let text = try Validate.requiredText(body.body, field: "body", max: PostRules.maxCommentLength)
        return EditedResponse(
            status: .created, response: try await actions.comment(on: post, by: context.user.userID, body: text))
    }

    @Sendable func deleteComment(_ request: Request, context: SignedInContext) async throws -> Response {
        try await actions.deleteComment(try context.parameters.id("id", "Comment"), by: context.user.userID)
        return Response(status: .noContent)
    }

    @Sendable func like(_ request: Request, context: SignedInContext) async throws -> LikeState {
        try await actions.like(try context.parameters.id("id", "Post"), by: context.user.userID, true)
    }

    @Sendable func unlike(_ request: Request, context: SignedInContext) async throws -> LikeState {
        try await actions.like(try context.parameters.id("id", "Post"), by: context.user.userID, false)
    }

    /// The post as it reads now, then each version an edit replaced, newest first.
    @Sendable func history(_ request: Request, context: PlazaContext) async throws -> Page<PostVersion> {
        let id = try context.parameters.id("id", "Post")
        guard let versions = try await posts.history.versions(of: id, viewer: context.viewerID) else {
            throw PlazaError.notFound("Post")
        }
        return Page(items: versions, nextCursor: nil)
    }

    @Sendable func boosters(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        let record = try await visiblePost(context, viewer: context.viewerID)
        return try await actions.boosts.boosters(
            post: record.id, page: request.pageRequest(), viewer: context.viewerID, people: people)
    }

    @Sendable func likers(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        let record = try await visiblePost(context, viewer: context.viewerID)
        return try await actions.likes.likers(
            post: record.id, page: request.pageRequest(), viewer: context.viewerID, people: people)
    }
}
