import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's WebSocket-upgradable HTTP channel adds its idle timeout only once a request's
/// head has been read, and leaves the request decoder's errors unhandled: a client that sends
/// half a head, or headers over the cap, would hold its connection forever. This wraps that
/// channel: until the first head is through, a connection that sends nothing for `timeout`, or
/// whose head the decoder refuses, is closed. After that the channel's own handling applies.
struct HeadDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                IdleStateHandler(readTimeout: timeout), name: HeadDeadline.idleName, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(HeadDeadline())
            return value
        }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// At the end of the pipeline while the first head is read: closes the connection when it
/// idles or the head is refused; on the first thing decoded (a head, or after an upgrade a
/// frame) it passes it on and steps out with the idle handler.
final class HeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    static let idleName = "plaza.head-deadline.idle"
    private var done = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        guard !done else { return }
        done = true
        context.pipeline.removeHandler(name: Self.idleName, promise: nil)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !done, let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done else { return context.fireErrorCaught(error) }
        context.close(promise: nil)
    }
}
