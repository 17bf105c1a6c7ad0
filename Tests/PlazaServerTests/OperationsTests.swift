import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// What an operator watches: `GET /metrics`, request ids, JSON logs.
@Suite("Operations: metrics, request ids, JSON logs")
struct OperationsTests {
    /// The samples of one metric family: each line's labels and value.
    static func samples(_ text: String, _ name: String) -> [(labels: String, value: Double)] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(name + "{") || line.hasPrefix(name + " ") else { return nil }
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { return nil }
            let labels = line.hasPrefix(name + "{") ? String(parts[0].dropFirst(name.count)) : ""
            return (labels, value)
        }
    }

    static func value(_ text: String, _ name: String, _ labels: String = "") -> Double? {
        samples(text, name).first { $0.labels == labels }?.value
    }

    /// Served on the public port here (the operator's choice when the metrics port is the
    /// public one); by default it is not served there at all.
    @Test func metricsCountRequestsByRouteAndTheServersLevels() async throws {
        try await withApp({ $0.metrics.port = $0.port }) { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "Counted")
            for _ in 0..<2 { #expect(try await api.get("/posts/\(post.id)", as: ana).status == .ok) }
            #expect(try await api.get("/posts/1", as: ana).status == .notFound)
            #expect(try await api.get("/no/such/route").status == .notFound)
            _ = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)

            let response = try await api.fetch("/metrics")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = response.text
            // By route pattern, never the raw path.
            let posts = Self.samples(text, "plaza_http_requests_total").filter { $0.labels.contains("/posts/") }
            let ok = posts.filter { $0.labels.contains(#"status="200""#) && $0.labels.contains(#"method="GET""#) }
            #expect(ok.count == 1 && ok.first?.value == 2, "\(posts)")
            #expect(ok.first?.labels.contains("{id}") == true || ok.first?.labels.contains(":id") == true)
            #expect(posts.contains { $0.labels.contains(#"status="404""#) && $0.value == 1 })
            #expect(!text.contains(post.id), "a raw id in a label")
            #expect(
                Self.samples(text, "plaza_http_requests_total").contains {
                    $0.labels.contains(#"route="NotFound""#) && $0.labels.contains(#"status="404""#)
                })
            #expect(
                Self.samples(text, "plaza_http_request_duration_seconds_count").contains {
                    $0.labels.contains("/posts/") && $0.value == 3
                })
            // Every request that reached the database waited for a connection, and the levels are read.
            #expect((Self.value(text, "plaza_db_wait_seconds_count", #"{path="write"}"#) ?? 0) > 0)
            #expect((Self.value(text, "plaza_db_wait_seconds_count", #"{path="read"}"#) ?? 0) > 0)
            // Levels are read at the moment of the scrape; the app's own background services
            // (maintenance, outboxes, previews) may be writing then, so only their presence is fixed.
            #expect(Self.value(text, "plaza_db_calls_holding", #"{path="write"}"#) != nil)
            #expect(Self.value(text, "plaza_streams_open") == 0)
            #expect(Self.value(text, "plaza_event_hub_lag_events") != nil)
            #expect(Self.value(text, "plaza_outbox_pending", #"{outbox="mail"}"#) == 0)
            #expect(Self.value(text, "plaza_outbox_pending", #"{outbox="push"}"#) == 0)
            #expect(Self.value(text, "plaza_media_processing_seconds_count", #"{kind="image"}"#) == 1)
            if api.config.databaseURL == nil {
                #expect((Self.value(text, "plaza_sqlite_commit_batch_size_count") ?? 0) > 0)
                #expect(Self.value(text, "plaza_sqlite_write_queue") != nil)
            }
        }
    }

    @Test func metricsAreNotOnThePublicPortByDefault() async throws {
        try await withApp { api async throws in
            #expect(try await api.fetch("/metrics").status == .notFound)
        }
    }

    /// A failed delivery attempt counts, whether it is retried or given up.
    @Test func failedDeliveriesCount() async throws {
        try await withDatabase { db, _ async throws in
            let metrics = PlazaMetrics()
            let outbox = MailOutbox(db: Database(driver: db.driver, metrics: metrics), ids: IDGenerator(node: 1))
            let message = MailMessage(kind: .passwordReset, to: "ana@example.com", subject: "s", text: "t", html: "h")
            try await db.write { conn in try await outbox.enqueue(message, now: 0, on: conn) }
            #expect(try await outbox.pendingCount(cap: 10) == 1)
            let job = try #require(try await outbox.claimDue(now: 1, limit: 1, leaseMillis: 1000).first)
            try await outbox.markFailed(job, error: "421 busy", permanent: false, now: 2)
            try await outbox.markFailed(job, error: "550 no such user", permanent: true, now: 3)
            #expect(try await outbox.pendingCount(cap: 10) == 0)
            let text = String(decoding: metrics.text(), as: UTF8.self)
            #expect(Self.value(text, "plaza_outbox_failures_total", #"{outbox="mail"}"#) == 2)
            #expect(Self.value(text, "plaza_outbox_failures_total", #"{outbox="push"}"#) == nil)
        }
    }

    @Test func everyAnswerHasARequestIDAndOnlyATrustedProxyNamesIt() async throws {
        let header = HTTPField.Name("X-Request-Id")!
        try await withLiveApp({
            $0.http.trustedProxies = (try? TrustedProxies.parse("127.0.0.1", header: "x-forwarded-for")) ?? .none
        }) { api, _ async throws in
            let own = try await api.get("/feed/global")
            let id = try #require(own.headers[header])
            #expect(id.count == 16 && id.allSatisfy(\.isHexDigit))
            #expect(try await api.get("/feed/global").headers[header] != id, "each request its own")
            // From the trusted proxy: its id is kept if it is a plain token.
            let kept = try await api.call(.get, "/feed/global", headers: [header: "nginx-7f3a.b/c:d+e=f"])
            #expect(kept.headers[header] == "nginx-7f3a.b/c:d+e=f")
            for bad in ["two words", String(repeating: "a", count: 129), "semi;colon", "quo\"te"] {
                let replaced = try await api.call(.get, "/feed/global", headers: [header: bad])
                #expect(replaced.headers[header]?.count == 16, "\(bad)")
            }
            // Errors too.
            #expect(try await api.get("/no/such/route").headers[header]?.count == 16)
        }
        // From anyone else, a client's id is replaced.
        try await withLiveApp { api, _ async throws in
            let replaced = try await api.call(.get, "/feed/global", headers: [header: "mine"])
            #expect(replaced.headers[header]?.count == 16)
        }
    }

    @Test func jsonLogLinesAreObjectsWithTheRequestID() throws {
        let lines = NIOLockedValueBox([String]())
        var logger = Logger(label: "plaza") { label in
            JSONLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } }
        }
        logger[metadataKey: "request_id"] = "0123456789abcdef"
        logger.warning("A \"quoted\"\nline", metadata: ["user": "7"])
        logger.debug("below the level")
        let written = lines.withLockedValue { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" })
        let object = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
        #expect(object["message"] == "A \"quoted\"\nline")
        #expect(object["level"] == "warning")
        #expect(object["label"] == "plaza")
        #expect(object["request_id"] == "0123456789abcdef")
        #expect(object["user"] == "7")
        let time = try #require(object["time"])
        #expect(try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(time).timeIntervalSinceNow > -60)
    }
}
