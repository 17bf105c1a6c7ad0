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

extension OpenAPIDocument {
    /// The document `plaza serve` serves.
    static func json() throws -> [UInt8] { try json(with: extraDoors.map(\.openAPI)) }
    static var operations: [(String, Operation)] { operations(with: extraDoors.map(\.openAPI)) }
}
