import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlazaAPI
import ServiceLifecycle

/// `GET /stream`: the signed-in person's events as Server-Sent Events. With `Last-Event-ID`
/// (or `?lastEventId=` for a first connection that wants to resume), everything missed since
/// is replayed from the log, oldest first, before the stream goes live; each event exactly once.
struct StreamController: FeatureRoutes {
    let hub: EventHub
    let feed: EventFeed

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("stream", use: stream)
        return routes
    }

    @Sendable func stream(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let resumeFrom = try Self.lastEventID(request)
        // Subscribed before the replay is read, so nothing falls between the two.
        let subscription = try await hub.subscribe(person: me.userID, session: me.sessionID)
        context.base.connectionClosed.whenComplete { _ in subscription.close() }
        let bounds: (head: Int64, prunedThrough: Int64)
        do {
            bounds = try await feed.bounds()
        } catch {
            subscription.close()
            throw error
        }
        let feed = feed
        return Response(
            status: .ok, headers: .eventStream,
            body: ResponseBody { writer in
                // The body's own frame lives as long as the stream, so it only calls out: the
                // replay (large, and rare) and the live loop each run in a function of their own.
                defer { subscription.close() }
                var cursor = bounds.head
                if let last = resumeFrom, last >= bounds.prunedThrough, last <= bounds.head {
                    cursor = try await Self.replay(after: last, through: bounds.head, of: me.userID, feed, &writer)
                } else {
                    // A resume point that is gone (pruned, or not one this server sent) is a reset.
                    try await writer.write(Self.opening(at: cursor, reset: resumeFrom != nil))
                }
                try await Self.live(subscription, after: cursor, writer: &writer)
                try await writer.finish(nil)
            })
    }

    /// Writes what `recipient` missed after `last`, up to `head`, then `ready`; returns the cursor
    /// the live part goes on from. Out of line, so its frame is not part of every stream's.
    @inline(never)
    private static func replay(
        after last: Int64, through head: Int64, of recipient: Int64, _ feed: EventFeed,
        _ writer: inout any ResponseBodyWriter
    ) async throws -> Int64 {
        var cursor = last
        var replayed = 0
        try await writer.write(retry)
        while cursor < head {
            let page = try await StreamMemory.separately { [cursor] in
                try await feed.replayPage(after: cursor, through: head, recipient: recipient)
            }
            try await writer.write(page.bytes)
            replayed += page.count
            cursor = page.through
        }
        // Everything of the recipient's up to the head read above has been replayed.
        cursor = max(cursor, head)
        try await writer.write(ready(at: cursor, replayed: replayed))
        return cursor
    }

    /// How long a reader waits before reconnecting, the stream's first line.
    static let retry = ByteBuffer(string: "retry: 2000\n\n")

    /// `ready`, after the replay of `replayed` events.
    private static func ready(at cursor: Int64, replayed: Int) -> ByteBuffer {
        EventFeed.frame(id: cursor, event: .ready, json: #"{"replayed":\#(replayed)}"#.utf8)
    }

    /// A stream's opening when nothing is replayed: `retry`, a `reset` when the reader's resume
    /// point is gone, and `ready`, in one write.
    private static func opening(at cursor: Int64, reset: Bool) -> ByteBuffer {
        var buffer = retry
        if reset { buffer.writeImmutableBuffer(EventFeed.frame(id: cursor, event: .reset, json: "{}".utf8)) }
        buffer.writeImmutableBuffer(ready(at: cursor, replayed: 0))
        return buffer
    }

    /// The live part, for as long as the stream is open: what the hub delivers, after `cursor`.
    /// Kept out of line and small: its frame is what an open stream's task holds.
    @inline(never)
    private static func live(
        _ subscription: EventHub.Subscription, after cursor: Int64, writer: inout any ResponseBodyWriter
    ) async throws {
        var cursor = cursor
        // A stream never ends by itself, so it ends when the server begins to shut down.
        try await withGracefulShutdownHandler {
            for await delivery in subscription.deliveries {
                switch delivery {
                case .heartbeat:
                    try await writer.write(heartbeat)
                case .event(let event):
                    guard event.seq > cursor else { continue }
                    cursor = event.seq
                    try await writer.write(event.serverSentEvent)
                }
            }
        } onGracefulShutdown: {
            subscription.close()
        }
    }

    /// A comment line: proxies and clients see the stream alive.
    static let heartbeat = ByteBuffer(string: ":\n\n")

    static func lastEventID(_ request: Request) throws -> Int64? {
        guard
            let text = request.headers[HTTPField.Name("Last-Event-ID")!]
                ?? request.uri.queryParameters.get("lastEventId"), !text.isEmpty
        else { return nil }
        guard let value = Int64(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
            throw PlazaError(
                .badRequest, "invalid_last_event_id", "Last-Event-ID must be the id of an event this server sent.",
                field: "lastEventId")
        }
        return value
    }
}

extension HTTPFields {
    /// A Server-Sent Events response's: not stored, and not buffered by a proxy (nginx's
    /// `X-Accel-Buffering`), so each event reaches the reader when it is written.
    package static var eventStream: HTTPFields {
        var headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"]
        if let accelBuffering = HTTPField.Name("X-Accel-Buffering") { headers[accelBuffering] = "no" }
        return headers
    }
}
