import Hummingbird
import PlazaAPI

extension Health: ResponseEncodable {}

/// `GET /healthz`: 200 when the database answers, 503 when it does not.
struct HealthController {
    let db: Database

    func register(to router: Router<PlazaContext>) {
        router.get("healthz", use: health)
    }

    @Sendable func health(_ request: Request, context: PlazaContext) async throws -> Health {
        do {
            _ = try await db.read { db in try await db.first("SELECT 1 AS ok") }
        } catch {
            context.logger.error("Health check failed: \(error)")
            throw PlazaError(.serviceUnavailable, "database_unavailable", "The database does not answer.")
        }
        return Health(status: "ok")
    }
}
