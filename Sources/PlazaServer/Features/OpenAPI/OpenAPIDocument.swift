import Foundation
import OpenAPIKit

/// The OpenAPI 3.1 description of every route, as OpenAPIKit values. `OpenAPITests` fails when a
/// registered route is missing here or this names one that does not exist, and when it does not encode.
package enum OpenAPIDocument {
    /// A door's share of the document (`Door.openAPI`): its operations by path and the schemas
    /// they name, made when the document is first asked for.
    package struct Part: Sendable {
        let operations: @Sendable () -> [(String, Operation)]
        let schemas: @Sendable () -> [String: JSONSchema]

        package init(
            operations: @escaping @Sendable () -> [(String, Operation)],
            schemas: @escaping @Sendable () -> [String: JSONSchema]
        ) {
            self.operations = operations
            self.schemas = schemas
        }
    }

    /// The document, with the doors' `parts`, as JSON, keys sorted. Throws when it cannot be
    /// encoded (a component name OpenAPI does not allow, say).
    static func json(with parts: [Part]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(document(with: parts)))
    }

    static func document(with parts: [Part]) throws -> OpenAPI.Document {
        OpenAPI.Document(
            openAPIVersion: .v3_1_0,
            info: .init(
                title: "Plaza API",
                description: """
                    The HTTP API of Plaza, a self-hosted social backend. Lists are keyset-paginated; \
                    errors are {"error": {code, message, field?}}.
                    """,
                version: "1.0.0"),
            servers: [.init(urlTemplate: try URLTemplate(templateString: "/"))],
            paths: paths(with: parts),
            components: .init(
                schemas: try Schemas.components(with: parts),
                securitySchemes: ["bearerAuth": .b(.http(scheme: "bearer"))])
        )
    }

    // MARK: paths

    package enum Auth { case none, optional, required }

    package struct Operation {
        var method: OpenAPI.HttpMethod
        var summary: String
        var auth: Auth
        package var query: [OpenAPI.Parameter] = []
        var body: String? = nil
        var bodyRequired = true
        /// The response is a Server-Sent Events stream.
        package var eventStream = false
        package var status = 200
        /// Other success statuses with the same body (e.g. 200 for "already there" beside 201).
        package var alsoStatus: [Int] = []
        /// Other success statuses with a JSON body of their own (202 `PendingRegistration`
        /// beside a sign-up's 201).
        package var otherSuccess: [Int: JSONSchema] = [:]
        package var response: JSONSchema? = nil
        package var errors: [Int] = []
        /// The body is multipart/form-data with a `file` field instead of JSON.
        package var upload = false
        /// The response is the bytes of an image, not JSON.
        var image = false
        /// The response is a ZIP archive to save.
        var zip = false
        /// For browsers: errors are an HTML page (the sign-in page saying what went wrong), not JSON.
        var page = false
        /// OpenAPI links from this response to operations taking `parameter` from the value at
        /// `pointer` in this response's body (lets clients and fuzzers follow a created object to
        /// what can be done with it).
        var links: [Link] = []
        /// Mastodon's API: errors are `{"error": "…"}` (`MastodonError`).
        var mastodon = false
        /// A Mastodon body: JSON or a form, Mastodon's parameters.
        package var mastodonBody = false
    }

    typealias Link = (operationID: String, parameter: String, pointer: JSONReference<JSONSchema>.Path)

    static let postLinks: [Link] = [
        "getPostsId", "patchPostsId", "deletePostsId", "getPostsIdComments", "postPostsIdComments", "putPostsIdLike",
        "deletePostsIdLike", "getPostsIdLikes",
    ].map { (operationID: $0, parameter: "id", pointer: "/id") }
    static let userLinks: [Link] = [
        "getUsersUsername", "getUsersUsernamePosts", "getUsersUsernameFollowers", "getUsersUsernameFollowing",
        "getUsersUsernameFriends",
    ].map { (operationID: $0, parameter: "username", pointer: "/user/username") }
    static let spaceLinks: [Link] = [
        "getSpacesSlug", "patchSpacesSlug", "putSpacesSlugMembership", "deleteSpacesSlugMembership",
        "getSpacesSlugFeed",
    ].map { (operationID: $0, parameter: "slug", pointer: "/slug") }
    static let collectionLinks: [Link] = [
        "patchCollectionsId", "deleteCollectionsId", "getCollectionsIdItems", "postCollectionsIdItems",
    ].map { (operationID: $0, parameter: "id", pointer: "/id") }

    package static let v1 = "/api/v1"

    /// The document's own and the health check's operations.
    static var serviceOperations: [(String, Operation)] {
        [
            (
                "/healthz",
                Operation(
                    method: .get, summary: "Health check: 200 when the database answers", auth: .none,
                    response: ref("Health"), errors: [503])
            ),
            ("\(v1)/openapi.json", Operation(method: .get, summary: "This document", auth: .none, response: .object)),
        ]
    }

    /// Every operation of the served document, with the doors' `parts`; each feature's sit beside its routes.
    static func operations(with parts: [Part]) -> [(String, Operation)] {
        let features: [[(String, Operation)]] = [
            serviceOperations, accountOperations, externalSignInOperations, pushOperations, mediaOperations,
            peopleOperations, feedOperations, tagOperations, postOperations, pinOperations, pollOperations,
            spaceOperations,
            searchOperations,
            notificationOperations, realtimeOperations, collectionOperations, moderationOperations,
            instanceOperations, filterOperations,
        ]
        return (features + parts.map { $0.operations() }).flatMap { $0 }
    }

    static func paths(with parts: [Part]) -> OpenAPI.PathItem.Map {
        var items: OrderedDictionary<OpenAPI.Path, OpenAPI.PathItem> = [:]
        for (path, operation) in operations(with: parts) {
            let rendered = render(operation, path: path)
            items[OpenAPI.Path(rawValue: path), default: OpenAPI.PathItem()][operation.method] = rendered
        }
        return items.mapValues { .b($0) }
    }

    static let bearerAuth = JSONReference<OpenAPI.SecurityScheme>.component(named: "bearerAuth")

    static func render(_ op: Operation, path: String) -> OpenAPI.Operation {
        let security: [OpenAPI.SecurityRequirement] =
            switch op.auth {
            case .none: []
            case .optional: [[:], [bearerAuth: []]]
            case .required: [[bearerAuth: []]]
            }
        return OpenAPI.Operation(
            tags: op.mastodon ? ["Mastodon"] : nil, summary: op.summary, operationId: operationID(op.method, path),
            parameters: (pathParameters(path) + op.query + headerParameters(op, path: path)).map { .b($0) },
            requestBody: requestBody(op),
            responses: responses(op, path: path), security: security)
    }

    /// `Idempotency-Key` on a signed-in person's POST and PUT (`IdempotencyMiddleware`);
    /// `If-None-Match` on the API's JSON reads (`ConditionalGetMiddleware`).
    static func headerParameters(_ op: Operation, path: String) -> [OpenAPI.Parameter] {
        if takesIdempotencyKey(op, path: path) {
            return [
                .header(
                    name: "Idempotency-Key",
                    schema: op.mastodon ? .string : .string(minLength: 1, maxLength: 64, pattern: "^[!-~]{1,64}$"),
                    description: """
                        Sent again with the same request within 24 hours, the first answer comes back \
                        (Idempotent-Replayed: true) and nothing is done twice; with another request, 422 \
                        idempotency_key_reused; while the first is being answered, 409 idempotency_key_in_use
                        """)
            ]
        }
        guard takesETag(op, path: path) else { return [] }
        return [
            .header(
                name: "If-None-Match", schema: .string,
                description: "The ETag of the copy the client has: 304 and no body when the answer is the same")
        ]
    }

    static func takesIdempotencyKey(_ op: Operation, path: String) -> Bool {
        (op.method == .post || op.method == .put) && op.auth == .required
            && !IdempotencyMiddleware.carriesSecrets(path)
    }

    static func takesETag(_ op: Operation, path: String) -> Bool {
        op.method == .get && op.response != nil && !op.mastodon && !op.eventStream && path.hasPrefix(v1)
    }

    /// A JSON body by its schema's name, Mastodon's JSON or form, or an upload's multipart form.
    static func requestBody(_ op: Operation) -> OpenAPI.Request? {
        if op.upload {
            let form = Schemas.object(
                [
                    "file": .string(format: .other("binary")),
                    "description": .string(
                        description: "Alt text: what it shows, in words", maxLength: MediaActions.maxAltTextLength),
                ], required: ["file"])
            return OpenAPI.Request(content: [.multipartForm: .b(.init(schema: form))], required: true)
        }
        if op.mastodonBody {
            let free = OpenAPI.Content(schema: .object)
            return OpenAPI.Request(content: [.json: .b(free), .form: .b(free)], required: false)
        }
        return op.body.map {
            OpenAPI.Request(content: [.json: .b(.init(schema: ref($0)))], required: op.bodyRequired)
        }
    }

    /// The success answer: JSON, an event stream, an image or video, an archive, or nothing.
    static func success(_ op: Operation) -> OpenAPI.Response {
        var success = OpenAPI.Response(description: "Done")
        if let response = op.response {
            success = OpenAPI.Response(description: "OK", content: [.json: .b(.init(schema: response))])
        }
        if op.eventStream {
            success = OpenAPI.Response(
                description: "Server-Sent Events (docs/realtime.md)",
                content: [.eventStream: .b(.init(schema: .string))])
        }
        if op.image {
            let bytes = OpenAPI.Content(schema: .string(format: .other("binary")))
            success = OpenAPI.Response(
                description: "The image or video", content: [.anyImage: .b(bytes), .mp4: .b(bytes)])
        }
        if op.zip {
            success = OpenAPI.Response(
                description: "The archive (Content-Disposition: attachment)",
                content: [.other("application/zip"): .b(.init(schema: .string(format: .other("binary"))))])
        }
        for link in op.links {
            let value = OpenAPI.RuntimeExpression.response(.body(.path(link.pointer)))
            success.links[link.operationID] = .b(
                OpenAPI.Link(operationId: link.operationID, parameters: [link.parameter: .a(value)]))
        }
        return success
    }

    /// Every status the operation can answer: its successes, a file's partial and unchanged
    /// answers, and the errors (the operation's own and those every route of its kind may give).
    static func responses(_ op: Operation, path: String) -> OpenAPI.Response.Map {
        let success = success(op)
        var responses: OpenAPI.Response.Map = [.status(code: op.status): .b(success)]
        for code in op.alsoStatus { responses[.status(code: code)] = .b(success) }
        for (code, schema) in op.otherSuccess {
            responses[.status(code: code)] = .b(
                OpenAPI.Response(description: "Accepted", content: [.json: .b(.init(schema: schema))]))
        }
        var errors = Set(op.errors + [400, 422, 429])
        if op.auth != .none || path.hasPrefix(v1) { errors.insert(401) }
        if takesIdempotencyKey(op, path: path) { errors.insert(409) }
        if takesETag(op, path: path) {
            responses[.status(code: 304)] = .b(OpenAPI.Response(description: "Not modified (If-None-Match)"))
        }
        if op.body != nil || op.upload || op.mastodonBody { errors.formUnion([413, 415]) }
        if op.image {
            responses[.status(code: 304)] = .b(OpenAPI.Response(description: "Not modified (If-None-Match)"))
            var span = success
            span.description = "The span asked for in Range (Content-Range says which)"
            responses[.status(code: 206)] = .b(span)
            responses[.status(code: 416)] = .b(
                OpenAPI.Response(description: "The span lies past the end (Content-Range: bytes */length)"))
        }
        if path.contains("{") { errors.insert(404) }
        for code in errors.sorted() {
            var error = OpenAPI.Response(
                description: errorDescription(code),
                content: op.page
                    ? [.html: .b(.init(schema: .string))]
                    : [.json: .b(.init(schema: ref(op.mastodon ? "MastodonError" : "Error")))])
            if code == 429 {
                error.headers = ["Retry-After": .b(OpenAPI.Header(schema: .integer, description: "Seconds to wait"))]
            }
            responses[.status(code: code)] = .b(error)
        }
        return responses
    }

    static func pathParameters(_ path: String) -> [OpenAPI.Parameter] {
        path.split(separator: "/").filter { $0.hasPrefix("{") }.map { segment in
            .path(name: String(segment.dropFirst().dropLast()), schema: .string)
        }
    }

    static func operationID(_ method: OpenAPI.HttpMethod, _ path: String) -> String {
        let words = path.replacingOccurrences(of: v1, with: "").split(whereSeparator: { "/{}.".contains($0) })
        return method.rawValue.lowercased() + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    static func errorDescription(_ code: Int) -> String {
        switch code {
        case 400: "Malformed request (bad JSON or cursor)"
        case 401: "Not signed in, or the token is invalid or expired"
        case 403: "Not allowed"
        case 404: "Not found or not visible to you"
        case 409: "Conflict (username or email taken; an Idempotency-Key whose first request is still being answered)"
        case 413: "Body too large, or the storage quota is full (storage_quota_exceeded)"
        case 415: "Body is not application/json"
        case 422: "A field is invalid; `field` names it"
        case 429: "Rate limited, or a daily cap reached (daily_upload_limit, daily_link_preview_limit); see Retry-After"
        case 503: "The database does not answer"
        default: "Error"
        }
    }

    // MARK: schema helpers

    package static func ref(_ name: String) -> JSONSchema { .reference(.component(named: name)) }
    static func pageOf(_ name: String) -> JSONSchema { ref("\(name)Page") }

    enum Params {
        static var page: [OpenAPI.Parameter] { [limit, cursor] }
        static var feed: [OpenAPI.Parameter] { page + [since, until, kind, activityType, activityProgress] }
        static var limit: OpenAPI.Parameter {
            .query(
                name: "limit",
                schema: .integer(maximum: (100, exclusive: false), minimum: (1, exclusive: false), defaultValue: 20))
        }
        static var mediaKey: OpenAPI.Parameter {
            .query(
                name: "k", required: true, schema: .string(pattern: "^[A-Za-z0-9_-]{16,64}$"),
                description: "The media's access key, as in the URLs of Media; a wrong or missing key is 404")
        }
        static var range: OpenAPI.Parameter {
            .header(
                name: "Range", schema: .string(maxLength: 100),
                description: "One span of bytes (bytes=first-last, bytes=first-, bytes=-suffix), for players to seek")
        }
        static var next: OpenAPI.Parameter {
            .query(name: "next", schema: .string(maxLength: 2000), description: "a path on this site to go to after")
        }
        static var link: OpenAPI.Parameter {
            .query(name: "link", schema: .string(allowedValues: ["1"]), description: "link to the signed-in account")
        }
        static var csrf: OpenAPI.Parameter {
            .query(name: "csrf", schema: .string, description: "the page's CSRF token (with link=1)")
        }
        static var code: OpenAPI.Parameter { .query(name: "code", schema: .string(maxLength: 2048)) }
        static var state: OpenAPI.Parameter { .query(name: "state", schema: .string(maxLength: 128)) }
        static var mailState: OpenAPI.Parameter {
            .query(name: "state", schema: .string(allowedValues: ["pending", "sent", "failed"]))
        }
        static var cursor: OpenAPI.Parameter {
            .query(name: "cursor", schema: .string, description: "nextCursor of the previous page")
        }
        static var since: OpenAPI.Parameter {
            .query(
                name: "since", schema: .string(format: .dateTime),
                description: "Only posts created at or after (RFC 3339)")
        }
        static var until: OpenAPI.Parameter {
            .query(
                name: "until", schema: .string(format: .dateTime), description: "Only posts created before (RFC 3339)")
        }
        static var days: OpenAPI.Parameter {
            .query(
                name: "days",
                schema: .integer(maximum: (366, exclusive: false), minimum: (1, exclusive: false), defaultValue: 365))
        }
        static var q: OpenAPI.Parameter { .query(name: "q", schema: .string(maxLength: 100)) }
        static var tz: OpenAPI.Parameter {
            .query(
                name: "tz", schema: .string(maxLength: 64), description: "an IANA time zone, e.g. America/Los_Angeles")
        }
        static var member: OpenAPI.Parameter {
            .query(name: "member", schema: .boolean, description: "true: only spaces I joined (sign-in required)")
        }
        static var searchQ: OpenAPI.Parameter { .query(name: "q", required: true, schema: .string(maxLength: 1000)) }
        static var postQ: OpenAPI.Parameter {
            .query(name: "q", schema: .string(maxLength: 1000), description: "words; needed unless near is given")
        }
        static var near: OpenAPI.Parameter {
            .query(name: "near", schema: .string(pattern: "^-?[0-9.]+,-?[0-9.]+$"), description: "latitude,longitude")
        }
        static var followed: OpenAPI.Parameter {
            .query(name: "followed", schema: .boolean, description: "true: only people I follow (sign-in required)")
        }
        static var radiusKm: OpenAPI.Parameter {
            .query(
                name: "radiusKm",
                schema: .number(maximum: (500, exclusive: false), minimum: (0, exclusive: true), defaultValue: 10))
        }
        static var historySort: OpenAPI.Parameter {
            .query(
                name: "sort",
                schema: .string(allowedValues: ["viewedAt", "postedAt", "views"], defaultValue: "viewedAt"))
        }
        static var historyQ: OpenAPI.Parameter { .query(name: "q", schema: .string(maxLength: 1000)) }
        static var searchIn: OpenAPI.Parameter {
            .query(
                name: "in", schema: .string(allowedValues: SearchText.Field.allCases.map { AnyCodable($0.rawValue) }))
        }
        static var space: OpenAPI.Parameter { .query(name: "space", schema: .string, description: "a space's slug") }
        static var unread: OpenAPI.Parameter { .query(name: "unread", schema: .boolean) }
        static var lastEventId: OpenAPI.Parameter {
            .query(
                name: "lastEventId", schema: .integer(minimum: (0, exclusive: false)),
                description: "the id of the last event received (or the Last-Event-ID header)")
        }
        static var deviceToken: OpenAPI.Parameter {
            .header(
                name: "Plaza-Device-Token", schema: .string(maxLength: 200),
                description: """
                    The deviceToken of an earlier sign-in to this account: this client then has its own failure \
                    budget and is not locked out by other people's wrong guesses
                    """)
        }
        static var activityType: OpenAPI.Parameter {
            .query(
                name: "activity", schema: .string(maxLength: 40),
                description: "activities of this type only (as written, e.g. Running)")
        }
        static var activityProgress: OpenAPI.Parameter {
            .query(
                name: "progress", schema: .string(allowedValues: ["done", "ongoing"]),
                description: "activities done (100%) or still going")
        }
        static var kind: OpenAPI.Parameter {
            .query(name: "kind", schema: .string(allowedValues: ["text", "photo", "link", "activity"]))
        }
    }
}

extension OpenAPIDocument.Operation {
    /// An operation of Mastodon's door: errors are `{"error": "…"}`, bodies JSON or a form.
    package init(mastodon method: OpenAPI.HttpMethod, summary: String, auth: OpenAPIDocument.Auth) {
        self.init(method: method, summary: summary, auth: auth, mastodon: true)
    }
}
