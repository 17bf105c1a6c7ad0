import Logging
import ServiceLifecycle

/// Enters new posts in their followers' home timelines in batches (`HomeTimeline.enterPending`):
/// woken by a new post, it waits `gather` for the posts that come with it, then enters them all
/// in one write. It also looks every `pollInterval`, for posts another server queued or that
/// waited through a restart. On PostgreSQL every app server runs one; each post is entered once.
struct HomeFanOutService: Service {
    let db: Database
    /// Opened once the migrations have run; woken by each new post.
    let signal: WorkSignal
    /// How long a post waits for others to share its batch. A home feed reads a waiting post
    /// meanwhile, so this costs readers nothing but a look at the queue.
    var gather: Duration = .milliseconds(200)
    var pollInterval: Duration = .seconds(5)
    let logger: Logger

    /// Posts entered in one write at most; a longer queue is entered a batch after another.
    /// The writer is held while a batch is entered, so batches are kept short: writes queued
    /// meanwhile wait for it. Measured on 1,000 people following 20 each, 32 connections
    /// creating posts: 2,000 posts a batch made 3,490 posts/s with a p99 of 110 ms, 200 made
    /// 2,675 with 78 ms, 100 made 2,533 with 61 ms; one post at a time 2,221 with 36 ms.
    static let batch = 200

    func run() async throws {
        await signal.work(pollInterval: pollInterval) {
            try? await Task.sleep(for: gather)
            while !Task.isShuttingDownGracefully, await runOnce() == Self.batch {}
            return false
        }
    }

    /// Enters one batch; how many posts it took.
    @discardableResult
    func runOnce() async -> Int {
        do {
            return try await db.write { try await HomeTimeline.enterPending(limit: Self.batch, on: $0) }
        } catch {
            logger.warning("Entering new posts in home timelines failed: \(String(reflecting: error))")
            return 0
        }
    }
}
