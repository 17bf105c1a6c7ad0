import OpenAPIKit

extension OpenAPIDocument {
    /// Profiles, follows and requests, friends, blocks, mutes, heatmaps.
    static var peopleOperations: [(String, Operation)] {
        [usersUsernameOperations, meFollowRequestsOperations, usersUsernameActivityOperations].flatMap { $0 }
    }

    private static var usersUsernameOperations: [(String, Operation)] {
        [
            (
                "\(v1)/users/{username}",
                Operation(
                    method: .get, summary: "A profile", auth: .optional, response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/follow",
                Operation(
                    method: .put,
                    summary: """
                        Follow (idempotent); a locked person is asked instead (viewer.requested, a follow_request \
                        notification to them)
                        """,
                    auth: .required, response: ref("User"), errors: [403, 404])
            ),
            (
                "\(v1)/users/{username}/follow",
                Operation(
                    method: .delete, summary: "Unfollow, or withdraw a pending request (idempotent)", auth: .required,
                    response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/friends",
                Operation(
                    method: .get, summary: "People who follow each other with the user, newest follow first",
                    auth: .optional, query: Params.page, response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/mute",
                Operation(
                    method: .put,
                    summary: "Mute (idempotent): hides their posts from my feeds, not from their profile; no block",
                    auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/users/{username}/mute",
                Operation(method: .delete, summary: "Unmute (idempotent)", auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/me/suggestions",
                Operation(
                    method: .get,
                    summary: """
                        People and spaces to follow, best first (up to 10 and 5): followed by people I follow, posting \
                        in my spaces or lately; spaces my people are in or lately posted to. Never me, anyone I follow \
                        or asked to, anyone hidden from me, or a space I am in
                        """,
                    auth: .required, response: ref("Suggestions"))
            ),
        ]
    }

    private static var meFollowRequestsOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/follow-requests",
                Operation(
                    method: .get, summary: "People asking to follow me, newest first", auth: .required,
                    query: Params.page,
                    response: pageOf("JoinRequest"))
            ),
            (
                "\(v1)/me/follow-requests/{username}",
                Operation(
                    method: .put, summary: "Approve a follow request: they follow me", auth: .required, status: 204,
                    errors: [404])
            ),
            (
                "\(v1)/me/follow-requests/{username}",
                Operation(
                    method: .delete, summary: "Deny a follow request", auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/users/{username}/followers",
                Operation(
                    method: .get, summary: "Followers, newest first", auth: .optional, query: Params.page,
                    response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/following",
                Operation(
                    method: .get, summary: "Whom the user follows, newest first", auth: .optional, query: Params.page,
                    response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/block",
                Operation(
                    method: .put, summary: "Block: hides each side's content from the other and ends follows",
                    auth: .required, response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/block",
                Operation(
                    method: .delete, summary: "Unblock", auth: .required, response: ref("User"), errors: [404])
            ),
        ]
    }

    private static var usersUsernameActivityOperations: [(String, Operation)] {
        [
            (
                "\(v1)/users/{username}/activity",
                Operation(
                    method: .get,
                    summary: """
                        Activity heatmap: per day, activities posted and completed, and the streak of days with one \
                        completed; days are counted in the owner's preferences.timeZone (UTC when unset), or in tz
                        """,
                    auth: .optional, query: [Params.days, Params.tz], response: ref("ActivityHeatmap"),
                    errors: [404, 422])
            )
        ]
    }
}
