import Foundation
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

@Suite("Server-Sent Events parsing")
struct ServerSentEventsTests {
    @Test func framesSplitAnywhereParseTheSame() {
        let text =
            "retry: 2000\n\n: heartbeat\n\nid: 7\nevent: post.created\ndata: {\"a\":\ndata: 1}\n\r\nid: 8\r\nevent: ready\r\ndata: {}\r\n\r\n"
        let bytes = Array(text.utf8)
        let expected = [
            ServerSentEvents.Frame(event: "message", data: "", id: nil, retry: 2000),
            ServerSentEvents.Frame(event: "post.created", data: "{\"a\":\n1}", id: "7", retry: nil),
            ServerSentEvents.Frame(event: "ready", data: "{}", id: "8", retry: nil),
        ]
        for split in [1, 2, 3, 7, bytes.count] {
            var parser = ServerSentEvents()
            var frames: [ServerSentEvents.Frame] = []
            for start in stride(from: 0, to: bytes.count, by: split) {
                frames += parser.feed(Data(bytes[start..<min(start + split, bytes.count)]))
            }
            #expect(frames == expected, "chunks of \(split) bytes")
        }
    }

    @Test func unknownKindsAreSkippedAndKnownOnesDecoded() throws {
        let deleted = ServerSentEvents.Frame(event: "post.deleted", data: #"{"id":"42"}"#, id: "9", retry: nil)
        guard case .postDeleted(let id)? = PlazaClient.event(deleted) else {
            Issue.record("post.deleted")
            return
        }
        #expect(id == "42")
        #expect(PlazaClient.event(.init(event: "something.new", data: "{}", id: "10", retry: nil)) == nil)
        #expect(PlazaClient.event(.init(event: "post.created", data: "not json", id: "11", retry: nil)) == nil)
    }
}
