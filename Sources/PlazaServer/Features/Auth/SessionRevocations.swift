import Logging
import ServiceLifecycle

/// PostgreSQL: every app server hears of sessions revoked on another (`NOTIFY plaza_sessions`
/// with the person's id, sent at commit by `AccountStore.deleteSessions`) and forgets them from
/// its cache at once, rather than within the cache's few seconds. When listening (re)starts the
/// whole cache is dropped, as a notification may have been missed meanwhile.
struct SessionRevocations: Service {
    static let channel = "plaza_sessions"
    let db: Database
    let cache: SessionCache
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await db.listen(channel: Self.channel) { payload in
                        guard let payload else { return cache.removeAll() }
                        if let userID = Int64(payload) { cache.forget(userID: userID) }
                    }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("Listening for revoked sessions failed, retrying: \(error)")
                }
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
            }
        }
    }
}
