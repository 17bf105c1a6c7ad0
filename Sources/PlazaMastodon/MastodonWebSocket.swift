import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PlazaServer

/// Mastodon's streaming WebSocket, `/api/v1/streaming`, on the HTTP port. The token comes as
/// `Authorization: Bearer`, `?access_token=`, or the whole `Sec-WebSocket-Protocol` (which is
/// echoed, as browsers and Ice Cubes require). A client subscribes with `?stream=` and with
/// `{"type": "subscribe", "stream": "user"}` messages (`unsubscribe` likewise); each event is a
/// text message `{"stream": ["user"], "event": "update", "payload": "<JSON as a string>"}`.
/// A refused upgrade (no or a bad token) is answered 400 by hummingbird-websocket.
struct MastodonWebSocket: Sendable {
    let streaming: MastodonStreaming
    let accounts: AccountStore
    static let path = "/api/v1/streaming"
    /// A client's message is a small JSON command.
    static let maxMessage = 4096

    typealias Handler = WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>

    /// The upgrade of a request for the streaming path with a person's valid token, else none.
    func shouldUpgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<Handler> {
        let uri = URI(request.path ?? "")
        guard uri.path == Self.path || uri.path == Self.path + "/" else { return .dontUpgrade }
        let protocolToken = request.headerFields[.secWebSocketProtocol]
        guard
            let identity = try? await Self.identity(
                request, uri: uri, protocolToken: protocolToken, accounts: accounts),
            identity.allows("read:statuses") || identity.allows("read:notifications")
        else { return .dontUpgrade }
        var headers: HTTPFields = [:]
        if let protocolToken { headers[.secWebSocketProtocol] = protocolToken }
        let initial = uri.queryParameters.get("stream").flatMap(MastodonStreaming.Stream.init(rawValue:))
        let streaming = streaming
        return .upgrade(headers) { inbound, outbound, context in
            try await Self.run(
                streaming: streaming, identity: identity, initial: initial, inbound: inbound, outbound: outbound,
                logger: context.logger)
        }
    }

    /// The person behind the first token found: the Authorization header, `access_token`, the subprotocol.
    static func identity(_ request: HTTPRequest, uri: URI, protocolToken: String?, accounts: AccountStore)
        async throws -> Identity?
    {
        let token: String
        if let header = request.headerFields[.authorization] {
            token = try AuthMiddleware.bearerToken(header)
        } else if let query = uri.queryParameters.get("access_token") ?? protocolToken {
            token = try AuthMiddleware.bearerToken("Bearer " + query)
        } else {
            return nil
        }
        return try await accounts.identity(token: token)
    }

    /// What a client asks for.
    enum Command: Sendable {
        case subscribe(MastodonStreaming.Stream)
        case unsubscribe(MastodonStreaming.Stream)
        case refuse(String)
    }

    /// Reads one client message. Hashtag and list streams are refused (Plaza has neither).
    static func command(_ text: String) -> Command {
        struct Message: Decodable {
            var type: String
            var stream: String?
        }
        guard let message = try? JSONDecoder().decode(Message.self, from: Data(text.utf8)) else {
            return .refuse("Could not parse the message")
        }
        guard let name = message.stream, let stream = MastodonStreaming.Stream(rawValue: name) else {
            return .refuse("Unknown stream type")
        }
        switch message.type {
        case "subscribe": return .subscribe(stream)
        case "unsubscribe": return .unsubscribe(stream)
        default: return .refuse("Unknown message type")
        }
    }

    /// One connection: the client's commands, and up to two hub subscriptions (the person's own
    /// events, and everyone's posts once a public stream is asked for), until either side ends.
    static func run(
        streaming: MastodonStreaming, identity: Identity, initial: MastodonStreaming.Stream?,
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger
    ) async throws {
        let subscribed = NIOLockedValueBox(Set<MastodonStreaming.Stream>())
        let shown = MastodonStreaming.Shown()
        // A client that floods commands without reading the answers loses the oldest ones.
        let (commands, commandSink) = AsyncStream.makeStream(of: Command.self, bufferingPolicy: .bufferingNewest(32))
        if let initial { commandSink.yield(.subscribe(initial)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { commandSink.finish() }
                for try await message in inbound.messages(maxSize: maxMessage) {
                    guard case .text(let text) = message else { continue }
                    commandSink.yield(command(text))
                }
            }
            var open: [EventHub.Channel: EventHub.Subscription] = [:]
            defer { for subscription in open.values { subscription.close() } }
            for await command in commands {
                switch command {
                case .refuse(let reason):
                    try await outbound.write(.text(error(reason, status: 400)))
                case .unsubscribe(let stream):
                    subscribed.withLockedValue { _ = $0.remove(stream) }
                case .subscribe(let stream):
                    guard stream.isPublic || identity.allows(stream == .user ? "read:statuses" : "read:notifications")
                    else {
                        try await outbound.write(
                            .text(error("Access token does not have the required scopes", status: 401)))
                        continue
                    }
                    subscribed.withLockedValue { _ = $0.insert(stream) }
                    guard open[stream.channel] == nil else { continue }
                    let subscription: EventHub.Subscription
                    do {
                        subscription = try await streaming.subscribe(stream, identity: identity)
                    } catch let error as PlazaError {
                        try await outbound.write(.text(Self.error(error.message, status: error.status.code)))
                        continue
                    }
                    open[stream.channel] = subscription
                    let channel = stream.channel
                    group.addTask {
                        try await forward(
                            subscription, of: channel, to: outbound, subscribed: subscribed, shown: shown,
                            streaming: streaming, reader: identity.userID)
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// Writes what the hub delivers on `channel` to the connection, as each stream subscribed on
    /// it tells it, until the hub ends the subscription (the session was revoked, the reader fell
    /// behind, the server is shutting down), which closes the connection: the client reconnects.
    @inline(never)
    static func forward(
        _ subscription: EventHub.Subscription, of channel: EventHub.Channel, to outbound: WebSocketOutboundWriter,
        subscribed: NIOLockedValueBox<Set<MastodonStreaming.Stream>>, shown: MastodonStreaming.Shown,
        streaming: MastodonStreaming, reader: Int64
    ) async throws {
        for await delivery in subscription.deliveries {
            guard case .event(let event) = delivery else { continue }
            // A followers-only or space post's media: this reader's own URLs, so not the shared encoding.
            let own = await streaming.translated(event, for: reader)
            let texts = messages(
                event, own: own, on: channel, subscribed: subscribed, shown: shown, streaming: streaming)
            for text in texts { try await outbound.write(.text(text)) }
        }
        if !Task.isCancelled { try? await outbound.close(.goingAway, reason: nil) }
    }

    /// What each stream subscribed on `channel` says of the event, in the order of their names.
    /// Not inlined: the loop of every open connection calls it, and its locals would otherwise be
    /// part of the loop's frame, which the connection's task keeps (10 KB each).
    @inline(never)
    static func messages(
        _ event: StreamEvent, own: MastodonStreaming.Event?, on channel: EventHub.Channel,
        subscribed: NIOLockedValueBox<Set<MastodonStreaming.Stream>>, shown: MastodonStreaming.Shown,
        streaming: MastodonStreaming
    ) -> [String] {
        let streams = subscribed.withLockedValue { $0 }.filter { $0.channel == channel }
        return streams.sorted(by: { $0.rawValue < $1.rawValue }).compactMap { stream in
            guard streaming.shows(event, on: stream, shown: shown) else { return nil }
            return own.flatMap({ message($0, stream: stream) }) ?? message(event, stream: stream, streaming: streaming)
        }
    }

    /// A refusal as Mastodon's WebSocket sends it.
    static func error(_ message: String, status: Int) -> String {
        struct Message: Encodable {
            var error: String
            var status: Int
        }
        let bytes = (try? JSONEncoder().encode(Message(error: message, status: status))) ?? Data()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An event as Mastodon's WebSocket sends it on `stream` (the payload is a JSON string),
    /// encoded once per event and stream.
    static func message(_ event: StreamEvent, stream: MastodonStreaming.Stream, streaming: MastodonStreaming)
        -> String?
    {
        event.encoded("mastodon.websocket." + stream.rawValue) { event in
            streaming.translated(event).flatMap { message($0, stream: stream) }
        }
    }

    /// A translated event as the WebSocket sends it on `stream`.
    static func message(_ told: MastodonStreaming.Event, stream: MastodonStreaming.Stream) -> String? {
        struct Message: Encodable {
            var stream: [String]
            var event: String
            var payload: String
        }
        guard
            let bytes = try? JSONEncoder().encode(
                Message(stream: [stream.rawValue], event: told.event, payload: told.payload))
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
