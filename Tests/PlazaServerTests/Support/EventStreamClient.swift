import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// One Server-Sent Event as a client sees it.
struct ReceivedEvent: Sendable, Equatable {
    var id: String?
    var event: String
    var data: String

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(data.utf8)) }
}

/// A test client for `GET /api/v1/stream`: reads the stream in the background and parses its
/// events; tests wait for them with a deadline.
final class EventStreamClient: Sendable {
    let status: Int
    private let state = NIOLockedValueBox((events: [ReceivedEvent](), ended: false, comments: 0))
    private let reader: NIOLockedValueBox<Task<Void, Never>?> = .init(nil)

    private init(status: Int) { self.status = status }

    static func connect(port: Int, token: String?, lastEventID: String? = nil, path: String = "/api/v1/stream")
        async throws -> EventStreamClient
    {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let client = EventStreamClient(status: Int(response.status.code))
        let task = Task {
            var pending = ""
            do {
                for try await chunk in response.body {
                    pending += String(buffer: chunk)
                    while let end = pending.range(of: "\n\n") {
                        client.parse(String(pending[..<end.lowerBound]))
                        pending.removeSubrange(..<end.upperBound)
                    }
                }
            } catch {}
            client.state.withLockedValue { $0.ended = true }
        }
        client.reader.withLockedValue { $0 = task }
        return client
    }

    private func parse(_ block: String) {
        var id: String?
        var event = "message"
        var data: [String] = []
        var comment = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                comment = true
                continue
            }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1].drop(while: { $0 == " " })) : ""
            switch parts[0] {
            case "id": id = value
            case "event": event = value
            case "data": data.append(value)
            default: break
            }
        }
        state.withLockedValue { state in
            if data.isEmpty {
                if comment { state.comments += 1 }
            } else {
                state.events.append(ReceivedEvent(id: id, event: event, data: data.joined(separator: "\n")))
            }
        }
    }

    var events: [ReceivedEvent] { state.withLockedValue { $0.events } }
    var ended: Bool { state.withLockedValue { $0.ended } }
    var heartbeats: Int { state.withLockedValue { $0.comments } }

    /// How long a wait lasts at most. It only guards against a hang: every wait ends as soon as
    /// what it waits for has arrived, and none expects it not to (tests that check nothing more
    /// arrives wait for a later sentinel event). 5 s was too short for a loaded PostgreSQL suite.
    static let hangGuard: Duration = .seconds(60)

    /// Waits until `count` events (of any kind) have arrived, or the hang guard; returns them all.
    @discardableResult
    func waitFor(_ count: Int, within deadline: Duration = hangGuard) async -> [ReceivedEvent] {
        await waitUntil(deadline) { $0.events.count >= count }
        return events
    }

    /// Waits until an event that `matches` has arrived; returns whether one has.
    @discardableResult
    func waitForEvent(within deadline: Duration = hangGuard, _ matches: @escaping @Sendable (ReceivedEvent) -> Bool)
        async -> Bool
    {
        await waitUntil(deadline) { $0.events.contains(where: matches) }
        return events.contains(where: matches)
    }

    /// Waits until a heartbeat comment has arrived.
    func waitForHeartbeat(within deadline: Duration = hangGuard) async -> Bool {
        await waitUntil(deadline) { $0.comments >= 1 }
        return heartbeats >= 1
    }

    /// Waits until the server ends the stream.
    func waitForEnd(within deadline: Duration = hangGuard) async -> Bool {
        await waitUntil(deadline) { $0.ended }
        return ended
    }

    private func waitUntil(
        _ deadline: Duration,
        _ condition: @escaping @Sendable ((events: [ReceivedEvent], ended: Bool, comments: Int)) -> Bool
    ) async {
        // Counted in looks, not time: a starved test process still looks as often.
        let looks = Int(deadline / .milliseconds(10))
        for _ in 0..<looks {
            if state.withLockedValue({ condition($0) }) { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func close() {
        reader.withLockedValue { $0?.cancel() }
    }
}
