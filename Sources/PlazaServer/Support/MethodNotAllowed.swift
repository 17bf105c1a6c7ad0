import HTTPTypes
import Hummingbird

extension Router {
    /// Makes every path the router serves answer the methods it does not serve with 405 and an
    /// `Allow` header naming those it does (Hummingbird alone answers 404, as for an unknown
    /// path). Call it once every route is added.
    func answerUnservedMethodsNotAllowed() {
        var served: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            served[route.path.description, default: (route.path, [])].methods.insert(route.method)
        }
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete]
        for (path, known) in served.values {
            let allow = known.map(\.rawValue).sorted().joined(separator: ", ")
            for method in methods where !known.contains(method) {
                on(path, method: method) { _, _ -> Response in
                    throw HTTPError(.methodNotAllowed, headers: [.allow: allow])
                }
            }
        }
    }
}
