import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlazaAPI

/// The one error type of the API. It renders as the JSON error body of API.md.
public struct PlazaError: HTTPResponseError, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public let field: String?
    /// Extra response headers, e.g. `Retry-After` on 429.
    public let headers: HTTPFields
    /// `second_factor_required`: the token that completes the sign-in.
    public let challenge: String?

    public init(
        _ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil,
        headers: HTTPFields = [:], challenge: String? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers
        self.challenge = challenge
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    /// The same error with `value` in header `name`, unless it already has one.
    func withHeader(_ name: HTTPField.Name, _ value: String) -> PlazaError {
        guard headers[name] == nil else { return self }
        var headers = headers
        headers[name] = value
        return PlazaError(status, code, message, field: field, headers: headers, challenge: challenge)
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Self.jsonResponse(
            status: status, body: ErrorBody(code: code, message: message, field: field, challenge: challenge),
            headers: headers)
    }

    static func jsonResponse(status: HTTPResponse.Status, body: ErrorBody, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.encode(body, capacity: 256))))
    }

    // MARK: common errors

    package static func malformed(_ message: String) -> PlazaError {
        PlazaError(.badRequest, "malformed_request", message)
    }
    static func invalid(_ field: String, _ message: String) -> PlazaError {
        PlazaError(.unprocessableContent, "invalid_field", message, field: field)
    }
    static let unauthorized = PlazaError(.unauthorized, "unauthorized", "Sign in to do this.")
    static let forbidden = PlazaError(.forbidden, "forbidden", "You are not allowed to do this.")
    static func notFound(_ what: String) -> PlazaError { PlazaError(.notFound, "not_found", "\(what) was not found.") }
    static func rateLimited(retryAfter seconds: Int, message: String = "Too many requests. Try again later.")
        -> PlazaError
    {
        PlazaError(.tooManyRequests, "rate_limited", message, headers: [.retryAfter: String(max(1, seconds))])
    }
}
