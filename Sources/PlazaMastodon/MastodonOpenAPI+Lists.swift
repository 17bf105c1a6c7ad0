import OpenAPIKit
import PlazaServer

extension OpenAPIDocument.MastodonOperations {
    /// Lists of accounts (the owner's alone: another's id is 404), account notes and familiar followers.
    var lists: [(String, OpenAPIDocument.Operation)] {
        let v1 = OpenAPIDocument.v1
        let list = JSONSchema.object(properties: [
            "id": .string, "title": .string,
            "replies_policy": .string(allowedValues: "followed", "list", "none"), "exclusive": .boolean,
        ])
        // One string, repeated (see `idArray`).
        let ids = OpenAPI.Parameter.query(
            name: "account_ids[]", schema: .string, description: "An account id; repeat it for more (1,000 at most)")
        let listPage = [
            OpenAPIDocument.mastodonLimit(40, 80), OpenAPIDocument.maxID, OpenAPIDocument.sinceID,
            OpenAPIDocument.minID,
        ]
        return [
            ("\(v1)/lists", op(.get, "My lists", .required, .array(items: list))),
            (
                "\(v1)/lists",
                op(
                    .post, "Make a list (title, replies_policy: followed, list or none, exclusive); 50 at most",
                    .required, list, body: true, errors: [422])
            ),
            ("\(v1)/lists/{id}", op(.get, "One of my lists", .required, list, errors: [404])),
            ("\(v1)/lists/{id}", op(.put, "Change a list", .required, list, body: true, errors: [404, 422])),
            ("\(v1)/lists/{id}", op(.delete, "Remove a list", .required, .object, errors: [404])),
            (
                "\(v1)/lists/{id}/accounts",
                op(
                    .get, "A list's accounts, by account id (limit=0: all of them)", .required, accounts,
                    query: listPage, errors: [404])
            ),
            (
                "\(v1)/lists/{id}/accounts",
                op(
                    .post, "Add accounts I follow to a list (1,000 a list at most)", .required, .object,
                    query: [ids], body: true, errors: [404, 422])
            ),
            (
                "\(v1)/lists/{id}/accounts",
                op(.delete, "Take accounts out of a list", .required, .object, query: [ids], body: true, errors: [404])
            ),
            (
                "\(v1)/accounts/{id}/lists",
                op(.get, "My lists that hold the account", .required, .array(items: list), errors: [404])
            ),
            (
                "\(v1)/timelines/list/{id}",
                op(
                    .get, "The posts and boosts of a list's accounts in my home timeline", .required, statuses,
                    query: statusPage, errors: [404])
            ),
        ] + notesAndFamiliar
    }

    /// Account notes and familiar followers.
    var notesAndFamiliar: [(String, OpenAPIDocument.Operation)] {
        let v1 = OpenAPIDocument.v1
        return [
            (
                "\(v1)/accounts/{id}/note",
                op(
                    .post, "Set my private note on an account (comment, 2,000 characters; empty removes it)",
                    .required, relationship, body: true, errors: [404, 422])
            ),
            (
                "\(v1)/accounts/familiar_followers",
                op(
                    .get, "For each account, people I follow who follow it", .required, .array(items: .object),
                    query: [OpenAPIDocument.idArray], errors: [422])
            ),
        ]
    }
}
