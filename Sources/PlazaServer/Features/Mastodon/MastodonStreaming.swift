import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import PlazaAPI
import SQLKit
import ServiceLifecycle

/// Mastodon's streaming API over Plaza's event hub: the Server-Sent Events endpoints
/// (`/api/v1/streaming/user`, `/user/notification`, `/public`) here, and the WebSocket
/// (`MastodonWebSocket`). Each hub frame (Plaza's own event) is read back and told again in
/// Mastodon's words: `update` (a new post in the home feed, or a public one), `status.update`,
/// `delete`, `notification`.
struct MastodonStreaming: Sendable {
    let hub: EventHub
    let mapper: MastodonMapper
    let db: Database

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
    }

    /// One event as Mastodon sends it: its name and payload (JSON text, or a status id for `delete`).
    struct Event: Sendable, Equatable {
        var event: String
        var payload: String
    }

    func register(v1: RouterGroup<PlazaContext>) {
        // WebSocket upgrades never get here (`MastodonWebSocket`): this is a plain GET.
        v1.get("streaming") { _, _ -> Response in
            throw PlazaError(.badRequest, "bad_request", "Connect with a WebSocket (Upgrade: websocket)")
        }
        v1.get("streaming/health") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "OK"))) }
        for (path, stream) in [
            ("streaming/user", Stream.user), ("streaming/user/notification", .userNotification),
            ("streaming/public", .public), ("streaming/public/local", .publicLocal),
            ("streaming/public/media", .publicMedia), ("streaming/public/local/media", .publicLocalMedia),
        ] {
            v1.get(RouterPath(path)) { request, context in try await serverSentEvents(stream, request, context) }
        }
    }

    /// Subscribes to the hub for `stream`: the person's own events, or everyone's posts. Every
    /// stream needs a person (as Mastodon's do since 4.2), so each has the hub's per-person cap.
    func subscribe(_ stream: Stream, identity: Identity?) async throws -> EventHub.Subscription {
        guard let identity else { throw MastodonError.signInRequired }
        guard identity.allows(stream == .userNotification ? "read:notifications" : "read:statuses") else {
            throw MastodonError.outsideScopes
        }
        if stream.needsUser { return try await hub.subscribe(user: identity.userID, session: identity.sessionID) }
        return try await hub.subscribe(user: EventHub.everyone, session: identity.sessionID, person: identity.userID)
    }

    /// What one reader of the public streams is not shown (the people they block, who block
    /// them, whom they mute, read when they connect), and the posts they were shown, whose
    /// deletion alone they hear of.
    final class Reader: Sendable {
        let hidden: Set<String>
        private let shown = NIOLockedValueBox(Set<String>())

        init(hidden: Set<String>) { self.hidden = hidden }

        func show(_ id: String) {
            shown.withLockedValue { shown in
                if shown.count > 10_000 { shown.removeAll() }
                shown.insert(id)
            }
        }

        func wasShown(_ id: String) -> Bool { shown.withLockedValue { $0.contains(id) } }
    }

    func reader(_ identity: Identity) async throws -> Reader {
        let me = identity.userID
        let rows = try await db.read { db in
            try await db.rows(
                """
                SELECT blocked_id AS id FROM blocks WHERE blocker_id = \(bind: me)
                UNION SELECT blocker_id AS id FROM blocks WHERE blocked_id = \(bind: me)
                UNION SELECT muted_id AS id FROM mutes WHERE muter_id = \(bind: me)
                """)
        }
        return Reader(hidden: Set(try rows.map { String(try $0.decode(column: "id", as: Int64.self)) }))
    }

    /// `stream`'s Mastodon events for one hub frame (none for heartbeats and for what the
    /// stream does not carry). The public streams carry public posts whose media are ready, by
    /// people the reader has no block or mute with, and the deletions of those.
    func events(_ frame: EventHub.Frame, for stream: Stream, reader: Reader) -> [Event] {
        guard frame.seq != nil, let (kind, json) = Self.parse(frame.bytes) else { return [] }
        let decoder = JSONDecoder()
        switch kind {
        case .postCreated, .postUpdated:
            guard stream != .userNotification, let post = try? decoder.decode(Post.self, from: Data(json)) else {
                return []
            }
            if stream.isPublic {
                guard post.audience == .public, post.media.allSatisfy({ $0.state == .ready }),
                    !reader.hidden.contains(post.author.id), !stream.mediaOnly || !post.media.isEmpty
                else { return [] }
                reader.show(post.id)
            }
            guard let payload = try? MastodonJSON.encoder.encode(mapper.status(post)) else { return [] }
            return [
                Event(
                    event: kind == .postCreated ? "update" : "status.update",
                    payload: String(decoding: payload, as: UTF8.self))
            ]
        case .postDeleted:
            guard stream != .userNotification, let deleted = try? decoder.decode(DeletedPost.self, from: Data(json)),
                stream.needsUser || reader.wasShown(deleted.id)
            else { return [] }
            return [Event(event: "delete", payload: deleted.id)]
        case .notification:
            guard stream.needsUser, let note = try? decoder.decode(PlazaAPI.Notification.self, from: Data(json)),
                let entity = MastodonController.notificationEntity(note, mapper: mapper),
                let payload = try? MastodonJSON.encoder.encode(entity)
            else { return [] }
            return [Event(event: "notification", payload: String(decoding: payload, as: UTF8.self))]
        default:
            return []
        }
    }

    /// The event kind and JSON of one of the hub's frames (`id:`, `event:` and `data:` lines).
    static func parse(_ frame: ByteBuffer) -> (StreamEventKind, [UInt8])? {
        var kind: StreamEventKind?
        var data: [UInt8]?
        for line in frame.readableBytesView.split(separator: UInt8(ascii: "\n")) {
            if line.starts(with: "event: ".utf8) {
                kind = StreamEventKind(rawValue: String(decoding: line.dropFirst(7), as: UTF8.self))
            } else if line.starts(with: "data: ".utf8) {
                data = Array(line.dropFirst(6))
            }
        }
        guard let kind, let data else { return nil }
        return (kind, data)
    }

    /// Server-Sent Events: `event:` and `data:` lines, a comment every heartbeat.
    func serverSentEvents(_ stream: Stream, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let subscription = try await subscribe(stream, identity: context.identity)
        let reader = try await reader(try context.mastodonUser("read:statuses"))
        context.connectionClosed.whenComplete { _ in subscription.close() }
        var headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"]
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { subscription.close() }
                try await writer.write(ByteBuffer(string: ":)\n\n"))
                try await withGracefulShutdownHandler {
                    for await frame in subscription.frames {
                        if frame.seq == nil {
                            try await writer.write(ByteBuffer(string: ":thump\n\n"))
                            continue
                        }
                        for event in events(frame, for: stream, reader: reader) {
                            // A payload is one line: JSON without line breaks, or an id.
                            try await writer.write(
                                ByteBuffer(string: "event: \(event.event)\ndata: \(event.payload)\n\n"))
                        }
                    }
                } onGracefulShutdown: {
                    subscription.close()
                }
                try await writer.finish(nil)
            })
    }
}
