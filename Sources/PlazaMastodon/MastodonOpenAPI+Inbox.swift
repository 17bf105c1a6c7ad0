import OpenAPIKit
import PlazaServer

extension OpenAPIDocument.MastodonOperations {
    /// Notification counts and policy, suggestions, and the instance's smaller endpoints.
    var inbox: [(String, OpenAPIDocument.Operation)] {
        let count = OpenAPIDocument.mastodonLimit(100, 1000)
        let refused = "anything but accept is 422 (Plaza does not filter notifications)"
        return [
            (
                "\(OpenAPIDocument.v1)/notifications/unread_count",
                op(.get, "How many notifications are unread (capped at limit)", .required, .object, query: [count])
            ),
            (
                "\(v2)/notifications/unread_count",
                op(
                    .get, "How many notification groups are unread (capped at limit)", .required, .object,
                    query: [count])
            ),
            (
                "\(v2)/notifications/{group_key}",
                op(.get, "One group of my notifications (plaza-<id>)", .required, .object, errors: [404])
            ),
            ("\(v2)/notifications/policy", op(.get, "Every category accepted: Plaza filters none", .required, .object)),
            (
                "\(v2)/notifications/policy",
                op(.patch, "Accepted as it is; \(refused)", .required, .object, body: true, errors: [422])
            ),
            (
                "\(OpenAPIDocument.v1)/notifications/policy",
                op(.get, "Nothing filtered: Plaza filters none", .required, .object)
            ),
            (
                "\(OpenAPIDocument.v1)/notifications/policy",
                op(.patch, "Accepted as it is; \(refused)", .required, .object, body: true, errors: [422])
            ),
            (
                "\(OpenAPIDocument.v1)/notifications/requests",
                op(.get, "Empty: Plaza holds back no notifications", .required, empty)
            ),
        ]
    }

    /// Suggestions and the instance's smaller endpoints.
    var suggestionsAndInstance: [(String, OpenAPIDocument.Operation)] {
        [
            (
                "\(OpenAPIDocument.v1)/suggestions",
                op(
                    .get, "People to follow (Plaza's own suggestions)", .required, accounts,
                    query: [OpenAPIDocument.mastodonLimit(40, 80)])
            ),
            (
                "\(v2)/suggestions",
                op(
                    .get, "People to follow, each with why (source, sources)", .required, .array(items: .object),
                    query: [OpenAPIDocument.mastodonLimit(40, 80)])
            ),
            (
                "\(OpenAPIDocument.v1)/instance/peers",
                op(.get, "Empty: Plaza does not federate", .none, .array(items: .string))
            ),
            ("\(OpenAPIDocument.v1)/instance/activity", op(.get, "Empty: no weekly statistics", .none, empty)),
            ("\(OpenAPIDocument.v1)/instance/domain_blocks", op(.get, "Empty: Plaza does not federate", .none, empty)),
            (
                "\(OpenAPIDocument.v1)/instance/translation_languages",
                op(.get, "None: Plaza does not translate", .none, .object)
            ),
            (
                "\(OpenAPIDocument.v1)/instance/extended_description",
                op(.get, "The instance's description as its admins wrote it, as HTML", .none, .object)
            ),
            (
                "\(OpenAPIDocument.v1)/instance/languages",
                op(.get, "ISO 639-1's languages ({code, name})", .none, .array(items: .object))
            ),
        ]
    }
}
