import HTTPTypes
import Hummingbird

extension Router {
    /// Makes every path the router serves answer the methods it does not serve with 405 and an
    /// `Allow` header naming those it does (Hummingbird alone answers 404, as for an unknown
    /// path), and `OPTIONS` with 204 and the same header. `HEAD` is served wherever `GET` is.
    /// Call it once every route is added.
    func answerUnservedMethodsNotAllowed() {
        var served: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            served[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        for (path, known) in served.values {
            var allowed = known
            if known.contains(.get) { allowed.insert(.head) }
            let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            for method in HTTPRequest.Method.answered where !allowed.contains(method) {
                on(path, method: method) { _, _ -> Response in
                    throw HTTPError(.methodNotAllowed, headers: [.allow: allow])
                }
            }
            if !known.contains(.options) {
                on(path, method: .options) { _, _ in Response(status: .noContent, headers: [.allow: allow]) }
            }
        }
    }
}

extension HTTPRequest.Method {
    /// The methods a path that does not serve them answers with 405. QUERY: the safe method
    /// with a body (an IETF draft) some clients and fuzzers send.
    static let answered: [HTTPRequest.Method] =
        [.get, .head, .post, .put, .patch, .delete, .trace] + [.init("QUERY")].compactMap { $0 }
}
