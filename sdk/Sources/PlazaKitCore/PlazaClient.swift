import Foundation
import PlazaAPI
@_exported import PlazaAPI

/// Where the signed-in session's token lives. Apps plug in the Keychain; the default keeps it in memory.
public protocol TokenStore: Sendable {
    func token() async -> String?
    func setToken(_ token: String?) async
}

/// Keeps the token in memory for the life of the process.
public actor InMemoryTokenStore: TokenStore {
    private var value: String?
    public init(token: String? = nil) { value = token }
    public func token() -> String? { value }
    public func setToken(_ token: String?) { value = token }
}

/// An error from Plaza: the HTTP status and the error body's `code`, `message` and `field`.
public struct PlazaClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var field: String?
    /// Seconds to wait, from `Retry-After` on a 429.
    public var retryAfter: Int?
    /// With `second_factor_required` (the password was right, two-factor sign-in is on): pass it
    /// to `completeLogin(challenge:code:)` with the code the person types.
    public var challenge: String?

    public var description: String { "\(status) \(code): \(message)" + (field.map { " (\($0))" } ?? "") }
}

/// A client for one Plaza server: async methods for every endpoint of the API. Sign in with
/// `register` or `login` and the token is kept in `tokens` for the calls that follow.
public struct PlazaClient: Sendable {
    public let baseURL: URL
    public let transport: any HTTPTransport
    public let tokens: any TokenStore

    public init(baseURL: URL, transport: any HTTPTransport, tokens: any TokenStore = InMemoryTokenStore()) {
        self.baseURL = baseURL
        self.transport = transport
        self.tokens = tokens
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()
    static let decoder = JSONDecoder()

    /// `/api/v1` + `path`, with the query items that have a value.
    func url(_ path: String, _ query: [String: String?] = [:]) -> URL {
        var components = URLComponents(
            url: baseURL.appendingPathComponent("api/v1" + path), resolvingAgainstBaseURL: false)!
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted {
            $0.name < $1.name
        }
        if !items.isEmpty { components.queryItems = items }
        return components.url!
    }

    /// The absolute URL of a media path such as `Media.variants.medium` (`/media/{id}/medium`).
    public func mediaURL(_ path: String) -> URL {
        URL(string: path, relativeTo: baseURL)?.absoluteURL ?? baseURL.appendingPathComponent(path)
    }

    /// `Accept` and, when signed in, `Authorization`.
    func headers(accept: String = "application/json") async -> [String: String] {
        headers(accept: accept, token: await tokens.token())
    }

    private func headers(accept: String = "application/json", token: String?) -> [String: String] {
        var headers = ["Accept": accept]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return headers
    }

    /// Sends a request and returns the raw response, throwing `PlazaClientError` for any status ≥ 400.
    /// `signingIn` requests (sign-up, sign-in, and the mailed links' calls, which need no session)
    /// carry no token: a stale one would be refused.
    @discardableResult
    func send(
        _ method: String, _ path: String, query: [String: String?] = [:], body: (any Encodable & Sendable)? = nil,
        signingIn: Bool = false
    ) async throws -> HTTPResponseData {
        try await send(
            method, path, query: query, raw: try body.map { (try Self.encoder.encode($0), "application/json") },
            signingIn: signingIn)
    }

    /// Sends `raw` (bytes and their content type) as the body. A token the server refuses as
    /// invalid (revoked, expired, or its person suspended) is forgotten, so the app is signed out.
    func send(
        _ method: String, _ path: String, query: [String: String?] = [:], raw: (data: Data, contentType: String)?,
        signingIn: Bool = false, headers extra: [String: String] = [:],
        uploadProgress: (@Sendable (Double) -> Void)? = nil
    ) async throws -> HTTPResponseData {
        let token = signingIn ? nil : await tokens.token()
        var headers = headers(token: token).merging(extra) { _, new in new }
        if let raw { headers["Content-Type"] = raw.contentType }
        let request = HTTPRequestData(method: method, url: url(path, query), headers: headers, body: raw?.data)
        let response = try await transport.send(request, uploadProgress: uploadProgress)
        do {
            return try Self.check(response)
        } catch let error as PlazaClientError where error.code == "invalid_token" {
            // Unless another call has signed in since.
            if let token, await tokens.token() == token { await tokens.setToken(nil) }
            throw error
        }
    }

    static func check(_ response: HTTPResponseData) throws -> HTTPResponseData {
        guard response.status >= 400 else { return response }
        throw error(from: response)
    }

    /// The error an error response stands for: the API's error body, else the status and text.
    static func error(from response: HTTPResponseData) -> PlazaClientError {
        let detail = try? decoder.decode(ErrorBody.self, from: response.body).error
        return PlazaClientError(
            status: response.status, code: detail?.code ?? "http_\(response.status)",
            message: detail?.message ?? String(decoding: response.body.prefix(500), as: UTF8.self),
            field: detail?.field,
            retryAfter: response.headers["retry-after"].flatMap { Int($0) }, challenge: detail?.challenge)
    }

    func call<T: Decodable>(
        _ method: String, _ path: String, query: [String: String?] = [:], body: (any Encodable & Sendable)? = nil,
        signingIn: Bool = false, as: T.Type = T.self
    ) async throws -> T {
        let response = try await send(method, path, query: query, body: body, signingIn: signingIn)
        return try Self.decoder.decode(T.self, from: response.body)
    }
}

/// A cached answer checked with the server (`If-None-Match`): unchanged, or changed with the new
/// value and its tag.
public enum Revalidated<Value: Sendable>: Sendable {
    case notModified
    case modified(Value, etag: String?)
}

extension PlazaClient {
    /// `GET path` sent with the tag of the copy the app has: `.notModified` when the server's
    /// answer is the same (a 304, no body), else the new value and its `ETag`.
    func revalidate<T: Decodable & Sendable>(
        _ path: String, query: [String: String?] = [:], etag: String?, as: T.Type = T.self
    ) async throws -> Revalidated<T> {
        let response = try await send(
            "GET", path, query: query, raw: nil, headers: etag.map { ["If-None-Match": $0] } ?? [:])
        if response.status == 304 { return .notModified }
        return .modified(try Self.decoder.decode(T.self, from: response.body), etag: response.headers["etag"])
    }
}

/// Which page of a list: at most `limit` items after `cursor` (from the previous page's `nextCursor`).
public struct PageOptions: Sendable {
    public var limit: Int?
    public var cursor: String?
    public init(limit: Int? = nil, cursor: String? = nil) {
        self.limit = limit
        self.cursor = cursor
    }

    var query: [String: String?] { ["limit": limit.map(String.init), "cursor": cursor] }
}

extension Dictionary where Key == String, Value == String? {
    func merging(_ page: PageOptions) -> Self { merging(page.query) { _, new in new } }
}
