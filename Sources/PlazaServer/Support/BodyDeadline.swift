import Hummingbird
import NIOCore

/// A request body must have arrived within `timeout` of the request's head. The idle timeout
/// closes a connection that stops sending; this one ends a body that keeps trickling (a byte
/// every few seconds would otherwise hold a connection for hours). Past the deadline the next
/// chunk fails the read with 408 `body_timeout`, and the connection stops reading, so the
/// server does not go on draining the rest after answering.
struct BodyDeadlineMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let timeout: Duration

    static let expired = PlazaError(.requestTimeout, "body_timeout", "The request body took too long to arrive.")

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        var request = request
        let channel = context.channel
        request.body = RequestBody(
            asyncSequence: DeadlineBody(base: request.body, deadline: .now + timeout) {
                channel.close(mode: .input, promise: nil)
            })
        return try await next(request, context)
    }
}

/// The chunks of `base`, until one arrives after `deadline`: then `expire` runs and the read fails.
struct DeadlineBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let deadline: ContinuousClock.Instant
    let expire: @Sendable () -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            if ContinuousClock.now > deadline {
                expire()
                throw BodyDeadlineMiddleware.expired
            }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), deadline: deadline, expire: expire)
    }
}
