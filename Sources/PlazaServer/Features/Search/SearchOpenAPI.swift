import OpenAPIKit

extension OpenAPIDocument {
    /// Search, reading history and recommendations.
    static var searchOperations: [(String, Operation)] {
        [searchPostsOperations, meHistoryPostIdOperations].flatMap { $0 }
    }

    private static var searchPostsOperations: [(String, Operation)] {
        [
            (
                "\(v1)/search/posts",
                Operation(
                    method: .get,
                    summary: """
                        Full-text search over posts: every word must match, the last as a prefix, "quoted phrases" \
                        in order; ranked by relevance, then newest; near= limits to a circle (nearest first without q); \
                        followed=true to the people I follow; in=place searches place names
                        """,
                    auth: .optional,
                    query: Params.page + [
                        Params.postQ, Params.searchIn, Params.space, Params.kind, Params.near, Params.radiusKm,
                        Params.followed,
                    ],
                    response: pageOf("Post"))
            ),
            (
                "\(v1)/search/users",
                Operation(
                    method: .get,
                    summary: "Accounts whose username or display name has words starting with each word of q",
                    auth: .optional, query: Params.page + [Params.searchQ], response: pageOf("User"))
            ),
            (
                "\(v1)/search/saved",
                Operation(
                    method: .get,
                    summary: """
                        My saved items whose link title, description, URL, note or saved post contain every word of q, \
                        newest first
                        """,
                    auth: .required, query: Params.page + [Params.searchQ], response: pageOf("CollectionItem"))
            ),
            (
                "\(v1)/posts/{id}/view",
                Operation(
                    method: .post, summary: "Record that I viewed the post (my reading history)", auth: .required,
                    status: 204, errors: [404])
            ),
            (
                "\(v1)/me/history",
                Operation(
                    method: .get,
                    summary: """
                        Posts I viewed; sort by when I last viewed them, when they were posted, or how often I viewed \
                        them; q and in search them
                        """,
                    auth: .required, query: Params.page + [Params.historySort, Params.historyQ, Params.searchIn],
                    response: pageOf("HistoryItem"))
            ),
        ]
    }

    private static var meHistoryPostIdOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/history/{postId}/click",
                Operation(
                    method: .post,
                    summary: "Record that I picked this post from search results (it must be in my history)",
                    auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/me/recommended",
                Operation(
                    method: .get,
                    summary: """
                        My viewed posts, most likely to be opened next first (docs/recommendations.md); one page, \
                        up to limit
                        """,
                    auth: .required, query: [Params.limit], response: pageOf("HistoryItem"))
            ),
        ]
    }
}
