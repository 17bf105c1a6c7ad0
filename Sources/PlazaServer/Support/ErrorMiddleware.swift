import Hummingbird
import Logging
import NIOHTTP1
import PlazaAPI

/// Turns every error into the JSON error body; unexpected ones are logged and become a
/// 500 without details.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as PlazaError {
            return try error.response(from: request, context: context)
        } catch let error as HTTPError {
            let (code, message) = Self.describe(error)
            return PlazaError.jsonResponse(
                status: error.status, body: ErrorBody(code: code, message: message), headers: error.headers)
        } catch is HTTPParserError {
            // A body the HTTP parser refused while a handler read it: cut short, a bad chunk size.
            return PlazaError.jsonResponse(
                status: .badRequest,
                body: ErrorBody(code: "malformed_request", message: "The request body could not be read."))
        } catch let error as any HTTPResponseError {
            let (code, message) = Self.describe(HTTPError(error.status))
            return PlazaError.jsonResponse(status: error.status, body: ErrorBody(code: code, message: message))
        } catch {
            context.logger.error(
                "Unhandled error on \(request.method) \(request.uri.path): \(String(reflecting: error))")
            return PlazaError.jsonResponse(
                status: .internalServerError,
                body: ErrorBody(code: "internal_error", message: "Something went wrong on our side."))
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
