import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import PlazaAPI
import PlazaServer
import ServiceLifecycle

/// Mastodon's streaming API over Plaza's event hub: the Server-Sent Events endpoints
/// (`/api/v1/streaming/user`, `/user/notification`, `/public`) here, and the WebSocket
/// (`MastodonWebSocket`). The hub decides what each reader may see and hands over typed events;
/// this only tells them in Mastodon's words, `update` (a new post in the home feed, or a public
/// one), `status.update`, `delete` and `notification`, encoded once per event.
struct MastodonStreaming: Sendable, FeatureRoutes {
    let hub: EventHub
    let mapper: MastodonMapper
    /// Signs the media URLs of followers-only and space posts for each reader.
    let capabilities: MediaCapabilities

    /// Mastodon's stream names, as clients subscribe to them.
    enum Stream: String, Sendable, CaseIterable {
        case user
        case userNotification = "user:notification"
        case `public`
        case publicLocal = "public:local"
        case publicMedia = "public:media"
        case publicLocalMedia = "public:local:media"

        var needsUser: Bool { self == .user || self == .userNotification }
        var isPublic: Bool { !needsUser }
        var mediaOnly: Bool { self == .publicMedia || self == .publicLocalMedia }
        /// The hub's channel the stream reads: the person's own events, or everyone's public posts.
        var channel: EventHub.Channel { needsUser ? .own : .everyone }
    }

    /// One event as Mastodon sends it: its name and payload (JSON text, or a status id for `delete`).
    struct Event: Sendable, Equatable {
        var event: String
        var payload: String
    }

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        // WebSocket upgrades never get here (`MastodonWebSocket`): this is a plain GET.
        routes.get("streaming") { _, _ -> Response in
            throw PlazaError(.badRequest, "bad_request", "Connect with a WebSocket (Upgrade: websocket)")
        }
        routes.get("streaming/health") { _, _ in
            Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "OK")))
        }
        for (path, stream) in [
            ("streaming/user", Stream.user), ("streaming/user/notification", .userNotification),
            ("streaming/public", .public), ("streaming/public/local", .publicLocal),
            ("streaming/public/media", .publicMedia), ("streaming/public/local/media", .publicLocalMedia),
        ] {
            routes.get(RouterPath(path)) { request, context in try await serverSentEvents(stream, request, context) }
        }
        return routes
    }

    /// Subscribes the person to the hub's channel for `stream`. Every stream needs a person (as
    /// Mastodon's do since 4.2), so each has the hub's per-person cap.
    func subscribe(_ stream: Stream, identity: Identity?) async throws -> EventHub.Subscription {
        guard let identity else { throw MastodonError.signInRequired }
        guard identity.allows(stream == .userNotification ? "read:notifications" : "read:statuses") else {
            throw MastodonError.outsideScopes
        }
        return try await hub.subscribe(person: identity.userID, session: identity.sessionID, channel: stream.channel)
    }

    /// The public posts one connection was shown, whose deletion alone it hears of on a public stream.
    final class Shown: Sendable {
        private let ids = NIOLockedValueBox(Set<String>())

        func insert(_ id: String) {
            ids.withLockedValue { ids in
                if ids.count > 10_000 { ids.removeAll() }
                ids.insert(id)
            }
        }

        func contains(_ id: String) -> Bool { ids.withLockedValue { $0.contains(id) } }
    }

    /// The event in Mastodon's words, whichever stream carries it; encoded once per event, with
    /// the plain media URLs (`translated(_:for:)` makes a reader's copy where those do not do).
    func translated(_ event: StreamEvent) -> Event? {
        event.encoded("mastodon") { event in MastodonMapper.$mediaSigner.withValue(nil) { translate(event) } }
    }

    /// The event translated for `reader`, with their capability URLs, when it shows media that
    /// are not public (a followers-only or space post): those URLs are the reader's own. Nil for
    /// every other event, whose shared translation serves every reader.
    ///
    /// Every open stream's loop calls it for every event, so it is kept out of line and small:
    /// the post is looked at in `showsOwnMedia`, and the signer's reads and the translation run
    /// in a task of their own (together they took 10 KB of frame, which the stream's task would
    /// keep for as long as it is open).
    @inline(never)
    func translated(_ event: StreamEvent, for reader: Int64) async -> Event? {
        guard Self.showsOwnMedia(event) else { return nil }
        return try? await StreamMemory.separately { [self] in
            guard let signer = try? await capabilities.signer(for: reader) else { return nil }
            return MastodonMapper.$mediaSigner.withValue(signer) { translate(event) }
        }
    }

    /// Whether the event shows a post with media that are not public.
    @inline(never)
    private static func showsOwnMedia(_ event: StreamEvent) -> Bool {
        let shown: Post? =
            switch event.payload {
            case .post(let post): post
            case .notification(let note): note.post
            default: nil
            }
        guard let shown else { return false }
        return shown.audience != .public && !shown.media.isEmpty
    }

    /// Not inlined: called from a stream's loop, its locals would otherwise be part of the
    /// frame every open stream's task keeps.
    @inline(never)
    private func translate(_ event: StreamEvent) -> Event? {
        switch event.payload {
        case .post(let post):
            let status = MastodonController.withoutMentions(mapper.status(post))
            guard let payload = try? MastodonJSON.encoder.encode(status) else { return nil }
            return Event(
                event: event.kind == .postCreated ? "update" : "status.update",
                payload: String(decoding: payload, as: UTF8.self))
        case .deletedPost(let deleted):
            return Event(event: "delete", payload: deleted.id)
        case .notification(let note):
            guard var entity = MastodonController.notificationEntity(note, mapper: mapper) else { return nil }
            entity.status = entity.status.map(MastodonController.withoutMentions)
            guard let payload = try? MastodonJSON.encoder.encode(entity) else { return nil }
            return Event(event: "notification", payload: String(decoding: payload, as: UTF8.self))
        case .comment, .like:
            return nil
        }
    }

    /// What `stream` says of one event the hub delivered to its channel, if anything: the user
    /// stream its posts, deletions and notifications, `user:notification` only notifications, the
    /// public streams the posts (with media, for the media ones) and the deletions of those shown.
    func event(_ event: StreamEvent, for stream: Stream, shown: Shown) -> Event? {
        guard let translated = translated(event) else { return nil }
        switch event.payload {
        case .post(let post):
            guard stream != .userNotification else { return nil }
            if stream.isPublic {
                // As Mastodon: a status whose media failed to process is not streamed publicly.
                guard post.media.allSatisfy({ $0.state == .ready }), !stream.mediaOnly || !post.media.isEmpty else {
                    return nil
                }
                shown.insert(post.id)
            }
        case .deletedPost(let deleted):
            guard stream != .userNotification, stream.needsUser || shown.contains(deleted.id) else { return nil }
        case .notification:
            guard stream.needsUser else { return nil }
        case .comment, .like:
            return nil
        }
        return translated
    }

    /// An event as Server-Sent Events send it (a payload is one line: JSON without line breaks, or an id).
    func serverSentEvent(_ event: StreamEvent) -> ByteBuffer? {
        event.encoded("mastodon.sse") { event in translated(event).map(Self.serverSentEvent) }
    }

    static func serverSentEvent(_ told: Event) -> ByteBuffer {
        ByteBuffer(string: "event: \(told.event)\ndata: \(told.payload)\n\n")
    }

    /// Server-Sent Events: `event:` and `data:` lines, a comment every heartbeat.
    func serverSentEvents(_ stream: Stream, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let subscription = try await subscribe(stream, identity: context.identity)
        let reader = context.identity?.userID ?? 0
        let shown = Shown()
        context.connectionClosed.whenComplete { _ in subscription.close() }
        return Response(
            status: .ok, headers: .eventStream,
            body: ResponseBody { [self] writer in
                // The body's own frame lives as long as the stream, so the loop runs out of line.
                defer { subscription.close() }
                try await writer.write(ByteBuffer(string: ":)\n\n"))
                try await live(stream, subscription, reader: reader, shown: shown, writer: &writer)
                try await writer.finish(nil)
            })
    }

    /// What the hub delivers, as `stream` tells it, for as long as the stream is open.
    @inline(never)
    private func live(
        _ stream: Stream, _ subscription: EventHub.Subscription, reader: Int64, shown: Shown,
        writer: inout any ResponseBodyWriter
    ) async throws {
        // A stream never ends by itself, so it ends when the server begins to shut down.
        try await withGracefulShutdownHandler {
            for await delivery in subscription.deliveries {
                switch delivery {
                case .heartbeat:
                    try await writer.write(Self.heartbeat)
                case .event(let event):
                    guard shows(event, on: stream, shown: shown) else { continue }
                    let own = await translated(event, for: reader)
                    guard let bytes = serverSentEvent(event, own: own) else { continue }
                    try await writer.write(bytes)
                }
            }
        } onGracefulShutdown: {
            subscription.close()
        }
    }

    static let heartbeat = ByteBuffer(string: ":thump\n\n")

    // The loops of open streams call these two for every event. Not inlined: their locals would
    // otherwise be part of the loop's frame, which every open stream's task keeps (10 KB each).

    /// Whether `stream` tells of the event (`event(_:for:shown:)`).
    @inline(never)
    func shows(_ event: StreamEvent, on stream: Stream, shown: Shown) -> Bool {
        self.event(event, for: stream, shown: shown) != nil
    }

    /// The event's Server-Sent Event: the reader's `own` translation, or the shared one.
    @inline(never)
    private func serverSentEvent(_ event: StreamEvent, own: Event?) -> ByteBuffer? {
        own.map(Self.serverSentEvent) ?? serverSentEvent(event)
    }
}
