import OpenAPIKit

extension OpenAPIDocument {
    /// The event stream.
    static var realtimeOperations: [(String, Operation)] {
        [
            (
                "\(v1)/stream",
                Operation(
                    method: .get,
                    summary: """
                        My events as Server-Sent Events: post.created, post.updated, post.deleted, comment.created, \
                        like.changed, notification; then ready (live), reset (resume point too old). Resume with the \
                        Last-Event-ID header or lastEventId
                        """,
                    auth: .required, query: [Params.lastEventId], eventStream: true)
            )
        ]
    }
}
