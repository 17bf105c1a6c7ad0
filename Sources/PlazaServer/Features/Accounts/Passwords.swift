import Crypto
import Foundation
import HummingbirdBcrypt
import NIOConcurrencyHelpers
import NIOPosix

/// Password hashing: bcrypt over a SHA-256 pre-hash, so passwords up to the API's 128
/// characters count in full instead of being cut at bcrypt's 72 bytes. Runs off the event loop.
struct PasswordHasher: Sendable {
    let cost: Int

    func hash(_ password: String) async throws -> String {
        let cost = UInt8(self.cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(Self.prehash(password), cost: cost) }
    }

    /// Without an account (`hash` nil) the password is checked against a decoy hash at the same
    /// cost, so an unknown user costs the same time as a wrong password.
    func verify(_ password: String, hash: String?) async throws -> Bool {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive {
            // Taken on every path, so the first login after start-up costs the same either way.
            let decoy = Self.decoy(cost: cost)
            let ok = Bcrypt.verify(Self.prehash(password), hash: hash ?? decoy)
            return ok && hash != nil
        }
    }

    /// A valid hash of a random secret per cost, made on first use (on the thread pool, not
    /// at start-up) and shared by every hasher in the process.
    private static let decoys = NIOLockedValueBox<[Int: String]>([:])

    static func decoy(cost: Int) -> String {
        if let made = decoys.withLockedValue({ $0[cost] }) { return made }
        let made = Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
        return decoys.withLockedValue { decoys in
            if let first = decoys[cost] { return first }
            decoys[cost] = made
            return made
        }
    }

    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}

/// Opaque session tokens: 256 random bits, stored only as their SHA-256.
enum SessionToken {
    static func make() -> String { ByteText.base64url(ByteText.randomBytes(32)) }

    static func hash(_ token: String) -> String { ByteText.hex(SHA256.hash(data: Data(token.utf8))) }
}
