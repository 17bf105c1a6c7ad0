import CoreMetrics
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Prometheus

/// The server's metrics: swift-metrics' API over a Prometheus registry of this server's own
/// (not the process-wide `MetricsSystem`, so several servers in one process, as in the tests,
/// each count their own). Served in Prometheus's text format at `GET /metrics` on the metrics
/// port (`MetricsServer`); docs/operations.md lists every series.
///
/// Counters and histograms are recorded where things happen; what is a level (queue depths,
/// open streams, the event hub's lag) is read when scraped (`MetricsServer.collect`).
final class PlazaMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["plaza_http_request_duration_seconds"] = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        factory.durationHistogramBuckets["plaza_db_wait_seconds"] = [
            .microseconds(100), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50),
            .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets["plaza_media_processing_seconds"] = [
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        factory.valueHistogramBuckets["plaza_sqlite_commit_batch_size"] = [1, 2, 4, 8, 16, 32, 64]
        self.factory = factory
    }

    /// A request answered: by method, route pattern (never the raw path, whose values are
    /// unbounded) and status; its time until the answer's head.
    func request(method: HTTPRequest.Method, route: String, status: HTTPResponse.Status, duration: Duration) {
        let dimensions = [
            ("method", Self.methods.contains(method) ? method.rawValue : "other"), ("route", route),
            ("status", String(status.code)),
        ]
        CoreMetrics.Counter(label: "plaza_http_requests_total", dimensions: dimensions, factory: factory).increment()
        CoreMetrics.Timer(
            label: "plaza_http_request_duration_seconds", dimensions: Array(dimensions.prefix(2)),
            preferredDisplayUnit: .seconds, factory: factory
        ).record(duration: duration)
    }

    /// Methods named as they are; any other (a client may send anything) is "other".
    private static let methods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    /// How long a database call waited for its connection (for a SQLite write: its turn in
    /// the group commit).
    func databaseWait(_ path: DatabaseUsage.Path, _ duration: Duration) {
        CoreMetrics.Timer(
            label: "plaza_db_wait_seconds", dimensions: [("path", path.name)], preferredDisplayUnit: .seconds,
            factory: factory
        ).record(duration: duration)
    }

    /// The writes one SQLite commit carried.
    func sqliteBatch(_ writes: Int) {
        CoreMetrics.Recorder(label: "plaza_sqlite_commit_batch_size", factory: factory).record(writes)
    }

    /// A mail or push delivery attempt that failed (`outbox` is "mail" or "push"), retried or not.
    func deliveryFailed(_ outbox: String) {
        CoreMetrics.Counter(label: "plaza_outbox_failures_total", dimensions: [("outbox", outbox)], factory: factory)
            .increment()
    }

    /// An upload processed (`kind` is "image" or "video"), from its bytes to its stored variants.
    func mediaProcessed(_ kind: String, _ duration: Duration) {
        CoreMetrics.Timer(
            label: "plaza_media_processing_seconds", dimensions: [("kind", kind)], preferredDisplayUnit: .seconds,
            factory: factory
        ).record(duration: duration)
    }

    /// Sets a level read at scrape time.
    func set(_ name: String, _ dimensions: [(String, String)] = [], to value: Int) {
        CoreMetrics.Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
    }

    /// Everything, in Prometheus's text format.
    func text() -> [UInt8] { registry.emitToBuffer() }
}

/// Calls to the database under way, by path: all of them, and those holding a connection (the
/// rest wait for one). `Database` keeps them around every call, read when scraped.
final class DatabaseUsage: Sendable {
    enum Path: Int, Sendable, CaseIterable {
        case read, write
        var name: String { self == .read ? "read" : "write" }
    }

    struct Counts: Sendable {
        var calls = 0
        var holding = 0
        var waiting: Int { calls - holding }
    }

    private let counts = NIOLockedValueBox([Counts(), Counts()])
    let metrics: PlazaMetrics

    init(metrics: PlazaMetrics) { self.metrics = metrics }

    subscript(path: Path) -> Counts { counts.withLockedValue { $0[path.rawValue] } }

    /// A call begins: returns when, for `hold`.
    func start(_ path: Path) -> ContinuousClock.Instant {
        counts.withLockedValue { $0[path.rawValue].calls += 1 }
        return .now
    }

    func end(_ path: Path) { counts.withLockedValue { $0[path.rawValue].calls -= 1 } }

    /// The call has its connection, after waiting since `start`.
    func hold(_ path: Path, since start: ContinuousClock.Instant) {
        counts.withLockedValue { $0[path.rawValue].holding += 1 }
        metrics.databaseWait(path, .now - start)
    }

    func release(_ path: Path) { counts.withLockedValue { $0[path.rawValue].holding -= 1 } }
}
