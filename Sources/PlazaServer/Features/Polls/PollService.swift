import Logging
import ServiceLifecycle

/// Tells authors and voters that their polls ended, a few seconds after each ends: every
/// `interval` it announces the polls that ended and were not announced yet (`polls_due`), on
/// every app server (each poll once: `PollStore.announceEnded` claims it).
struct PollService: Service {
    let polls: PollStore
    /// Opened once the migrations have run.
    let signal: WorkSignal
    var interval: Duration = .seconds(10)
    let logger: Logger

    func run() async throws {
        await signal.work(pollInterval: interval) { await runOnce() }
    }

    /// Announces one batch; true when it was full (there may be more).
    func runOnce() async -> Bool {
        do {
            return try await polls.announceEnded(limit: Self.batch) == Self.batch
        } catch {
            logger.warning("Announcing ended polls failed: \(String(reflecting: error))")
            return false
        }
    }

    static let batch = 20
}
