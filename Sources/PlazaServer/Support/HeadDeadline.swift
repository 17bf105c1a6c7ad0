import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's WebSocket-upgradable HTTP channel adds its idle timeout only once a
/// connection's first request head has been read, and leaves the request decoder's errors
/// unhandled: a client that trickles half a head, or sends headers over the cap, would hold its
/// connection forever. `HeadDeadlineChannel` wraps that channel: the first head must be read
/// within `timeout` and be one the decoder accepts, or the connection is closed. After it,
/// the channel's own idle timeout applies.
///
/// Nothing in the pipeline is moved or removed (that stalled upgraded connections): a handler at
/// the front times the head, one at the end closes on a refused head, and the server disarms
/// them when a head arrives (`HeadDeadline.headArrived`): in `shouldUpgrade` for an upgrade, through the
/// HTTP channel's `HeadArrivedMarker` otherwise.
struct HeadDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(HeadDeadline(timeout: timeout), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(RefusedHeadCloser())
            return value
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// First in the pipeline: closes the connection unless disarmed within the timeout.
final class HeadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Until the first head is read.
    private(set) var isArmed = true

    init(timeout: TimeAmount) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { disarm() }

    /// Disarms the connection's deadline: its first head has been read.
    static func headArrived(on channel: any Channel) {
        channel.pipeline.handler(type: HeadDeadline.self).whenSuccess { $0.disarm() }
    }

    func disarm() {
        isArmed = false
        timer?.cancel()
        timer = nil
    }
}

/// Last in the pipeline while the first head is read: a head the decoder refused (headers over
/// the cap, not HTTP) closes the connection. Later errors go on to the HTTP channel's handling.
final class RefusedHeadCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let deadline = try? context.pipeline.syncOperations.handler(type: HeadDeadline.self), deadline.isArmed {
            context.close(promise: nil)
        } else {
            context.fireErrorCaught(error)
        }
    }
}

/// Added by the HTTP channel when a head that asks for no upgrade is read (its "additional
/// channel handlers"): disarms the head deadline, then passes everything through.
final class HeadArrivedMarker: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func handlerAdded(context: ChannelHandlerContext) {
        (try? context.pipeline.syncOperations.handler(type: HeadDeadline.self))?.disarm()
    }
}
