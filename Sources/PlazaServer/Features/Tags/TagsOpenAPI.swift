import OpenAPIKit

extension OpenAPIDocument {
    /// Hashtags: their posts, following them, suggestions, trends.
    static var tagOperations: [(String, Operation)] {
        trendOperations + [
            (
                "\(v1)/hashtags",
                Operation(
                    method: .get, summary: "Tags that start with q (a leading # is left out), for a composer",
                    auth: .optional, query: [Params.q] + Params.page,
                    response: pageOf("HashtagSummary"))
            ),
            (
                "\(v1)/hashtags/{tag}",
                Operation(
                    method: .get, summary: "A hashtag (404 for a name that is no tag)", auth: .optional,
                    response: ref("HashtagSummary"), errors: [404])
            ),
            (
                "\(v1)/hashtags/{tag}/posts",
                Operation(
                    method: .get, summary: "Public posts with the tag, newest first", auth: .optional,
                    query: Params.page + [Params.since, Params.until, Params.kind], response: pageOf("Post"),
                    errors: [404])
            ),
            (
                "\(v1)/hashtags/{tag}/follow",
                Operation(
                    method: .put,
                    summary: """
                        Follow a tag: its public posts come into my home feed, its latest at once \
                        (422 too_many_followed_tags past \\(TagStore.maxFollowed))
                        """,
                    auth: .required, status: 204, errors: [404, 422])
            ),
            (
                "\(v1)/hashtags/{tag}/follow",
                Operation(
                    method: .delete, summary: "Unfollow a tag: the posts it brought leave my home feed",
                    auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/me/followed-hashtags",
                Operation(
                    method: .get, summary: "The tags I follow", auth: .required, response: pageOf("HashtagSummary"))
            ),
        ]
    }

    /// What is trending, and the staff's say over it.
    private static var trendOperations: [(String, Operation)] {
        [
            (
                "\(v1)/trending/hashtags",
                Operation(
                    method: .get,
                    summary:
                        "The tags the most people used in public posts over the last 3 days, today's counting most",
                    auth: .optional, query: [Params.limit], response: pageOf("HashtagSummary"))
            ),
            (
                "\(v1)/trending/posts",
                Operation(
                    method: .get, summary: "The public posts the most people liked or boosted over the last 3 days",
                    auth: .optional, query: [Params.limit], response: pageOf("Post"))
            ),
            (
                "\(v1)/trending/links",
                Operation(
                    method: .get, summary: "The links the most people shared in public posts over the last 3 days",
                    auth: .optional, query: [Params.limit], response: pageOf("LinkPreview"))
            ),
            (
                "\(v1)/admin/hashtags/{tag}/trendable",
                Operation(
                    method: .put, summary: "Let a tag trend again (admins and moderators)", auth: .required,
                    status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/admin/hashtags/{tag}/trendable",
                Operation(
                    method: .delete, summary: "Keep a tag out of the trends (admins and moderators)",
                    auth: .required, status: 204, errors: [403, 404])
            ),
        ]
    }
}
