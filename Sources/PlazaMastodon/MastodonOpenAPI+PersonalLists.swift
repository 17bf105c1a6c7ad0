import OpenAPIKit
import PlazaServer

extension OpenAPIDocument.MastodonOperations {
    /// A person's own lists and reports. Every list is paged by the numeric keys of its `Link`
    /// header (`max_id`, `since_id`, `min_id`).
    var personalLists: [(String, OpenAPIDocument.Operation)] {
        let v1 = OpenAPIDocument.v1
        return [
            ("\(v1)/blocks", op(.get, "Whom I block, newest block first", .required, accounts, query: accountPage)),
            ("\(v1)/mutes", op(.get, "Whom I mute, newest mute first", .required, accounts, query: accountPage)),
            (
                "\(v1)/favourites",
                op(
                    .get, "The posts I liked and may still read, newest like first", .required, statuses,
                    query: accountPage)
            ),
            (
                "\(v1)/bookmarks",
                op(
                    .get, "The posts in my Bookmarks collection I may still read, newest first", .required, statuses,
                    query: accountPage)
            ),
            (
                "\(v1)/accounts/{id}/featured_tags",
                op(
                    .get, "Empty: Plaza has no featured tags (404 for an unknown account)", .optional, empty,
                    errors: [404])
            ),
            (
                "\(v1)/mastodon/reports",
                op(
                    .post,
                    "Mastodon's POST /api/v1/reports: a request there that names an account_id (account_id, "
                        + "status_ids[], comment, category, rule_ids[]) is served here; any other is Plaza's own report",
                    .required, .object, body: true, errors: [404, 422])
            ),
        ]
    }
}
