import Foundation
import Hummingbird
import Logging
import OpenAPIKit
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

@Suite("OpenAPI document")
struct OpenAPITests {
    /// Every registered API route is documented and every documented route exists. The web
    /// app's pages and static files are HTML for browsers, not part of the API.
    @Test func documentMatchesTheRouter() async throws {
        try await withRouter { router, doors, config in
            let webApp = Router(context: PlazaContext.self)
            webApp.addRoutes(
                doors.webController(renderer: try await WebRenderer.load(map: config.map), api: doors.apiControllers())
                    .routes)
            // The web app's routes, but for the browser's steps of external sign-in, which sit at
            // the API's paths and are documented with it.
            let pages = Set(
                webApp.routes.filter { !Self.normalise($0.path.description).hasPrefix("/api/") }.map(Self.operation))
            #expect(pages.count > 20, "the web app's pages are registered")
            let registered = Set(router.routes.map(Self.operation)).subtracting(pages)
            let document = try JSONSerialization.jsonObject(with: Data(try OpenAPIDocument.json())) as! [String: Any]
            let paths = document["paths"] as! [String: [String: Any]]
            let documented = Set(paths.flatMap { path, item in item.keys.map { "\($0) \(path)" } })
            #expect(registered.subtracting(documented).sorted() == [], "routes missing from the OpenAPI document")
            #expect(documented.subtracting(registered).sorted() == [], "documented routes that do not exist")
            #expect(registered.count > 25)
        }
    }

    /// A route as the document names its operation: `get /api/v1/posts/{id}`.
    static func operation(_ route: Router<PlazaContext>.RouteDescription) -> String {
        "\(route.method.rawValue.lowercased()) \(normalise(route.path.description))"
    }

    /// `:name` and `{name}` both become `{name}`, with a leading slash.
    static func normalise(_ path: String) -> String {
        "/"
            + path.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(
                separator: "/")
    }

    @Test func everySchemaReferenceResolves() throws {
        let text = String(decoding: try OpenAPIDocument.json(), as: UTF8.self)
        let document = try JSONSerialization.jsonObject(with: Data(try OpenAPIDocument.json())) as! [String: Any]
        let schemas = (document["components"] as! [String: Any])["schemas"] as! [String: Any]
        let refs = text.matches(of: /#\/components\/schemas\/([A-Za-z]+)/).map { String($0.1) }
        #expect(!refs.isEmpty)
        for name in Set(refs) { #expect(schemas[name] != nil, "unresolved $ref \(name)") }
    }

    @Test func linksNameExistingOperations() throws {
        let document = try JSONSerialization.jsonObject(with: Data(try OpenAPIDocument.json())) as! [String: Any]
        let operations = (document["paths"] as! [String: [String: Any]]).values.flatMap {
            $0.values.compactMap { ($0 as? [String: Any])?["operationId"] as? String }
        }
        #expect(Set(operations).count == operations.count, "operation ids are unique")
        let linked = OpenAPIDocument.operations.flatMap { $0.1.links.map(\.operationID) }
        #expect(!linked.isEmpty)
        for id in linked { #expect(operations.contains(id), "link to unknown operation \(id)") }
    }

    /// The document encodes (the server encodes it at its first request, and would answer 500 if it
    /// did not), reads back as an OpenAPI 3.1 document and passes OpenAPIKit's validation: references
    /// resolve, operation ids are unique, path parameters are declared, links name operations.
    @Test func encodesAndValidates() throws {
        let served = try JSONDecoder().decode(OpenAPI.Document.self, from: Data(try OpenAPIDocument.json()))
        #expect(served.openAPIVersion == .v3_1_0)
        try served.validate(
            using: Validator().validating(
                \.documentContainsPaths, \.pathsContainOperations, \.pathParametersAreDefined,
                \.operationsContainResponses, \.linkOperationsExist))
    }

    @Test func isServedAtItsAddress() async throws {
        try await withApp { api async throws in
            let response = try await api.get("/openapi.json")
            #expect(response.status == .ok)
            let document =
                try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
            #expect(document?["openapi"] as? String == "3.1.0")
        }
    }

    /// A documented path answers every method it does not serve with 405 and `Allow`, naming
    /// the methods it does; an unknown path stays a 404.
    @Test func aKnownPathAnswersOtherMethodsWith405() async throws {
        let document = try JSONSerialization.jsonObject(with: Data(try OpenAPIDocument.json())) as! [String: Any]
        let paths = (document["paths"] as! [String: [String: Any]]).mapValues { Set($0.keys.map { $0.uppercased() }) }
        try await withApp { api async throws in
            var checked = 0
            for (path, methods) in paths where !path.contains("/streaming") {
                let served = methods.intersection(["GET", "POST", "PUT", "PATCH", "DELETE"])
                let concrete = path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "1", options: .regularExpression)
                for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "TRACE", "QUERY"] where !served.contains(method)
                {
                    let response = try await api.client.execute(
                        uri: concrete, method: HTTPRequest.Method(method)!, headers: [:], body: nil)
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    let allowed = (response.headers[.allow] ?? "").split(separator: ", ").map(String.init)
                    #expect(Set(allowed).subtracting(["HEAD"]) == served, "\(method) \(path)")
                    checked += 1
                }
            }
            #expect(checked > 100)
            // OPTIONS names what a path serves; HEAD goes wherever GET does.
            let options = try await api.client.execute(
                uri: "/api/v1/collections", method: .options, headers: [:], body: nil)
            #expect(options.status == .noContent && options.headers[.allow] == "GET, HEAD, POST")
            let unknown = try await api.client.execute(
                uri: "/api/v1/no-such-thing", method: .put, headers: [:], body: nil)
            #expect(unknown.status == .notFound)
            // HEAD answers as GET would, without the body: the API, the web app, its files.
            for path in ["/api/v1/feed/global", "/explore", "/assets/plaza.css", "/healthz"] {
                let get = try await api.client.execute(uri: path, method: .get, headers: [:], body: nil)
                let head = try await api.client.execute(uri: path, method: .head, headers: [:], body: nil)
                #expect(get.status == .ok && head.status == .ok, "HEAD \(path): \(head.status)")
                #expect(head.body.readableBytes == 0 && head.headers[.contentType] == get.headers[.contentType])
            }
            let missing = try await api.client.execute(uri: "/no/such/page", method: .head, headers: [:], body: nil)
            #expect(missing.status == .notFound)
        }
    }

    @Test func healthzAnswersWhenTheDatabaseDoes() async throws {
        try await withApp { api async throws in
            let response = try await api.client.execute(uri: "/healthz", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
        }
    }
}
