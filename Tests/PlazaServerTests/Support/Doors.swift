import Hummingbird
import Logging

@testable import PlazaMastodon
@testable import PlazaServer

/// The doors `plaza serve` opens beside the core's own: Mastodon's.
let extraDoors: [any Door] = [MastodonDoor()]

/// The application as `plaza serve` builds it.
func buildApplication(config: PlazaConfig, logger: Logger) async throws -> some ApplicationProtocol {
    try await PlazaServer.buildApplication(config: config, logger: logger, doors: extraDoors)
}

/// The router `plaza serve` builds, and its doors, on a test database.
func withRouter(_ body: @escaping @Sendable (Router<PlazaContext>, Doors, PlazaConfig) async throws -> Void)
    async throws
{
    try await withDatabase { db, config in
        let services = try AppServices(config: config, db: db)
        let doors = Doors(
            services: services, hub: services.eventHub(config: config, logger: .init(label: "test")), config: config)
        let router = buildRouter(doors, web: try await WebRenderer.load(map: config.map), extra: extraDoors)
        try await body(router, doors, config)
    }
}

extension OpenAPIDocument {
    /// The document `plaza serve` serves.
    static func json() throws -> [UInt8] { try json(with: extraDoors.map(\.openAPI)) }
    static var operations: [(String, Operation)] { operations(with: extraDoors.map(\.openAPI)) }
}
