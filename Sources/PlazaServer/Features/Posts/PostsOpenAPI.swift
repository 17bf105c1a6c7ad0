import OpenAPIKit

extension OpenAPIDocument {
    /// Posts, comments, likes and recommendations.
    static var postOperations: [(String, Operation)] {
        [postsOperations, postsIdLikeOperations].flatMap { $0 }
    }

    private static var postsOperations: [(String, Operation)] {
        [
            (
                "\(v1)/posts",
                Operation(
                    method: .post,
                    summary: """
                        Create a post; a link not previewed before counts against the daily cap of link previews \
                        (429 daily_link_preview_limit)
                        """,
                    auth: .required, body: "CreatePostRequest", status: 201, response: ref("Post"), links: postLinks)
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .get, summary: "One post", auth: .optional, response: ref("Post"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .patch, summary: "Edit my post; null clears a field", auth: .required,
                    body: "UpdatePostRequest", response: ref("Post"), errors: [403, 404])
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .delete, summary: "Delete my post with its comments and likes", auth: .required,
                    status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/posts/{id}/comments",
                Operation(
                    method: .get, summary: "Comments, oldest first", auth: .optional, query: Params.page,
                    response: pageOf("Comment"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}/comments",
                Operation(
                    method: .post, summary: "Comment on a post", auth: .required, body: "CreateCommentRequest",
                    status: 201, response: ref("Comment"), errors: [404],
                    links: [(operationID: "deleteCommentsId", parameter: "id", pointer: "/id")])
            ),
            (
                "\(v1)/comments/{id}",
                Operation(
                    method: .delete, summary: "Delete a comment (its author or the post's author)", auth: .required,
                    status: 204, errors: [403, 404])
            ),
        ]
    }

    private static var postsIdLikeOperations: [(String, Operation)] {
        [
            (
                "\(v1)/posts/{id}/like",
                Operation(
                    method: .put, summary: "Like (idempotent)", auth: .required, response: ref("LikeState"),
                    errors: [404])
            ),
            (
                "\(v1)/posts/{id}/like",
                Operation(
                    method: .delete, summary: "Unlike (idempotent)", auth: .required, response: ref("LikeState"),
                    errors: [404])
            ),
            (
                "\(v1)/posts/{id}/recommend",
                Operation(
                    method: .post,
                    summary:
                        "Recommend the post to people who follow me (a notification each; 422 cannot_recommend names any who do not follow me, and then nobody is sent it; those who may not read the post are passed over silently)",
                    auth: .required, body: "RecommendPostRequest", status: 204, errors: [404, 422])
            ),
            (
                "\(v1)/posts/{id}/boost",
                Operation(
                    method: .put,
                    summary: """
                        Boost a public post to my followers (idempotent; 422 not_boostable for one that is not public)
                        """,
                    auth: .required, response: ref("Post"), errors: [404, 422])
            ),
            (
                "\(v1)/posts/{id}/boost",
                Operation(
                    method: .delete, summary: "Undo my boost (idempotent)", auth: .required, response: ref("Post"),
                    errors: [404])
            ),
            (
                "\(v1)/posts/{id}/history",
                Operation(
                    method: .get,
                    summary: "The post as it reads now, then each version an edit of its text replaced, newest first",
                    auth: .optional, response: pageOf("PostVersion"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}/boosts",
                Operation(
                    method: .get, summary: "Who boosted the post, newest first", auth: .optional, query: Params.page,
                    response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}/likes",
                Operation(
                    method: .get, summary: "Who liked the post, newest first", auth: .optional, query: Params.page,
                    response: pageOf("User"), errors: [404])
            ),
        ]
    }
}
