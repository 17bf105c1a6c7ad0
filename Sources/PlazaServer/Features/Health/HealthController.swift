import Hummingbird
import PlazaAPI

/// `GET /healthz`: 200 when the database answers, 503 when it does not.
struct HealthController: FeatureRoutes {
    let db: Database

    var routes: RouteCollection<PlazaContext> {
        RouteCollection(context: PlazaContext.self).get("healthz", use: health)
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
