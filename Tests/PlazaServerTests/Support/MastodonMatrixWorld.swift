import Foundation
import HTTPTypes
import PlazaAPI

@testable import PlazaMastodon
@testable import PlazaServer

/// The matrix's fixtures seen through Mastodon's door: a `MatrixWorld` made with a Mastodon token
/// for each person (the suspended person's made before the suspension), and tokens of the owner
/// that grant one scope each, for the scope cells.
struct MastodonMatrixWorld: Sendable {
    let base: MatrixWorld
    /// The owner's tokens by the scopes they grant.
    let scoped: [String: String]
    /// A keyword filter of the owner's (its one keyword shares its id).
    let ownerFilterID: String
    /// A list of the owner's (empty).
    let ownerListID: String

    func token(_ actor: MatrixActor) -> String? { base.mastodonTokens[actor] }

    /// The fixture a path parameter names by default: the owner's object of the kind the
    /// segment before it names.
    func defaultParameter(_ name: String, after segment: String) -> String? {
        switch (name, segment) {
        case ("id", "accounts"): base.owner.id
        case ("id", "statuses"): base.post.id
        case ("id", "media"): base.unattachedMedia?.id
        case ("id", "notifications"): base.notificationID
        case ("id", "list"), ("id", "lists"): ownerListID
        case ("id", "filters"), ("id", "keywords"): ownerFilterID
        // A request to follow the owner, made by the row's `prepare`.
        case ("id", "follow_requests"): base.other.id
        case ("tag", _): base.postMarker
        default: nil
        }
    }
}

extension MatrixClient {
    /// A world with Mastodon tokens, and the owner's tokens for each of `scopes`.
    func makeMastodonWorld(media: Bool, scopes: Set<String>) async throws -> MastodonMatrixWorld {
        let base = try await makeWorld(media: media, mastodon: true)
        var scoped: [String: String] = [:]
        for scope in scopes.sorted() { scoped[scope] = try await api.mastodonToken(base.owner, scopes: scope) }
        let filter: KeywordFilter = try await must(
            201, .post, "/me/filters", as: base.owner, .json(#"{"phrase":"zzownerfilterzz","contexts":["home"]}"#))
        let list = try await send(
            .post, "/api/v1/lists", token: base.mastodonTokens[.owner], body: .form("title=owner%27s+list"))
        guard list.status == .ok, let listID = try list.json()["id"]?.stringValue else {
            throw MatrixFixtureError(description: "fixture POST /lists: \(list.status.code) \(list.text)")
        }
        return MastodonMatrixWorld(base: base, scoped: scoped, ownerFilterID: filter.id, ownerListID: listID)
    }

    /// A fixture request on Mastodon's API (`/api/v1/…`) that must answer `status`.
    func mastodonMust(
        _ status: Int, _ method: HTTPRequest.Method, _ path: String, token: String?, _ body: MatrixBody? = nil
    ) async throws {
        let response = try await send(method, "/api/v1" + path, token: token, body: body)
        guard response.status.code == status else {
            throw MatrixFixtureError(
                description:
                    "fixture \(method) \(path): expected \(status), got \(response.status.code) \(response.text)")
        }
    }
}
