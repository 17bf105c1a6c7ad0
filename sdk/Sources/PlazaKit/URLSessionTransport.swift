import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `HTTPTransport` over URLSession (Apple platforms, and Linux through FoundationNetworking).
/// One delegate serves every task, so upload progress and streamed bodies work the same on
/// all platforms without the Apple-only async byte APIs.
public final class URLSessionTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: URLSession is thread-safe (documented), and `delegate` guards its own state with a lock.
    private let session: URLSession
    private let delegate: Delegate

    public init(configuration: URLSessionConfiguration = .default) {
        // PlazaKit keeps its own copies (`FeedPager`, `CommentThread`) and revalidates them: the
        // system's HTTP cache would keep a second copy of a person's data on disk.
        let configuration = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        configuration.urlCache = nil
        let delegate = Delegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    static func urlRequest(_ request: HTTPRequestData) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        // PlazaKit keeps its own copies and revalidates them (`If-None-Match`): URLSession's cache
        // would answer a 304 itself and hide it.
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    public func send(_ request: HTTPRequestData, uploadProgress: (@Sendable (Double) -> Void)?) async throws
        -> HTTPResponseData
    {
        let urlRequest = Self.urlRequest(request)
        let task =
            request.body.map { session.uploadTask(with: urlRequest, from: $0) } ?? session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, .collect(Data(), continuation, uploadProgress))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    public func stream(_ request: HTTPRequestData) async throws -> HTTPStreamResponse {
        var urlRequest = Self.urlRequest(request)
        // An idle timeout: the server sends a heartbeat every 15 s, so a silent minute means a dead connection.
        urlRequest.timeoutInterval = 60
        let task = session.dataTask(with: urlRequest)
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: Data.self)
        bodyContinuation.onTermination = { _ in task.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, .stream(head: continuation, body: body, bodyContinuation: bodyContinuation))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: `tasks` is only touched under `lock`.
        enum Handler {
            case collect(Data, CheckedContinuation<HTTPResponseData, any Error>, (@Sendable (Double) -> Void)?)
            case stream(
                head: CheckedContinuation<HTTPStreamResponse, any Error>?, body: AsyncThrowingStream<Data, any Error>,
                bodyContinuation: AsyncThrowingStream<Data, any Error>.Continuation)
        }

        private let lock = NSLock()
        private var tasks: [Int: Handler] = [:]

        func register(_ task: URLSessionTask, _ handler: Handler) {
            lock.withLock { tasks[task.taskIdentifier] = handler }
        }

        static func head(_ response: URLResponse?) -> (Int, [String: String]) {
            guard let http = response as? HTTPURLResponse else { return (0, [:]) }
            var headers: [String: String] = [:]
            for (name, value) in http.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
            }
            return (http.statusCode, headers)
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let resume: (() -> Void)? = lock.withLock {
                guard case .stream(let head?, let body, let bodyContinuation) = tasks[dataTask.taskIdentifier] else {
                    return nil
                }
                tasks[dataTask.taskIdentifier] = .stream(head: nil, body: body, bodyContinuation: bodyContinuation)
                let (status, headers) = Self.head(response)
                return { head.resume(returning: HTTPStreamResponse(status: status, headers: headers, body: body)) }
            }
            resume?()
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let streamTo: AsyncThrowingStream<Data, any Error>.Continuation? = lock.withLock {
                switch tasks[dataTask.taskIdentifier] {
                case .collect(var collected, let continuation, let progress):
                    collected.append(data)
                    tasks[dataTask.taskIdentifier] = .collect(collected, continuation, progress)
                    return nil
                case .stream(_, _, let bodyContinuation): return bodyContinuation
                case nil: return nil
                }
            }
            streamTo?.yield(data)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            guard totalBytesExpectedToSend > 0 else { return }
            let progress: (@Sendable (Double) -> Void)? = lock.withLock {
                if case .collect(_, _, let progress) = tasks[task.taskIdentifier] { return progress }
                return nil
            }
            progress?(min(1, Double(totalBytesSent) / Double(totalBytesExpectedToSend)))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let handler = lock.withLock { tasks.removeValue(forKey: task.taskIdentifier) }
            switch handler {
            case .collect(let data, let continuation, let progress):
                if let error { return continuation.resume(throwing: error) }
                progress?(1)
                let (status, headers) = Self.head(task.response)
                continuation.resume(returning: HTTPResponseData(status: status, headers: headers, body: data))
            case .stream(let head, let body, let bodyContinuation):
                if let head {
                    if let error {
                        head.resume(throwing: error)
                    } else {
                        let (status, headers) = Self.head(task.response)
                        head.resume(returning: HTTPStreamResponse(status: status, headers: headers, body: body))
                    }
                }
                bodyContinuation.finish(throwing: error)
            case nil: break
            }
        }
    }
}
