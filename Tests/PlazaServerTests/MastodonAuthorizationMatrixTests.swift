import Foundation
import HTTPTypes
import PlazaAPI
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

/// The authorization matrix of Mastodon's door: every operation of the served OpenAPI document
/// tagged `Mastodon`, run with a Mastodon token (`read write follow push`) of each of the nine
/// people of `AuthorizationMatrixTests`, against the policy table below; and, as a second
/// dimension, with tokens of the owner that grant one scope: an unrelated one must be refused
/// (403), the one the operation needs must not be (neither 401 nor 403). The statuses are
/// Mastodon's as Plaza says them (docs/mastodon.md): 401 without a token where one is needed, 404
/// "Record not found" for what the person may not see or change, 403 for scopes, 422 for
/// validation. The table is the policy, not a record of what the code does.
///
/// Streams never end: their rows run only the refusals (anonymous, the suspended person, an
/// unrelated scope). The leak checks are the Plaza matrix's.
@Suite("Authorization matrix, Mastodon")
struct MastodonAuthorizationMatrixTests {
    typealias Expect = AuthorizationMatrixTests.Expect
    typealias Fixtures = AuthorizationMatrixTests.Fixtures
    static let v1 = "/api/v1"
    static let v2 = "/api/v2"

    struct Row: Sendable {
        var operation: String
        var scenario = ""
        var expect: [MatrixActor: Expect]
        /// The scope the operation needs (nil: it looks at none), and one that must be refused.
        var scope: String?
        var unrelated: String?
        var fixtures: Fixtures
        var query: @Sendable (MastodonMatrixWorld) -> String = { _ in "" }
        var body: (@Sendable (MastodonMatrixWorld) -> MatrixBody)?
        var parameters: [String: @Sendable (MastodonMatrixWorld) -> String] = [:]
        /// Made once in the row's world before its cells.
        var prepare: (@Sendable (MatrixClient, MastodonMatrixWorld) async throws -> Void)?
        var media = false
        /// A server bug this row shows: its cells' mismatches are known issues.
        var knownIssue: String?

        var method: String { String(operation.split(separator: " ")[0]) }
        var path: String { String(operation.split(separator: " ")[1]) }
        var label: String { scenario.isEmpty ? operation : "\(operation) [\(scenario)]" }
        var isStream: Bool { path.contains("/streaming/") && !path.hasSuffix("/health") }
    }

    /// A scope that does not grant `scope`: `write` for a read, `read` for a write.
    static func unrelatedScope(to scope: String?) -> String? {
        guard let scope else { return nil }
        if scope.hasPrefix("read") || scope == "profile" { return "write" }
        if scope.hasPrefix("write") { return "read" }
        return scope == "push" ? "read write follow" : nil
    }

    /// `blocked` and `admin` answer as `other` unless given, and `follower`, `member` and
    /// `moderator` too (the moderator as the member); a suspended person's token is refused (401).
    static func row(
        _ operation: String, _ scenario: String = "", scope: String?, anon: Expect, owner: Expect, other: Expect,
        blocked: Expect? = nil, admin: Expect? = nil, follower: Expect? = nil, member: Expect? = nil,
        moderator: Expect? = nil, fixtures: Fixtures? = nil,
        query: @escaping @Sendable (MastodonMatrixWorld) -> String = { _ in "" },
        body: (@Sendable (MastodonMatrixWorld) -> MatrixBody)? = nil,
        parameters: [String: @Sendable (MastodonMatrixWorld) -> String] = [:],
        prepare: (@Sendable (MatrixClient, MastodonMatrixWorld) async throws -> Void)? = nil, media: Bool = false,
        knownIssue: String? = nil
    ) -> Row {
        let read = operation.hasPrefix("GET ")
        return Row(
            operation: operation, scenario: scenario,
            expect: [
                .anonymous: anon, .owner: owner, .other: other, .blocked: blocked ?? other, .admin: admin ?? other,
                .follower: follower ?? other, .member: member ?? other, .moderator: moderator ?? member ?? other,
                .suspended: 401,
            ],
            scope: scope, unrelated: unrelatedScope(to: scope), fixtures: fixtures ?? (read ? .shared : .perOperation),
            query: query, body: body, parameters: parameters, prepare: prepare, media: media, knownIssue: knownIssue)
    }

    /// Everyone with a token gets `everyone`; anonymous `anon`.
    static func uniform(
        _ operation: String, _ scenario: String = "", scope: String?, anon: Expect, everyone: Expect = 200,
        body: (@Sendable (MastodonMatrixWorld) -> MatrixBody)? = nil, fixtures: Fixtures? = nil
    ) -> Row {
        row(
            operation, scenario, scope: scope, anon: anon, owner: everyone, other: everyone, fixtures: fixtures,
            body: body)
    }

    /// OAuth's endpoints look at the client's credentials in the body, never at a bearer token:
    /// everyone, the suspended person too, gets `expect`.
    static func ignoringTokens(
        _ operation: String, _ expect: Expect, body: (@Sendable (MastodonMatrixWorld) -> MatrixBody)? = nil
    ) -> Row {
        var row = uniform(operation, scope: nil, anon: expect, everyone: expect, body: body)
        row.expect[.suspended] = expect
        return row
    }

    static func form(_ text: String) -> @Sendable (MastodonMatrixWorld) -> MatrixBody { { _ in .form(text) } }
}
