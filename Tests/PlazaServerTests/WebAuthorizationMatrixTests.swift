import Foundation
import HTTPTypes
import NIOCore
import PlazaAPI
import Testing

@testable import PlazaServer

/// The authorization matrix of the web app's door: every page and form the web app registers, as
/// the nine people of `AuthorizationMatrixTests` with their browser's session cookie (and the
/// CSRF token a page gives them for a form; anonymous visitors send the pre-session nonce's),
/// against the policy table below. The statuses are a browser's: a page (200), a redirect (303;
/// to sign in where the page needs a person), or an error page (4xx). A suspended person's
/// session counts for nothing: they are an anonymous visitor, as a stale cookie makes one. The
/// routes of the OpenAPI document (the JSON API, Mastodon's with its OAuth endpoints) are the
/// other matrices'; every other route is here. The web app's other writes are scripts calling
/// the JSON API.
///
/// Besides the status, a page anyone but the owner gets must not show the owner's private
/// things, and one the blocked person gets must not show the owner's post, comment or bio.
@Suite("Authorization matrix, the web app")
struct WebAuthorizationMatrixTests {
    typealias Expect = AuthorizationMatrixTests.Expect

    struct Row: Sendable {
        var operation: String
        var expect: [MatrixActor: Expect]
        /// A form's fields (the CSRF token is added).
        var form: (@Sendable (MatrixWorld, MatrixActor) -> [String: String])?

        var method: HTTPRequest.Method { operation.hasPrefix("POST ") ? .post : .get }
        var path: String { String(operation.split(separator: " ")[1]) }
    }

    /// `follower`, `member` and `moderator` answer as `other` unless given (the moderator as the
    /// member), `blocked` and `admin` too; the suspended person as anonymous.
    static func row(
        _ operation: String, anon: Expect, owner: Expect, other: Expect, blocked: Expect? = nil, admin: Expect? = nil,
        member: Expect? = nil, moderator: Expect? = nil,
        form: (@Sendable (MatrixWorld, MatrixActor) -> [String: String])? = nil
    ) -> Row {
        Row(
            operation: operation,
            expect: [
                .anonymous: anon, .owner: owner, .other: other, .blocked: blocked ?? other, .admin: admin ?? other,
                .follower: other, .member: member ?? other, .moderator: moderator ?? member ?? other,
                .suspended: anon,
            ],
            form: form)
    }

    /// A page anyone may see (the owner's blocked person gets a 404 where it is the owner's).
    static func open(_ operation: String, blocked: Expect = 200) -> Row {
        row(operation, anon: 200, owner: 200, other: 200, blocked: blocked)
    }

    /// A page for a signed-in person; anonymous visitors are sent to sign in.
    static func signedIn(_ operation: String, everyone: Expect = 200) -> Row {
        row(operation, anon: 303, owner: everyone, other: everyone)
    }

    static let pages: [Row] = [
        open("GET /"), open("GET /explore"), open("GET /spaces"), open("GET /search"), open("GET /tags/{tag}"),
        open("GET /s/{slug}"),
        open("GET /p/{id}", blocked: 404), open("GET /p/{id}/likes", blocked: 404),
        open("GET /p/{id}/history", blocked: 404),
        open("GET /p/{id}/comments", blocked: 404), open("GET /fragments/post/{id}", blocked: 404),
        open("GET /u/{username}", blocked: 404), open("GET /u/{username}/followers", blocked: 404),
        open("GET /u/{username}/following", blocked: 404), open("GET /u/{username}/friends", blocked: 404),
        open("GET /@{username}", blocked: 404), open("GET /@{username}/followers", blocked: 404),
        open("GET /@{username}/following", blocked: 404), open("GET /@{username}/friends", blocked: 404),
        open("GET /@{username}/{id}", blocked: 404),
        // The old address of a post moves to the new one for everyone; the new one decides.
        row("GET /posts/{id}", anon: 301, owner: 301, other: 301),
        open("GET /manifest.webmanifest"), open("GET /sw.js"), open("GET /assets/**"),
        // A path no door serves.
        row("GET /**", anon: 404, owner: 404, other: 404),
        signedIn("GET /compose"), signedIn("GET /settings"), signedIn("GET /notifications"),
        signedIn("GET /collections"), signedIn("GET /history"), signedIn("GET /activities"),
        signedIn("GET /recommended"), signedIn("GET /follow-requests"), signedIn("GET /share"),
        signedIn("GET /spaces/last", everyone: 303),
        // Without an app's client_id there is nothing to consent to, signed in or not.
        row("GET /oauth/authorize", anon: 400, owner: 400, other: 400),
        // A private collection is no one else's business: 404, as in the API.
        row("GET /collections/{id}", anon: 303, owner: 200, other: 404),
        // Only the author edits; the person they blocked cannot see the post at all.
        row("GET /p/{id}/edit", anon: 303, owner: 200, other: 403, blocked: 404),
        // The space's owner and its moderators manage it.
        row("GET /s/{slug}/manage", anon: 303, owner: 200, other: 403, moderator: 200),
        // Reports for admins, and for the owners and moderators of a space, about their spaces.
        row("GET /admin", anon: 303, owner: 200, other: 403, admin: 200, moderator: 200),
        // The server's settings, sign-ups and invites: admins only.
        row("GET /admin/instance", anon: 303, owner: 403, other: 403, admin: 200, moderator: 403),
        row("GET /admin/dashboard", anon: 303, owner: 403, other: 403, admin: 200, moderator: 403),
        // One's own invite links: anyone signed in sees theirs (a form only when they may invite).
        row("GET /invites", anon: 303, owner: 200, other: 200, admin: 200, moderator: 200),
        // One's own keyword filters: anyone signed in sees theirs.
        row("GET /settings/filters", anon: 303, owner: 200, other: 200),
        // An invitation that does not exist; it needs a person to accept it.
        row("GET /join/{code}", anon: 303, owner: 404, other: 404),
        // Signed-in people have no use for these forms and go home.
        row("GET /login", anon: 200, owner: 303, other: 303),
        row("GET /signup", anon: 200, owner: 303, other: 303),
        // The forms; the emailed link fills in its token.
        open("GET /forgot-password"), open("GET /reset-password"), open("GET /verify-email"),
    ]

    static let forms: [Row] = [
        // Anyone may try to sign in; a wrong password is the form again, saying so.
        // Each their own account, with a wrong password (one try each, under the throttle).
        row(
            "POST /login", anon: 401, owner: 401, other: 401,
            form: { world, actor in
                ["login": world.account(actor)?.username ?? world.owner.username, "password": "not the password"]
            }),
        // No sign-in is waiting for a second factor.
        row("POST /login/second-factor", anon: 401, owner: 401, other: 401, form: { _, _ in ["code": "123456"] }),
        // A taken username.
        row(
            "POST /signup", anon: 409, owner: 409, other: 409,
            form: { world, _ in
                ["username": world.owner.username, "email": "x@example.com", "password": MatrixClient.password]
            }),
        row("POST /logout", anon: 303, owner: 303, other: 303),
        // The same answer whether or not the address has an account.
        row(
            "POST /forgot-password", anon: 200, owner: 200, other: 200,
            form: { _, _ in ["email": "nobody@example.com"] }),
        row(
            "POST /reset-password", anon: 422, owner: 422, other: 422,
            form: { _, _ in ["token": "not-a-token", "password": MatrixClient.password] }),
        row("POST /verify-email", anon: 400, owner: 400, other: 400, form: { _, _ in ["token": "not-a-token"] }),
        // A link saved into the owner's collection: theirs alone to add to.
        row(
            "POST /share", anon: 401, owner: 303, other: 404,
            form: { world, _ in ["url": "https://example.com/shared", "collection": world.collection.id] }),
        row("POST /**", anon: 404, owner: 404, other: 404, form: { _, _ in [:] }),
        // Consent without an app.
        row("POST /oauth/authorize", anon: 303, owner: 400, other: 400, form: { _, _ in ["client_id": "nope"] }),
    ]

    static var rows: [Row] { pages + forms }

    /// The accessibility tour (`e2e/pages.json`) opens every page the web app serves: each GET
    /// row is a page it lists or one it says is not a page, and it lists nothing else.
    @Test func theAccessibilityTourListsEveryPage() throws {
        struct Tour: Decodable {
            struct Page: Decodable { var route: String }
            var notPages: [String: String]
            var pages: [Page]
        }
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../e2e/pages.json")
        let tour = try JSONDecoder().decode(Tour.self, from: Data(contentsOf: file))
        let served = Set(Self.pages.filter { $0.method == .get }.map(\.path))
        let listed = Set(tour.pages.map(\.route))
        #expect(served.subtracting(listed).subtracting(tour.notPages.keys).sorted() == [], "pages the tour misses")
        #expect(listed.subtracting(served).sorted() == [], "tour pages the web app does not serve")
        #expect(listed.isDisjoint(with: tour.notPages.keys))
    }

    /// Every page and form the router serves outside the OpenAPI document has a row, and every
    /// row a route.
    @Test func everyWebRouteHasARow() async throws {
        try await withRouter { router, _, _ in
            let documented = Set(OpenAPIDocument.operations.map { "\($0.1.method.rawValue.uppercased()) \($0.0)" })
            let web = Set(
                router.routes.map { "\($0.method.rawValue) \(OpenAPITests.normalise($0.path.description))" }.filter {
                    !documented.contains($0) && !$0.hasPrefix("HEAD ")
                }
            ).filter {
                // The web app's answer to paths no door serves is the same for every method: its
                // GET and POST rows stand for the others.
                !$0.hasSuffix(" /**") || $0.hasPrefix("GET ") || $0.hasPrefix("POST ")
            }
            let table = Set(Self.rows.map(\.operation))
            #expect(web.subtracting(table).sorted() == [], "web routes without a row")
            #expect(table.subtracting(web).sorted() == [], "rows without a web route")
            #expect(table.count == Self.rows.count, "one row per route")
        }
    }

    @Test func everyPageAndFormAsEveryoneMatchesThePolicy() async throws {
        try await MatrixClient.withLiveApp { client in
            var mismatches: [String] = []
            var cells = 0
            let shared = try await client.makeWorld(media: false)
            for row in Self.pages {
                for actor in MatrixActor.runOrder {
                    cells += 1
                    if let problem = try await Self.check(row, as: actor, in: shared, client) {
                        mismatches.append(problem)
                    }
                }
            }
            // A form may end the actor's session or change their things: a world of its own.
            for row in Self.forms {
                let world = try await client.makeWorld(media: false)
                for actor in MatrixActor.runOrder {
                    cells += 1
                    if let problem = try await Self.check(row, as: actor, in: world, client) {
                        mismatches.append(problem)
                    }
                }
            }
            print("web authorization matrix: \(Self.rows.count) rows, \(cells) cells, \(mismatches.count) mismatches")
            #expect(cells == Self.rows.count * MatrixActor.allCases.count)
            if !mismatches.isEmpty {
                Issue.record(
                    "\(mismatches.count) of \(cells) cells differ from the policy:\n\(mismatches.joined(separator: "\n"))"
                )
            }
        }
    }

    /// One cell: the request as `actor`, its status against the row, and what the page shows.
    static func check(_ row: Row, as actor: MatrixActor, in world: MatrixWorld, _ client: MatrixClient) async throws
        -> String?
    {
        let response = try await send(row, as: actor, in: world, client)
        let status = Int(response.status.code)
        let expected = row.expect[actor] ?? 0
        let label = "\(row.operation) as \(actor.rawValue)"
        guard expected.statuses.contains(status) else {
            return "\(label): \(status), expected \(expected) \(response.text.prefix(160))"
        }
        guard status == 200, actor != .owner else { return nil }
        let text = response.text
        if actor == .suspended, text.contains(#"action="/logout""#) {
            return "\(label): shows the suspended person signed in"
        }
        if let shown = world.privateMarkers.first(where: { text.contains($0) }) {
            return "\(label): shows the owner's private \(shown)"
        }
        if actor == .blocked, let shown = world.publicMarkers.first(where: { text.contains($0) }) {
            return "\(label): shows the person who blocked them \(shown)"
        }
        return nil
    }

    static func send(_ row: Row, as actor: MatrixActor, in world: MatrixWorld, _ client: MatrixClient) async throws
        -> TestResponse
    {
        // Everyone carries the nonce a page set when no session counted (anonymous visitors, the
        // suspended); the CSRF token is the session's, or the nonce's where none counts.
        let nonce = "matrix-nonce-\(actor.rawValue)-0123456789"
        let secret = actor == .suspended ? nonce : world.token(actor) ?? nonce
        var headers: HTTPFields = [:]
        headers[.cookie] =
            (world.token(actor).map { "\(WebSession.sessionCookie)=\($0); " } ?? "")
            + "\(WebSession.nonceCookie)=\(nonce)"
        var body: ByteBuffer?
        if row.method == .post {
            var fields = row.form?(world, actor) ?? [:]
            fields["_csrf"] = WebSession.csrfToken(secret: secret)
            body = ByteBuffer(string: formEncode(fields))
            headers[.contentType] = "application/x-www-form-urlencoded"
        }
        let response = try await client.api.client.execute(
            uri: path(row.path, in: world), method: row.method, headers: headers, body: body)
        return TestResponse(status: response.status, headers: response.headers, body: response.body)
    }

    /// The row's path with the owner's things in it.
    static func path(_ template: String, in world: MatrixWorld) -> String {
        let id = template.hasPrefix("/collections/") ? world.collection.id : world.post.id
        return
            template
            .replacingOccurrences(of: "{username}", with: world.owner.username)
            .replacingOccurrences(of: "{slug}", with: world.space.slug)
            .replacingOccurrences(of: "{code}", with: "no-such-invitation")
            // The page names its tag: the owner's marker would read as shown to the blocked person
            // (the API's matrix checks the tag's posts with it).
            .replacingOccurrences(of: "{tag}", with: "ramen")
            .replacingOccurrences(of: "providers/{id}", with: "providers/no-such-provider")
            .replacingOccurrences(of: "{id}", with: id)
            .replacingOccurrences(of: "**", with: "plaza.css")
    }
}
