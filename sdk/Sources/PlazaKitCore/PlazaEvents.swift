import Foundation
import PlazaAPI

/// A realtime event from `GET /stream`.
public enum PlazaEvent: Sendable {
    /// A post for my home feed.
    case postCreated(Post)
    case postUpdated(Post)
    case postDeleted(id: String)
    /// A comment on one of my posts.
    case commentCreated(Comment)
    /// A like or unlike on one of my posts.
    case likeChanged(LikeChange)
    case notification(PlazaAPI.Notification)
    /// Sent on every (re)connection once the missed events have been replayed.
    case ready(replayed: Int)
    /// The missed events are older than the server keeps: reload what is on screen, then go on.
    case reset
}

/// One event with the id to resume after it.
public struct PlazaStreamEvent: Sendable {
    public let id: String?
    public let event: PlazaEvent
}

/// How long to wait before reconnecting: doubling from `initial` up to `maximum`, back to
/// `initial` once a connection has worked.
public struct ReconnectPolicy: Sendable {
    public var initial: Duration
    public var maximum: Duration
    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
    }
}

extension PlazaClient {
    /// The signed-in person's realtime events. The sequence reconnects by itself (with backoff)
    /// when the connection drops or the server restarts, resuming after the last event it
    /// delivered with `Last-Event-ID`, so nothing is lost or repeated. It ends with an error
    /// only when the session is not valid (401) or the task is cancelled.
    public func events(after lastEventID: String? = nil, reconnect: ReconnectPolicy = .init()) -> AsyncThrowingStream<
        PlazaStreamEvent, any Error
    > {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: PlazaStreamEvent.self)
        let task = Task {
            var resumeFrom = lastEventID
            var delay = reconnect.initial
            var serverRetry: Duration?
            while !Task.isCancelled {
                do {
                    var headers = await headers(accept: "text/event-stream")
                    if let resumeFrom { headers["Last-Event-ID"] = resumeFrom }
                    let response = try await transport.stream(
                        HTTPRequestData(method: "GET", url: url("/stream"), headers: headers))
                    if response.status >= 400 {
                        var body = Data()
                        for try await chunk in response.body { body.append(chunk) }
                        let failure = Self.error(
                            from: HTTPResponseData(status: response.status, headers: response.headers, body: body))
                        if response.status == 401 || response.status == 403 { throw failure }
                        if let wait = failure.retryAfter { delay = .seconds(wait) }
                    } else {
                        var parser = ServerSentEvents()
                        for try await chunk in response.body {
                            for frame in parser.feed(chunk) {
                                if let retry = frame.retry { serverRetry = .milliseconds(retry) }
                                delay = serverRetry ?? reconnect.initial
                                if let id = frame.id { resumeFrom = id }
                                if let event = Self.event(frame) {
                                    continuation.yield(PlazaStreamEvent(id: frame.id, event: event))
                                }
                            }
                        }
                    }
                } catch let error as PlazaClientError where error.status == 401 || error.status == 403 {
                    continuation.finish(throwing: error)
                    return
                } catch {
                    if Task.isCancelled { break }
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, reconnect.maximum)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    static func event(_ frame: ServerSentEvents.Frame) -> PlazaEvent? {
        let data = Data(frame.data.utf8)
        func decode<T: Decodable>(_ type: T.Type) -> T? { try? decoder.decode(T.self, from: data) }
        switch StreamEventKind(rawValue: frame.event) {
        case .postCreated: return decode(Post.self).map(PlazaEvent.postCreated)
        case .postUpdated: return decode(Post.self).map(PlazaEvent.postUpdated)
        case .postDeleted: return decode(DeletedPost.self).map { .postDeleted(id: $0.id) }
        case .commentCreated: return decode(Comment.self).map(PlazaEvent.commentCreated)
        case .likeChanged: return decode(LikeChange.self).map(PlazaEvent.likeChanged)
        case .notification: return decode(PlazaAPI.Notification.self).map(PlazaEvent.notification)
        case .ready: return decode(StreamReady.self).map { .ready(replayed: $0.replayed) }
        case .reset: return .reset
        case nil: return nil  // a kind this SDK does not know yet
        }
    }
}

/// A Server-Sent Events parser (the WHATWG event stream format), fed chunk by chunk.
struct ServerSentEvents {
    struct Frame: Equatable {
        var event = "message"
        var data = ""
        var id: String?
        var retry: Int?
    }

    private var buffer = Data()
    private var current = Frame()
    private var hasData = false

    /// The frames completed by `chunk`.
    mutating func feed(_ chunk: Data) -> [Frame] {
        buffer.append(chunk)
        var frames: [Frame] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = buffer[buffer.startIndex..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            buffer.removeSubrange(buffer.startIndex...newline)
            if let frame = process(String(decoding: line, as: UTF8.self)) { frames.append(frame) }
        }
        return frames
    }

    private mutating func process(_ line: String) -> Frame? {
        if line.isEmpty {
            defer {
                current = Frame()
                hasData = false
            }
            return hasData || current.retry != nil || current.id != nil ? current : nil
        }
        if line.hasPrefix(":") { return nil }
        let field: Substring
        let value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            var rest = line[line.index(after: colon)...]
            if rest.hasPrefix(" ") { rest = rest.dropFirst() }
            value = rest
        } else {
            (field, value) = (Substring(line), "")
        }
        switch field {
        case "event": current.event = String(value)
        case "data":
            current.data += hasData ? "\n" + value : String(value)
            hasData = true
        case "id" where !value.contains("\0"): current.id = String(value)
        case "retry": current.retry = Int(value)
        default: break
        }
        return nil
    }
}
