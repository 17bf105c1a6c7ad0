import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Password hashing: bcrypt over a SHA-256 pre-hash, so passwords up to the API's 128
/// characters count in full instead of being cut at bcrypt's 72 bytes. Runs off the event loop.
struct PasswordHasher: Sendable {
    let cost: Int
    /// A valid hash of a random secret at the same cost, verified against when the account does
    /// not exist, so an unknown user costs the same time as a wrong password.
    private let decoyHash: String

    init(cost: Int) {
        self.cost = cost
        self.decoyHash = Bcrypt.hash(UUID().uuidString, cost: UInt8(cost))
    }

    func hash(_ password: String) async throws -> String {
        let cost = UInt8(self.cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(Self.prehash(password), cost: cost) }
    }

    func verify(_ password: String, hash: String?) async throws -> Bool {
        let decoy = decoyHash
        return try await NIOThreadPool.singleton.runIfActive {
            let ok = Bcrypt.verify(Self.prehash(password), hash: hash ?? decoy)
            return ok && hash != nil
        }
    }

    static func prehash(_ password: String) -> String {
        Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString()
    }
}

/// Opaque session tokens: 256 random bits, stored only as their SHA-256.
enum SessionToken {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func hash(_ token: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(token.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
