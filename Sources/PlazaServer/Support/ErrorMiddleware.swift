import Hummingbird
import Logging
import NIOHTTP1
import PlazaAPI

/// Turns every error into the JSON error body; unexpected ones are logged and become a
/// 500 without details. On a path a door owns (`Door.ownsErrors`) — matched by a route or not,
/// thrown by a route or by a middleware — the door's own error shape answers instead.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    var doors: [any Door] = []

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let plazaError = Self.plazaError(error, request: request, logger: context.logger)
            if let door = doors.first(where: { $0.ownsErrors(onPath: request.uri.path) }) {
                return door.errorResponse(plazaError, request: request)
            }
            return try plazaError.response(from: request, context: context)
        }
    }

    /// Any error as the API's error.
    static func plazaError(_ error: any Error, request: Request, logger: Logger) -> PlazaError {
        switch error {
        case let error as PlazaError:
            return error
        case let error as HTTPError:
            let (code, message) = Self.describe(error)
            return PlazaError(error.status, code, message, headers: error.headers)
        case is HTTPParserError:
            // A body the HTTP parser refused while a handler read it: cut short, a bad chunk size.
            return PlazaError(.badRequest, "malformed_request", "The request body could not be read.")
        case let error as any HTTPResponseError:
            let (code, message) = Self.describe(HTTPError(error.status))
            return PlazaError(error.status, code, message)
        default:
            logger.error("Unhandled error on \(request.method) \(request.uri.path): \(String(reflecting: error))")
            return PlazaError(.internalServerError, "internal_error", "Something went wrong on our side.")
        }
    }

    static func describe(_ error: HTTPError) -> (String, String) {
        switch error.status {
        case .notFound: ("not_found", "There is nothing at this address.")
        case .methodNotAllowed: ("method_not_allowed", "This address does not accept that method.")
        case .contentTooLarge: ("payload_too_large", "The request body is too large.")
        case .badRequest: ("malformed_request", error.body ?? "The request could not be read.")
        case .unauthorized: ("unauthorized", "Sign in to do this.")
        default:
            (
                error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_"),
                error.body ?? error.status.reasonPhrase
            )
        }
    }
}
