import Foundation
import Hummingbird
import NIOCore

/// JSON coding for request and response bodies.
enum JSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()
}

/// Decodes JSON request bodies, turning every decoding failure into a clear 400 or 422.
public struct PlazaRequestDecoder: RequestDecoder {
    public init() {}
    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws
        -> T
    {
        try Self.decode(type, from: try await Self.body(of: request, context: context))
    }

    /// The JSON body's bytes (empty when there is none): 415 for another content type (but a
    /// URL-encoded form `allowingForms`, as the Mastodon API takes), 413 past the limit.
    package static func body(of request: Request, context: some RequestContext, allowingForms: Bool = false)
        async throws
        -> ByteBuffer
    {
        if let contentType = request.headers[.contentType]?.lowercased(), !contentType.hasPrefix("application/json"),
            !(allowingForms && contentType.hasPrefix("application/x-www-form-urlencoded"))
        {
            throw PlazaError(
                .unsupportedMediaType, "unsupported_media_type",
                allowingForms
                    ? "Send the body as application/json or application/x-www-form-urlencoded."
                    : "Send the body as application/json.")
        }
        do {
            return try await request.body.collect(upTo: context.maxUploadSize)
        } catch is NIOTooManyBytesError {
            throw PlazaError(
                .contentTooLarge, "payload_too_large", "The request body is larger than \(context.maxUploadSize) bytes."
            )
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
        guard buffer.readableBytes > 0 else { throw PlazaError.malformed("The request needs a JSON body.") }
        do {
            return try JSONDecoder().decode(type, from: buffer)
        } catch let error as DecodingError {
            throw Self.describe(error)
        }
    }

    static func describe(_ error: DecodingError) -> PlazaError {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(
                of: ".[", with: "[")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return PlazaError.malformed("The body is not valid JSON.")
        case .dataCorrupted(let context):
            return .invalid(
                path(context.codingPath), "\(path(context.codingPath)) is not valid: \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return .invalid(field, "\(field) is required.")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            if field.isEmpty { return PlazaError.malformed("The body must be a JSON object.") }
            return .invalid(field, "\(field) must be \(Self.describe(type)).")
        @unknown default:
            return PlazaError.malformed("The body could not be read.")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}
