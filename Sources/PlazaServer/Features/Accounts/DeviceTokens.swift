import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import PlazaAPI

/// Device tokens (OWASP's "device cookie"): proof that a client signed in to an account before.
/// Issued at every successful sign-in or sign-up (`AuthResponse.deviceToken`, and the web app's
/// `plaza_device` cookie); presented on sign-in and current-password checks in the
/// `Plaza-Device-Token` header, or by the cookie. A valid token for the account makes the client a
/// trusted device for `LoginThrottle`: it has its own failure budget and is not refused for other
/// clients' failures. It grants nothing else: the password is still checked.
///
/// A token is `<user id>.<issued ms>.<device id>.<HMAC-SHA256>`, signed with a key kept in the
/// database (`ServerKeyStore`), valid for 400 days (the longest cookie browsers keep).
final class DeviceTokens: Sendable {
    static let cookieName = "plaza_device"
    static let header = HTTPField.Name("Plaza-Device-Token")!
    static let lifetimeMillis: Int64 = 400 * 86_400_000

    private let keys: ServerKeyStore
    private let cached = NIOLockedValueBox<SymmetricKey?>(nil)

    init(keys: ServerKeyStore) { self.keys = keys }

    private func signingKey() async throws -> SymmetricKey {
        if let key = cached.withLockedValue({ $0 }) { return key }
        let key = SymmetricKey(data: try await keys.key("device-token"))
        cached.withLockedValue { $0 = key }
        return key
    }

    /// A new token for a client that just proved it knows `userID`'s password.
    func issue(userID: Int64, now: Timestamp = .now) async throws -> String {
        let device = ByteText.base64url(ByteText.randomBytes(16))
        let payload = "\(userID).\(now.milliseconds).\(device)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: try await signingKey())
        return payload + "." + ByteText.base64url(mac)
    }

    /// The device id in `token` when it is a valid, unexpired token for `userID`; nil otherwise.
    /// The token is untrusted input: anything not exactly of the issued shape is nil.
    func device(_ token: String?, userID: Int64, now: Timestamp = .now) async throws -> String? {
        guard let token, (40...200).contains(token.utf8.count) else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == String(userID),
            parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let issued = Int64(parts[1]),
            issued <= now.milliseconds + 60_000, now.milliseconds - issued < Self.lifetimeMillis,
            parts[2].utf8.count == 22, let mac = ByteText.bytes(base64url: parts[3]), mac.count == 32
        else { return nil }
        let payload = Data(token.utf8.prefix(token.utf8.count - parts[3].utf8.count - 1))
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: try await signingKey()) else {
            return nil
        }
        return String(parts[2])
    }

    /// The token a request presents: the header (API clients), else the cookie (browsers).
    static func presented(_ request: Request) -> String? {
        if let header = request.headers[header], !header.isEmpty { return header }
        return request.cookies[cookieName]?.value
    }

    static func cookie(_ token: String, secure: Bool) -> Cookie {
        Cookie(
            name: cookieName, value: token, maxAge: Int(lifetimeMillis / 1000), path: "/", secure: secure,
            httpOnly: true,
            sameSite: .lax)
    }
}
