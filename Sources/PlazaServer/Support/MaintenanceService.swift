import Logging
import ServiceLifecycle

/// Periodic clean-up: sessions idle past their lifetime.
struct MaintenanceService: Service {
    let accounts: AccountStore
    let logger: Logger
    var interval: Duration = .seconds(3600)

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            do {
                try await accounts.deleteIdleSessions()
            } catch {
                logger.warning("Session clean-up failed: \(error)")
            }
        }
    }
}
