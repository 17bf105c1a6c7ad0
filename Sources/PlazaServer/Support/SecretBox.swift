import Crypto
import Foundation

/// Secrets Plaza keeps that a copy of the database must not reveal (two-factor secrets), sealed
/// with AES-256-GCM under a key kept outside the database (`PLAZA_SECRET_KEY` or
/// `PLAZA_SECRET_KEY_FILE`), as Mastodon does with its OTP secret. A sealed value names its
/// key, so after a new key is set (the old one in `PLAZA_SECRET_KEY_PREVIOUS`) values under
/// the old one still open, and `plaza secrets rotate` seals them anew. Each value is bound to
/// its place (`context`, e.g. the person's id): it does not open when copied to another row.
/// Without a key, values are kept as they are, and `plaza check` says so.
public struct SecretBox: Sendable {
    public struct Key: Sendable {
        /// The first 8 hex digits of the key's SHA-256: which key sealed a value.
        let id: String
        let key: SymmetricKey

        /// 32 bytes, written as base64 (`plaza secrets new-key`) or 64 hex digits.
        public init(text: String) throws {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            let bytes: [UInt8]
            if trimmed.count == 64, let hex = ByteText.bytes(hex: trimmed) {
                bytes = hex
            } else if let data = Data(base64Encoded: trimmed) {
                bytes = Array(data)
            } else {
                throw ConfigurationError(
                    "secret-key must be 32 bytes as base64 or hex (plaza secrets new-key makes one).")
            }
            guard bytes.count == 32 else {
                throw ConfigurationError(
                    "secret-key must be 32 bytes, not \(bytes.count) (plaza secrets new-key makes one).")
            }
            key = SymmetricKey(data: bytes)
            id = String(ByteText.hex(SHA256.hash(data: bytes)).prefix(8))
        }

        /// A new random key, as base64.
        public static func generate() -> String {
            SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        }
    }

    /// New values are sealed with it; nil keeps them as they are.
    public let current: Key?
    /// Keys earlier values may be sealed with.
    public let previous: [Key]

    public init(current: Key?, previous: [Key] = []) {
        self.current = current
        self.previous = previous
    }

    static let prefix = "sealed:v1:"

    /// `plain` sealed under the current key for `context`, or `plain` itself without a key.
    public func seal(_ plain: String, context: String) throws -> String {
        guard let current else { return plain }
        let box = try AES.GCM.seal(Data(plain.utf8), using: current.key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw SealError.failed }
        return "\(Self.prefix)\(current.id):\(combined.base64EncodedString())"
    }

    /// The plain value; a value stored before sealing began is returned as it is. Nil when its
    /// key is not known here or it does not open (tampered, or moved from another context).
    public func open(_ stored: String, context: String) -> String? {
        guard stored.hasPrefix(Self.prefix) else { return stored }
        let rest = stored.dropFirst(Self.prefix.count)
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        let id = String(rest[..<colon])
        guard let key = ([current].compactMap { $0 } + previous).first(where: { $0.id == id }),
            let combined = Data(base64Encoded: String(rest[rest.index(after: colon)...])),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key.key, authenticating: Data(context.utf8))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }

    /// Whether `stored` is sealed under the current key (nothing for `rotate` to do).
    func isCurrent(_ stored: String) -> Bool {
        guard let current else { return !stored.hasPrefix(Self.prefix) }
        return stored.hasPrefix("\(Self.prefix)\(current.id):")
    }

    enum SealError: Error { case failed }
}
