import OpenAPIKit
import PlazaAPI

extension OpenAPIDocument {
    static let filterLinks: [Link] = ["getMeFiltersId", "patchMeFiltersId", "deleteMeFiltersId"].map {
        (operationID: $0, parameter: "id", pointer: "/id")
    }

    /// My keyword filters.
    static var filterOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/filters",
                Operation(
                    method: .get, summary: "My keyword filters, expired ones too, oldest first", auth: .required,
                    response: pageOf("KeywordFilter"))
            ),
            (
                "\(v1)/me/filters",
                Operation(
                    method: .post,
                    summary: """
                        Add a keyword filter: posts and comments whose folded text has the phrase are hidden, or \
                        shown behind a warning (`Post.filtered`), in the contexts named; my own posts never are. \
                        422 `too_many_filters` past \(KeywordFilterActions.maxPerPerson) active filters
                        """,
                    auth: .required, body: "CreateKeywordFilterRequest", status: 201, response: ref("KeywordFilter"),
                    errors: [422], links: filterLinks)
            ),
            (
                "\(v1)/me/filters/{id}",
                Operation(
                    method: .get, summary: "One of my keyword filters", auth: .required, response: ref("KeywordFilter"),
                    errors: [404])
            ),
            (
                "\(v1)/me/filters/{id}",
                Operation(
                    method: .patch, summary: "Change one of my keyword filters: the fields given",
                    auth: .required, body: "UpdateKeywordFilterRequest", response: ref("KeywordFilter"),
                    errors: [404, 422])
            ),
            (
                "\(v1)/me/filters/{id}",
                Operation(
                    method: .delete, summary: "Remove one of my keyword filters", auth: .required, status: 204,
                    errors: [404])
            ),
        ]
    }
}

extension OpenAPIDocument.Schemas {
    static var filters: [String: JSONSchema] {
        let contexts = array(enumeration(FilterContext.allCases.map(\.rawValue)))
        let action = enumeration(FilterAction.allCases.map(\.rawValue))
        let phrase = string(maxLength: KeywordFilterActions.maxPhraseLength)
        return [
            "KeywordFilter": object([
                "id": id, "phrase": phrase, "wholeWord": boolean, "contexts": contexts, "action": action,
                "expiresAt": nullable(timestamp), "createdAt": timestamp,
            ]),
            "KeywordFilterPage": page("KeywordFilter"),
            "FilterMatch": object(["id": id, "phrase": string(), "action": action]),
            "CreateKeywordFilterRequest": object(
                [
                    "phrase": phrase, "wholeWord": boolean.with(description: "default true"), "contexts": contexts,
                    "action": action.with(description: "default warn"), "expiresAt": timestamp,
                ], required: ["phrase", "contexts"]),
            "UpdateKeywordFilterRequest": object(
                [
                    "phrase": phrase, "wholeWord": boolean, "contexts": contexts, "action": action,
                    "expiresAt": nullable(timestamp).with(description: "null: never expires"),
                ], required: []),
        ]
    }
}
