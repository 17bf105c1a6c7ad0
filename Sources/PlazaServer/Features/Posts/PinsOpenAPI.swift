import OpenAPIKit

extension OpenAPIDocument {
    /// Pins: to my profile, or by a space's moderators to its top; the pinned lists.
    static var pinOperations: [(String, Operation)] {
        let space = OpenAPI.Parameter.query(
            name: "space", schema: .string(maxLength: SpaceRules.maxSlugLength),
            description: "a space's slug: pin to the top of that space (its owner and moderators) instead of my profile"
        )
        return [
            (
                "\(v1)/posts/{id}/pin",
                Operation(
                    method: .put,
                    summary: """
                        Pin my post to my profile, or with space= a post in it to the space's top (idempotent; \
                        \(PostRules.maxPins) at most: 422 too_many_pins; 403 not_author, not_moderator; \
                        422 not_in_space)
                        """,
                    auth: .required, query: [space], response: ref("Post"), errors: [403, 404, 422])
            ),
            (
                "\(v1)/posts/{id}/pin",
                Operation(
                    method: .delete, summary: "Unpin (idempotent), from my profile or with space= from the space",
                    auth: .required, query: [space], response: ref("Post"), errors: [403, 404])
            ),
            (
                "\(v1)/users/{username}/pinned",
                Operation(
                    method: .get, summary: "The posts the person pinned to their profile, newest pin first",
                    auth: .optional, response: pageOf("Post"), errors: [404])
            ),
            (
                "\(v1)/spaces/{slug}/pinned",
                Operation(
                    method: .get,
                    summary: "The space's pinned posts, newest pin first (a closed or private space's for its members)",
                    auth: .optional, response: pageOf("Post"), errors: [404])
            ),
        ]
    }
}
