import Foundation
import PlazaAPI

/// Secrets the server makes for itself on first use and keeps in the database (`server_keys`),
/// so every app server on one database uses the same ones and they survive restarts.
struct ServerKeyStore: Sendable {
    let db: Database

    /// The 32-byte secret named `name`; the first server to ask makes it.
    func key(_ name: String) async throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let fresh = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
        let stored = try await db.write { db in
            try await db.exec(
                "INSERT INTO server_keys (name, value, created_at) VALUES (\(bind: name), \(bind: fresh), \(bind: Timestamp.now.milliseconds)) ON CONFLICT (name) DO NOTHING"
            )
            return try await db.first("SELECT value FROM server_keys WHERE name = \(bind: name)")?.decode(
                column: "value", as: String.self)
        }
        guard let stored, let bytes = Data(base64Encoded: stored), bytes.count >= 32 else {
            throw PlazaError(.internalServerError, "server_key", "The server key \(name) is missing or damaged.")
        }
        return Array(bytes)
    }
}
