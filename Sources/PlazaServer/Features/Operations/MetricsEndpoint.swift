import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Counts every request by method, route pattern ("NotFound" when no route matched, as
/// Hummingbird names it) and status, and times it until its answer's
/// head (an event stream's life is not its latency). Outside the error middleware, so refused
/// requests count with the status they got.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let metrics: PlazaMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.request(
                method: request.method, route: context.endpointPath ?? "NotFound", status: response.status,
                duration: .now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            metrics.request(
                method: request.method, route: context.endpointPath ?? "NotFound", status: status,
                duration: .now - start)
            throw error
        }
    }
}

/// `GET /metrics` in Prometheus's text format: the counters and histograms recorded as things
/// happen, and the levels read now (`collect`). Served on its own address
/// (`PLAZA_METRICS_HOST`/`PLAZA_METRICS_PORT`, off by default), or on the public port when
/// the operator names that port.
struct MetricsEndpoint: Sendable {
    let metrics: PlazaMetrics
    let db: Database
    let hub: EventHub
    let mail: MailOutbox
    let pushes: PushOutbox
    let logger: Logger

    /// Outbox rows counted at most: a scrape stays cheap however far a queue has grown.
    static let countCap = 100_000

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("metrics") { _, _ -> Response in
            await collect()
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: metrics.text())))
        }
    }

    /// Sets the levels: database calls waiting and holding connections, SQLite's write queue,
    /// open streams, the event hub's lag behind the log, and the outboxes' pending rows.
    func collect() async {
        for path in DatabaseUsage.Path.allCases {
            guard let counts = db.usage?[path] else { break }
            metrics.set("plaza_db_calls_waiting", [("path", path.name)], to: counts.waiting)
            metrics.set("plaza_db_calls_holding", [("path", path.name)], to: counts.holding)
        }
        if let sqlite = db.driver as? SQLiteDriver {
            metrics.set("plaza_sqlite_write_queue", to: sqlite.queuedWrites)
        }
        metrics.set("plaza_streams_open", to: hub.openStreams)
        do {
            if let delivered = hub.deliveredThrough {
                let head = try await hub.feed.bounds().head
                metrics.set("plaza_event_hub_lag_events", to: Int(max(0, head - delivered)))
            }
            metrics.set(
                "plaza_outbox_pending", [("outbox", "mail")], to: try await mail.pendingCount(cap: Self.countCap))
            metrics.set(
                "plaza_outbox_pending", [("outbox", "push")], to: try await pushes.pendingCount(cap: Self.countCap))
        } catch {
            // The levels from the database keep their last values; the scrape still answers.
            logger.warning("Metrics: reading the database failed: \(error)")
        }
    }
}
