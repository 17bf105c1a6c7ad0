import OpenAPIKit

extension OpenAPIDocument {
    /// Spaces, their members, requests, bans and invitations.
    static var spaceOperations: [(String, Operation)] {
        [spacesOperations, spacesSlugMembersOperations, spacesSlugRequestsOperations].flatMap { $0 }
    }

    private static var spacesOperations: [(String, Operation)] {
        [
            (
                "\(v1)/spaces",
                Operation(
                    method: .get,
                    summary: "Spaces, newest first; q searches slug and name; member=true lists the ones I joined",
                    auth: .optional, query: Params.page + [Params.q, Params.member], response: pageOf("Space"))
            ),
            (
                "\(v1)/spaces",
                Operation(
                    method: .post, summary: "Create a space; I own and join it", auth: .required,
                    body: "CreateSpaceRequest", status: 201, response: ref("Space"), errors: [409], links: spaceLinks)
            ),
            (
                "\(v1)/spaces/{slug}",
                Operation(
                    method: .get, summary: "A space; signed in, it becomes my lastSpace preference", auth: .optional,
                    response: ref("Space"), errors: [404])
            ),
            (
                "\(v1)/spaces/{slug}",
                Operation(
                    method: .patch, summary: "Edit my space (owner only); imageId null removes the image",
                    auth: .required,
                    body: "UpdateSpaceRequest", response: ref("Space"), errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/membership",
                Operation(
                    method: .put, summary: "Join an open space (idempotent)", auth: .required, response: ref("Space"),
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/membership",
                Operation(
                    method: .delete, summary: "Leave (idempotent; not the owner)", auth: .required,
                    response: ref("Space"),
                    errors: [404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/feed",
                Operation(
                    method: .get,
                    summary: "Posts in the space, newest first (a closed or private space's only for its members)",
                    auth: .optional, query: Params.feed, response: pageOf("Post"), errors: [404])
            ),
        ]
    }

    private static var spacesSlugMembersOperations: [(String, Operation)] {
        [
            (
                "\(v1)/spaces/{slug}/members",
                Operation(
                    method: .get, summary: "Members and their roles, earliest first (closed and private: members only)",
                    auth: .optional, query: Params.page, response: pageOf("SpaceMember"), errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/members/{username}",
                Operation(
                    method: .patch, summary: "Make a member a moderator or a moderator a member (owner only)",
                    auth: .required, body: "UpdateMemberRequest", response: ref("SpaceMember"),
                    errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/members/{username}",
                Operation(
                    method: .delete, summary: "Remove a member (moderators; a moderator only by the owner)",
                    auth: .required, status: 204, errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/bans/{username}",
                Operation(
                    method: .put, summary: "Ban: remove and keep out (moderators)", auth: .required, status: 204,
                    errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/bans/{username}",
                Operation(
                    method: .delete, summary: "Lift a ban (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/posts/{id}",
                Operation(
                    method: .delete, summary: "Take a post out of the space (moderators; it stays its author's)",
                    auth: .required, status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/requests",
                Operation(
                    method: .post, summary: "Ask to join a closed space (idempotent)", auth: .required, status: 202,
                    errors: [403, 404, 409, 422])
            ),
            (
                "\(v1)/spaces/{slug}/requests",
                Operation(
                    method: .get, summary: "Pending join requests, oldest first (moderators)", auth: .required,
                    query: Params.page, response: pageOf("JoinRequest"), errors: [403, 404])
            ),
        ]
    }

    private static var spacesSlugRequestsOperations: [(String, Operation)] {
        [
            (
                "\(v1)/spaces/{slug}/requests/{username}",
                Operation(
                    method: .put, summary: "Approve a join request (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/requests/{username}",
                Operation(
                    method: .delete, summary: "Deny a join request (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/invites",
                Operation(
                    method: .post, summary: "Make an invite link (moderators); the code is shown once",
                    auth: .required, body: "CreateInviteRequest", status: 201, response: ref("SpaceInvite"),
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/join/{code}",
                Operation(
                    method: .post, summary: "Join with an invite code", auth: .required, response: ref("Space"),
                    errors: [403, 404])
            ),
        ]
    }
}
