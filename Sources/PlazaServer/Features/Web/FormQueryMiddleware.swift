import HTTPTypes
import Hummingbird

/// GET forms send spaces as `+` (application/x-www-form-urlencoded), which URI query
/// parsing keeps as a literal plus: on the web app's pages a `+` in the query means a space.
struct FormQueryMiddleware: RouterMiddleware {
    typealias Context = PlazaContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let path = request.head.path, let mark = path.firstIndex(of: "?"), path[mark...].contains("+") else {
            return try await next(request, context)
        }
        var head = request.head
        head.path = String(path[..<mark]) + path[mark...].replacingOccurrences(of: "+", with: "%20")
        return try await next(Request(head: head, body: request.body), context)
    }
}
