import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import PlazaAPI

/// A Mastodon streaming WebSocket client for tests: subscribes to `streams`, then records every
/// message until the server closes the connection or `close()`.
final class MastodonSocketClient: Sendable {
    private let state = NIOLockedValueBox((messages: [JSONValue](), ended: false))
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    private init() {}

    /// Connects and returns once the server has taken the subscriptions: commands are taken in
    /// order, so once a later bad command is answered, the subscriptions before it hold.
    static func connect(port: Int, token: String, streams: [String]) async throws -> MastodonSocketClient {
        let client = MastodonSocketClient()
        let (subscribed, didSubscribe) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            _ = try? await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/api/v1/streaming?access_token=\(token)", logger: Logger(label: "ws")
            ) { inbound, outbound, _ in
                for stream in streams {
                    try await outbound.write(.text(#"{"type":"subscribe","stream":"\#(stream)"}"#))
                }
                try await outbound.write(.text(#"{"type":"subscribe","stream":"no-such-stream"}"#))
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message,
                        let json = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
                    else { continue }
                    if json["error"] != nil {
                        didSubscribe.yield()
                        continue
                    }
                    client.state.withLockedValue { $0.messages.append(json) }
                }
            }
            client.state.withLockedValue { $0.ended = true }
            didSubscribe.finish()
        }
        client.task.withLockedValue { $0 = task }
        for await _ in subscribed { break }
        return client
    }

    var messages: [JSONValue] { state.withLockedValue { $0.messages } }
    var ended: Bool { state.withLockedValue { $0.ended } }

    /// The ids of the statuses `stream` told as new or changed.
    func statuses(on stream: String) -> [String] {
        messages.compactMap { message in
            guard message["stream"] == .array([.string(stream)]),
                ["update", "status.update"].contains(message["event"]?.stringValue),
                let payload = message["payload"]?.stringValue,
                let status = try? JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8))
            else { return nil }
            return status["id"]?.stringValue
        }
    }

    /// Waits until `condition` holds, or the hang guard (counted in looks, as `EventStreamClient`).
    func waitUntil(_ condition: @Sendable (MastodonSocketClient) -> Bool) async {
        let looks = Int(EventStreamClient.hangGuard / .milliseconds(10))
        for _ in 0..<looks {
            if condition(self) { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func close() { task.withLockedValue { $0?.cancel() } }
}
