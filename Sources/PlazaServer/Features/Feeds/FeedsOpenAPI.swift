import OpenAPIKit

extension OpenAPIDocument {
    /// Home, global and a person's feeds.
    static var feedOperations: [(String, Operation)] {
        [
            (
                "\(v1)/users/{username}/posts",
                Operation(
                    method: .get, summary: "A user's posts, newest first", auth: .optional, query: Params.feed,
                    response: pageOf("Post"), errors: [404])
            ),
            (
                "\(v1)/feed/home",
                Operation(
                    method: .get, summary: "My posts and those of people I follow, newest first", auth: .required,
                    query: Params.feed, response: pageOf("Post"))
            ),
            (
                "\(v1)/feed/global",
                Operation(
                    method: .get, summary: "All posts, newest first", auth: .optional, query: Params.feed,
                    response: pageOf("Post"))
            ),
        ]
    }
}
