import Crypto
import Foundation
import NIOConcurrencyHelpers

/// The access tokens Mastodon apps' push subscriptions carry in each push (`access_token`, which
/// the app uses to open the notification), kept sealed with AES-256-GCM in the subscription's
/// row (`push_devices.app_token`), bound to that row's id: a sealed token copied to another row
/// does not open. Sealed under the key kept outside the database (`SecretBox`, `PLAZA_SECRET_KEY`)
/// when one is set; otherwise under a key derived (HKDF-SHA256) from the server's own `vapid`
/// key (`ServerKeyStore`), so the column never holds a token in the clear. Plaza keeps only
/// hashes of tokens elsewhere; this copy lives exactly as long as the subscription, which goes
/// with its session.
package final class AppPushTokens: Sendable {
    let keys: ServerKeyStore
    let secrets: SecretBox
    private let derived = NIOLockedValueBox<SymmetricKey?>(nil)
    static let prefix = "push:v1:"

    init(keys: ServerKeyStore, secrets: SecretBox) {
        self.keys = keys
        self.secrets = secrets
    }

    static func context(device: Int64) -> String { "push_devices.app_token:\(device)" }

    private func key() async throws -> SymmetricKey {
        if let key = derived.withLockedValue({ $0 }) { return key }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: try await keys.key("vapid")),
            salt: Array("plaza app push token".utf8), info: Array("push_devices.app_token v1".utf8),
            outputByteCount: 32)
        derived.withLockedValue { $0 = key }
        return key
    }

    /// Seals tokens without waiting, for use inside a transaction (the derived key is read first).
    struct Sealer: Sendable {
        let secrets: SecretBox
        let key: SymmetricKey

        /// `token` sealed for the row `device`.
        func seal(_ token: String, device: Int64) throws -> String {
            let context = AppPushTokens.context(device: device)
            if secrets.current != nil { return try secrets.seal(token, context: context) }
            let box = try AES.GCM.seal(Data(token.utf8), using: key, authenticating: Data(context.utf8))
            guard let combined = box.combined else { throw SecretBox.SealError.failed }
            return AppPushTokens.prefix + combined.base64EncodedString()
        }
    }

    func sealer() async throws -> Sealer { Sealer(secrets: secrets, key: try await key()) }

    /// The token sealed in the row `device`; nil when there is none or it does not open (another
    /// row's, or sealed under a key this server no longer has).
    func open(_ stored: String?, device: Int64) async -> String? {
        guard let stored else { return nil }
        let context = Self.context(device: device)
        if stored.hasPrefix(SecretBox.prefix) { return secrets.open(stored, context: context) }
        guard stored.hasPrefix(Self.prefix),
            let combined = Data(base64Encoded: String(stored.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: combined),
            let key = try? await key(),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
        else { return nil }
        return String(decoding: plain, as: UTF8.self)
    }
}
