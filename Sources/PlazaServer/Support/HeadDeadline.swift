import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's WebSocket-upgradable HTTP channel adds its idle timeout only once a
/// connection's first request head has been read, leaves the request decoder's errors
/// unhandled, and logs an error for every connection that closes before sending a head: a
/// client that trickles half a head, or sends headers over the cap, would hold its connection
/// forever, and every unused preconnect would log an error. `HeadDeadlineChannel` wraps that
/// channel with a `FirstHeadGuard` right after the request decoder: the first head must be read
/// within `timeout` and be one the decoder accepts, or the connection is closed; a connection
/// closed before its first head is left quietly. After the head, the channel's own handling
/// applies (its idle timeout for HTTP; pings for a WebSocket).
struct HeadDeadlineChannel<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let timeout: TimeAmount

    struct Value: ServerChildChannelValue {
        let inner: Inner.Value
        /// True once the first head is read, false if the connection closed before it.
        let firstHead: EventLoopFuture<Bool>
        var channel: any Channel { inner.channel }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // A connection's first read buffer stays with it for its life: 512 bytes rather than
        // NIO's 2,048 hold a request head without cookies, and the buffer grows for bigger reads
        // (an upload) as before. An open stream, which reads nothing more, keeps 1.5 KB less.
        try? channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65536))
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let guardHandler = FirstHeadGuard(timeout: timeout, firstHead: channel.eventLoop.makePromise())
            try pipeline.addHandler(guardHandler, position: .after(decoder))
            return Value(inner: value, firstHead: guardHandler.firstHead.futureResult)
        }
    }

    func handle(value: Value, logger: Logger) async {
        // Nothing to serve on a connection that closed before asking anything.
        guard (try? await value.firstHead.get()) == true else { return }
        await inner.handle(value: value.inner, logger: logger)
    }
}

/// Right after the request decoder, for the connection's life (it never moves, and passes
/// everything through): closes the connection unless the decoder hands it a first head within
/// the timeout, and answers 400 and closes it on a head the decoder refused (headers over the
/// cap, not HTTP).
/// The decoder's first output is a head, so the first read is one; a head that asks for an upgrade
/// other than a WebSocket is made a plain request (`plainUnlessWebSocket`).
final class FirstHeadGuard: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let timeout: TimeAmount
    let firstHead: EventLoopPromise<Bool>
    private var timer: Scheduled<Void>?
    private var headRead = false
    /// The server began shutting down before this connection's first head arrived.
    private var quiescing = false
    /// How long a connection accepted before the shutdown has to send its first head: a proxy
    /// sends its request right after connecting, and closing the connection under it would fail
    /// a request it can no longer send elsewhere.
    static let shutdownGrace = TimeAmount.seconds(2)

    init(timeout: TimeAmount, firstHead: EventLoopPromise<Bool>) {
        self.timeout = timeout
        self.firstHead = firstHead
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        if !headRead { firstHead.succeed(false) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !headRead else {
            context.fireChannelRead(data)
            return
        }
        headRead = true
        timer?.cancel()
        timer = nil
        firstHead.succeed(true)
        // The first read comes from the request decoder (after an upgrade, later reads are bytes).
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        // While the server stops, the request is served and the connection then closed.
        context.fireChannelRead(
            NIOAny(HTTPServerRequestPart.head(Self.plainUnlessWebSocket(head, closing: quiescing))))
    }

    /// NIO's upgrade handler loses the head of a request that asks for an upgrade it does not
    /// make (`Upgrade: h2c`, or a WebSocket without its key and version 13), and refuses an upgrade
    /// request with a body: either connection would close without an answer. Only a body-less GET
    /// asking for `websocket` alone, with one key and version 13, goes on as an upgrade (unless
    /// `closing`); any other request loses its `Upgrade` and is served as a plain request. It says
    /// `Connection: close` when `closing`, or when it said `Connection: upgrade`: the request
    /// decoder stops reading after a request it parsed as an upgrade.
    static func plainUnlessWebSocket(_ head: HTTPRequestHead, closing: Bool = false) -> HTTPRequestHead {
        let headers = head.headers
        let upgrades = headers[canonicalForm: "upgrade"]
        guard closing || !upgrades.isEmpty else { return head }
        let hasBody =
            headers.contains(name: "transfer-encoding")
            || headers[canonicalForm: "content-length"].contains { $0 != "0" }
        if !closing, head.method == .GET, !hasBody, upgrades.count == 1, upgrades[0].lowercased() == "websocket",
            headers["sec-websocket-key"].count == 1, headers["sec-websocket-version"] == ["13"]
        {
            return head
        }
        var plain = head
        plain.headers.remove(name: "upgrade")
        if closing || headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "upgrade" }) {
            plain.headers.replaceOrAdd(name: "connection", value: "close")
        }
        return plain
    }

    /// The server is shutting down: a connection that has asked nothing yet gets `shutdownGrace`
    /// to send its first head, which is then served and the connection closed (the HTTP channel's
    /// own handler, which does this later on, is not there before a head); otherwise it is closed.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !headRead, event is ChannelShouldQuiesceEvent {
            quiescing = true
            timer?.cancel()
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: Self.shutdownGrace) { channel.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// A head the decoder refused is answered 400 (as NIO's protocol error handler does on a
    /// plain HTTP/1 server), then the connection is closed.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard headRead else {
            headRead = true
            timer?.cancel()
            firstHead.succeed(false)
            let head = HTTPResponseHead(
                version: .http1_1, status: .badRequest, headers: ["Connection": "close", "Content-Length": "0"])
            let channel = context.channel
            context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        }
        context.fireErrorCaught(error)
    }
}
