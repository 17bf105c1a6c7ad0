import Foundation

/// One HTTP request as PlazaKit sends it.
public struct HTTPRequestData: Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A complete response.
public struct HTTPResponseData: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A response whose body arrives in chunks (the event stream).
public struct HTTPStreamResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: AsyncThrowingStream<Data, any Error>

    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<Data, any Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// How PlazaKit talks HTTP. `URLSessionTransport` (module `PlazaKit`) works on Apple platforms
/// and Linux; `PlazaKitAsyncHTTPClient` adds one over AsyncHTTPClient for servers. Tests and apps may
/// plug in their own.
public protocol HTTPTransport: Sendable {
    /// Sends `request`; `uploadProgress` gets the fraction of the body sent, from 0 to 1.
    func send(_ request: HTTPRequestData, uploadProgress: (@Sendable (Double) -> Void)?) async throws
        -> HTTPResponseData
    /// Sends `request` and returns as soon as the head arrives; the body streams. Cancelling
    /// the consuming task closes the connection.
    func stream(_ request: HTTPRequestData) async throws -> HTTPStreamResponse
}

extension HTTPTransport {
    public func send(_ request: HTTPRequestData) async throws -> HTTPResponseData {
        try await send(request, uploadProgress: nil)
    }
}
