// The app around the documentation's snippets (scripts/sdk-check.sh compiles it into every
// module of snippets). Only stand-ins for what an app has of its own: its screens, what the
// person typed or picked, the device's position. Never anything of PlazaKit: a snippet that calls
// PlazaKit calls the real thing, so a renamed method or a changed signature fails here.
import Foundation
import PlazaKit

// MARK: what the person typed, picked or was sent

let password = "correct horse battery staple"
let newPassword = "a new correct horse"
/// The `token` query item of a mailed link (`/reset-password?token=…`, `/verify-email?token=…`).
let token = "token-from-the-link"
/// A code from the authenticator app.
let codeFromTheUser = "123456"
/// Sign in with Apple's `identityToken` (as text) and the raw nonce the app made for it.
let identityToken = "eyJ…"
let rawNonce = "a-random-nonce"
/// Classic Facebook Login's `AccessToken.current!.tokenString`.
let facebookAccessToken = "EAAB…"
/// A photo and a video from the photo library or the camera.
let jpegData = Data()
let movData = Data()

/// The device's position, as Core Location's `CLLocationCoordinate2D` gives it.
struct Coordinate: Sendable {
    var latitude: Double
    var longitude: Double
}
let here = Coordinate(latitude: 40.7209, longitude: -73.9897)

// MARK: the app's screens

/// Puts anything on screen.
func show<each Value>(_ value: repeat each Value) {}
/// An alert with the server's message.
func showError(_ message: String) {}
/// The sign-in screen, again.
func signInAgain() {}
/// Tries again later.
func retry(after seconds: Int) {}

@MainActor final class ProgressBar {
    var progress: Float = 0
}
@MainActor let progressView = ProgressBar()

final class Badge: Sendable {
    func increment(for notification: PlazaAPI.Notification) {}
}
let badge = Badge()

final class TextField: @unchecked Sendable {
    var error: String?
}
let usernameField = TextField()

final class Form: Sendable {
    func highlight(_ field: String?, _ message: String) {}
}
let form = Form()

/// Opens a page of the app for a path of the web app's (`/p/123`, `/u/ana`).
actor Router {
    static let shared = Router()
    func open(_ path: String) {}
}

#if !canImport(Security)
    /// The Keychain token store that docs/sdk.md and the DocC article write needs Apple's Security
    /// framework; where there is none (Linux) the snippets that use it compile against memory.
    typealias KeychainTokens = InMemoryTokenStore
#endif
