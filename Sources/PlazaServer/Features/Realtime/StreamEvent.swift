import NIOConcurrencyHelpers
import NIOCore
import PlazaAPI

/// One event of the log as every stream delivers it: its kind and the API's own value for it.
/// The hub makes one per event and hands the same instance to every reader it is delivered to;
/// each wire format (Plaza's Server-Sent Events, Mastodon's) is encoded from it the first time a
/// stream asks and kept, so an event read by a thousand streams is encoded once per format.
package final class StreamEvent: Sendable {
    package enum Payload: Sendable {
        /// `post.created`, `post.updated`: the post as it is now, without a reader's relation.
        case post(Post)
        case deletedPost(DeletedPost)
        case comment(Comment)
        case like(LikeChange)
        /// Addressed to one person (a notification event has one recipient).
        case notification(PlazaAPI.Notification)
    }

    let seq: Int64
    package let kind: StreamEventKind
    package let payload: Payload
    private let encodings = NIOLockedValueBox<[String: any Sendable]>([:])

    init(seq: Int64, kind: StreamEventKind, payload: Payload) {
        self.seq = seq
        self.kind = kind
        self.payload = payload
    }

    /// The event in the format named `format`, encoded by `encode` on first use and kept. A
    /// format that has nothing to say for this event encodes to nil (also kept).
    package func encoded<Output: Sendable>(_ format: String, _ encode: (StreamEvent) -> Output?) -> Output? {
        if let known = encodings.withLockedValue({ $0[format] }) { return (known as? Kept<Output>)?.value }
        let made = Kept(value: encode(self))
        // Two streams asking at once may both encode; the first one kept wins, so all send the same bytes.
        return encodings.withLockedValue { encodings in
            if let known = encodings[format] { return (known as? Kept<Output>)?.value }
            encodings[format] = made
            return made.value
        }
    }

    private struct Kept<Value: Sendable>: Sendable {
        let value: Value?
    }

    /// Plaza's own wire format (`GET /stream`): `id:`, `event:` and one `data:` line.
    var serverSentEvent: ByteBuffer {
        encoded("plaza.sse") { event in
            EventFeed.frame(id: event.seq, event: event.kind, json: event.json)
        } ?? ByteBuffer()
    }

    /// The payload as the API's JSON (no line breaks).
    private var json: [UInt8] {
        switch payload {
        case .post(let post): JSONWriter.encode(post, capacity: 2048)
        case .deletedPost(let deleted): Array(#"{"id":"\#(deleted.id)"}"#.utf8)
        case .comment(let comment): Self.encode(comment)
        case .like(let change): Self.encode(change)
        case .notification(let note): Self.encode(note)
        }
    }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        (try? JSON.encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
    }
}
