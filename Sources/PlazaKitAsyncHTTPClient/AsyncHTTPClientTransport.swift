import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PlazaKitCore

/// `HTTPTransport` over AsyncHTTPClient, for Swift servers and command-line tools.
public struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient
    /// Deadline for a whole request/response (not for streams).
    let timeout: TimeAmount

    public init(client: HTTPClient = .shared, timeout: TimeAmount = .seconds(60)) {
        self.client = client
        self.timeout = timeout
    }

    /// A client that gives up at once when the server cannot be reached (refused, no route) and
    /// after 10 seconds of connecting, instead of retrying until the request's deadline: for
    /// command-line tools, which queue the write and say so (`plaza post` offline).
    public static let failingFast: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(10)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    static func request(_ data: HTTPRequestData, body: HTTPClientRequest.Body? = nil) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: data.url.absoluteString)
        request.method = HTTPMethod(rawValue: data.method)
        for (name, value) in data.headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = body
        } else if let bytes = data.body {
            request.body = .bytes(ByteBuffer(data: bytes))
        }
        return request
    }

    static func headers(_ headers: HTTPHeaders) -> [String: String] {
        var result: [String: String] = [:]
        for header in headers { result[header.name.lowercased()] = header.value }
        return result
    }

    public func send(_ request: HTTPRequestData, uploadProgress: (@Sendable (Double) -> Void)?) async throws
        -> HTTPResponseData
    {
        var body: HTTPClientRequest.Body?
        if let bytes = request.body, let uploadProgress {
            // Handed over in 64 KB chunks so progress is reported as the body is written.
            let total = bytes.count
            let chunks = stride(from: 0, to: total, by: 65_536).map {
                ByteBuffer(data: bytes[$0..<min($0 + 65_536, total)])
            }
            let sequence = ProgressChunks(chunks: chunks, total: total, progress: uploadProgress)
            body = .stream(sequence, length: .known(Int64(total)))
        }
        let response = try await client.execute(Self.request(request, body: body), timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        uploadProgress?(1)
        return HTTPResponseData(
            status: Int(response.status.code), headers: Self.headers(response.headers), body: Data(buffer: bytes))
    }

    public func stream(_ request: HTTPRequestData) async throws -> HTTPStreamResponse {
        let response = try await client.execute(Self.request(request), deadline: .distantFuture)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
        let reader = Task {
            do {
                for try await buffer in response.body { continuation.yield(Data(buffer: buffer)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in reader.cancel() }
        return HTTPStreamResponse(
            status: Int(response.status.code), headers: Self.headers(response.headers), body: stream)
    }
}

/// A body's chunks that report how much has been handed to the connection.
struct ProgressChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let chunks: [ByteBuffer]
    let total: Int
    let progress: @Sendable (Double) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var index = 0
        var sent = 0
        let sequence: ProgressChunks

        mutating func next() async -> ByteBuffer? {
            guard index < sequence.chunks.count else { return nil }
            let chunk = sequence.chunks[index]
            index += 1
            if sent > 0 { sequence.progress(Double(sent) / Double(Swift.max(1, sequence.total))) }
            sent += chunk.readableBytes
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
}
