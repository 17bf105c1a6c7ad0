import Foundation
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

/// `docs/api.md`, the API reference people read in the repository, is made from the served
/// OpenAPI document: this test fails when the two differ. `PLAZA_WRITE_API_DOCS=1 swift test
/// --filter APIReferenceTests` writes it anew.
@Suite("API reference")
struct APIReferenceTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/api.md")

    @Test func docsAPIIsTheServedDocument() throws {
        let made = try Self.markdown()
        if ProcessInfo.processInfo.environment["PLAZA_WRITE_API_DOCS"] == "1" {
            try made.write(to: Self.file, atomically: true, encoding: .utf8)
        }
        let current = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(
            current == made,
            "docs/api.md differs from the served document: PLAZA_WRITE_API_DOCS=1 swift test --filter APIReferenceTests"
        )
    }

    struct Entry {
        var method: String
        var path: String
        var signIn: String
        var summary: String
        var statuses: [String]
    }

    static func entries() throws -> [String: [Entry]] {
        let document = try JSONSerialization.jsonObject(with: Data(try OpenAPIDocument.json())) as? [String: Any]
        let paths = document?["paths"] as? [String: [String: Any]] ?? [:]
        var sections: [String: [Entry]] = [:]
        for (path, item) in paths {
            for (method, value) in item {
                guard let operation = value as? [String: Any] else { continue }
                let security =
                    operation["security"] as? [[String: Any]] ?? document?["security"] as? [[String: Any]] ?? []
                let signIn =
                    security.isEmpty ? "no" : security.contains(where: \.isEmpty) ? "optional" : "yes"
                let entry = Entry(
                    method: method.uppercased(), path: path, signIn: signIn,
                    summary: (operation["summary"] as? String ?? "").replacingOccurrences(of: "|", with: "\\|"),
                    statuses: ((operation["responses"] as? [String: Any])?.keys).map { $0.sorted() } ?? [])
                let mastodon = (operation["tags"] as? [String])?.contains("Mastodon") == true
                sections[mastodon ? "Mastodon client API" : section(of: path), default: []].append(entry)
            }
        }
        return sections
    }

    /// The first path segment after the API's base, as a heading.
    static func section(of path: String) -> String {
        let parts = path.split(separator: "/").map(String.init)
        guard parts.count > 2, parts[0] == "api", parts[1] == "v1" else { return "Outside /api/v1" }
        return parts[2]
    }

    static func markdown() throws -> String {
        let order = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        var text = """
            # Plaza's HTTP API

            Every operation the server answers, made from the OpenAPI 3.1 document it serves at
            `GET /api/v1/openapi.json` (which has the request and response schemas). A test keeps this
            page and that document the same.

            - Base path `/api/v1`; JSON bodies, UTF-8, camelCase field names; times are RFC 3339 UTC
              strings with milliseconds; ids are strings.
            - Sign in with `Authorization: Bearer <token>` (from `POST /api/v1/auth/register` or
              `/auth/login`). "Sign-in" below: `yes` answers 401 without a token, `optional` answers
              more to a signed-in person.
            - Errors are `{"error": {"code", "message", "field"?}}`: 400 malformed, 401 not signed in,
              403 not allowed, 404 missing or not yours to see, 405 a method the path does not serve
              (with `Allow`), 409 conflict, 413 too large, 415 unsupported media, 422 invalid field,
              429 rate limited (with `Retry-After`).
            - Lists take `?limit=` (default 20, at most 100) and `?cursor=`, and answer
              `{"items": [...], "nextCursor": "..." | null}`.
            - Mastodon's client API is served at Mastodon's paths for Mastodon apps; docs/mastodon.md
              says what each endpoint does here.

            """
        let sections = try entries()
        // Plaza's own sections by name, Mastodon's last.
        let key = { (name: String) in name == "Mastodon client API" ? "~" : name }
        for name in sections.keys.sorted(by: { key($0) < key($1) }) {
            text += "\n## \(name)\n\n| method | path | sign-in | what it does | answers |\n|---|---|---|---|---|\n"
            let rows = (sections[name] ?? []).sorted {
                ($0.path, order.firstIndex(of: $0.method) ?? 9) < ($1.path, order.firstIndex(of: $1.method) ?? 9)
            }
            for row in rows {
                text +=
                    "| \(row.method) | `\(row.path)` | \(row.signIn) | \(row.summary) | \(row.statuses.joined(separator: ", ")) |\n"
            }
        }
        return text
    }
}
