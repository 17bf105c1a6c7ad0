import OpenAPIKit
import PlazaServer

extension OpenAPIDocument.MastodonOperations {
    /// Filters v2 and v1 over Plaza's keyword filters: one keyword a filter, sharing its id.
    var filters: [(String, OpenAPIDocument.Operation)] {
        let filter = JSONSchema.object
        let keyword = JSONSchema.object
        let one = "one keyword a filter (Plaza keeps one phrase a filter)"
        return [
            ("\(v2)/filters", op(.get, "My filters", .required, .array(items: filter))),
            (
                "\(v2)/filters",
                op(
                    .post,
                    "Add a filter (title, context[], filter_action, expires_in, keywords_attributes[]): \(one); 422 for more",
                    .required, filter, body: true, errors: [422])
            ),
            ("\(v2)/filters/{id}", op(.get, "One of my filters", .required, filter, errors: [404])),
            (
                "\(v2)/filters/{id}",
                op(.put, "Change a filter: \(one)", .required, filter, body: true, errors: [404, 422])
            ),
            ("\(v2)/filters/{id}", op(.delete, "Remove a filter", .required, .object, errors: [404])),
            (
                "\(v2)/filters/{id}/keywords",
                op(.get, "A filter's keyword", .required, .array(items: keyword), errors: [404])
            ),
            (
                "\(v2)/filters/{id}/keywords",
                op(
                    .post, "Set a filter's keyword (keyword, whole_word): it replaces the one it had", .required,
                    keyword, body: true, errors: [404, 422])
            ),
            ("\(v2)/filters/keywords/{id}", op(.get, "One keyword", .required, keyword, errors: [404])),
            (
                "\(v2)/filters/keywords/{id}",
                op(.put, "Change a keyword", .required, keyword, body: true, errors: [404, 422])
            ),
            (
                "\(v2)/filters/keywords/{id}",
                op(.delete, "Remove a keyword, and so its filter", .required, .object, errors: [404])
            ),
            ("\(OpenAPIDocument.v1)/filters", op(.get, "My filters, v1", .required, .array(items: filter))),
            (
                "\(OpenAPIDocument.v1)/filters",
                op(
                    .post, "Add a filter, v1 (phrase, context[], irreversible: hide, whole_word, expires_in)",
                    .required, filter, body: true, errors: [422])
            ),
            ("\(OpenAPIDocument.v1)/filters/{id}", op(.get, "One of my filters, v1", .required, filter, errors: [404])),
            (
                "\(OpenAPIDocument.v1)/filters/{id}",
                op(.put, "Change a filter, v1", .required, filter, body: true, errors: [404, 422])
            ),
            (
                "\(OpenAPIDocument.v1)/filters/{id}",
                op(.delete, "Remove a filter, v1", .required, .object, errors: [404])
            ),
        ]
    }
}
