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
        let feed = feed
        return Response(
            status: .ok, headers: .eventStream,
            body: ResponseBody { writer in
                defer { subscription.close() }
                var buffer = ByteBuffer(string: "retry: 2000\n\n")
                let (head, prunedThrough) = try await feed.bounds()
                var cursor = head
                var replayed = 0
                if let last = resumeFrom {
                    if last < prunedThrough || last > head {
                        buffer.writeImmutableBuffer(EventFeed.frame(id: head, event: .reset, json: "{}".utf8))
                    } else {
                        cursor = last
                        while cursor < head {
                            let (entries, through) = try await feed.entries(
                                after: cursor, through: head, recipient: me.userID)
                            for (_, event) in try await feed.events(entries) {
                                buffer.writeImmutableBuffer(event.serverSentEvent)
                                replayed += 1
                            }
                            try await writer.write(buffer)
                            buffer.clear()
                            cursor = through
                        }
                        // Everything of mine up to the head read above has been replayed.
                        cursor = max(cursor, head)
                    }
                }
                buffer.writeImmutableBuffer(
                    EventFeed.frame(id: cursor, event: .ready, json: #"{"replayed":\#(replayed)}"#.utf8))
                try await writer.write(buffer)
                // A stream never ends by itself, so it ends when the server begins to shut down.
                try await withGracefulShutdownHandler {
                    for await delivery in subscription.deliveries {
                        switch delivery {
                        case .heartbeat:
                            try await writer.write(Self.heartbeat)
                        case .event(let event):
                            guard event.seq > cursor else { continue }
                            cursor = event.seq
                            try await writer.write(event.serverSentEvent)
                        }
                    }
                } onGracefulShutdown: {
                    subscription.close()
                }
                try await writer.finish(nil)
            })
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
