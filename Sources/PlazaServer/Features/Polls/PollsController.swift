import Hummingbird
import OpenAPIKit
import PlazaAPI

/// Voting in a post's poll; the poll itself is read with its post. Decisions are `PostActions.vote`'s.
struct PollsController: FeatureRoutes {
    let actions: PostActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.post("posts/{id}/poll/votes") { request, context in
            let body = try await request.decode(as: PollVoteRequest.self, context: context)
            return try await actions.vote(
                in: try context.parameters.id("id", "Post"), by: context.user.userID, choices: body.choices)
        }
        return routes
    }
}

extension OpenAPIDocument {
    static var pollOperations: [(String, Operation)] {
        [
            (
                "\(v1)/posts/{id}/poll/votes",
                Operation(
                    method: .post,
                    summary: """
                        Vote in the post's poll: one choice, or in a multiple-choice poll one or more (each option \
                        once, in one vote or several); the poll with its results. 422 already_voted, poll_expired, \
                        own_poll (its author sees the results); 404 for a post I may not read or one with no poll
                        """,
                    auth: .required, body: "PollVoteRequest", response: ref("Poll"), errors: [404, 422])
            )
        ]
    }
}
