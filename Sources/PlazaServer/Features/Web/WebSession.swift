import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The web app's cookie session and its CSRF defence.
///
/// The session cookie holds the same kind of token an API client gets from `/auth/login`
/// (HttpOnly, SameSite=Lax; over HTTPS also Secure and named with the `__Host-` prefix, so
/// no subdomain and no plain-HTTP page can set or shadow it). The CSRF token is derived from a secret
/// only the browser's cookie jar holds, `SHA-256("plaza-csrf:" + secret)`: the session token
/// once signed in, else a random pre-session nonce. A page embeds the token; a cross-site
/// page can neither read the cookie nor the page, so it cannot produce the token. Forms send
/// it as `_csrf`; scripts as the `X-CSRF-Token` header, which the API requires on every unsafe
/// request authenticated by the cookie.
enum WebSession {
    static let sessionCookie = "plaza_session"
    static let nonceCookie = "plaza_csrf"
    static let csrfHeader = HTTPField.Name("X-CSRF-Token")!
    static let csrfField = "_csrf"

    static func csrfToken(secret: String) -> String {
        ByteText.base64url(SHA256.hash(data: Data("plaza-csrf:\(secret)".utf8)))
    }

    /// A cookie's name as set: over HTTPS with the `__Host-` prefix.
    static func name(_ cookie: String, secure: Bool) -> String { secure ? "__Host-" + cookie : cookie }

    /// A cookie's value by the name it is set with: over HTTPS only the `__Host-` one, which no
    /// other host and no plain-HTTP page can set, so a planted plain cookie cannot fix a session.
    private static func value(_ cookie: String, _ request: Request, secure: Bool) -> String? {
        request.cookies[name(cookie, secure: secure)]?.value
    }

    /// The session token from the cookie, if it has a plausible shape.
    static func sessionToken(_ request: Request, secure: Bool) -> String? {
        guard let value = value(sessionCookie, request, secure: secure), !value.isEmpty, value.utf8.count <= 128 else {
            return nil
        }
        return value
    }

    /// Whether the request carries a session cookie by either name (a hint for rate limits only).
    static func hasSessionCookie(_ request: Request) -> Bool {
        request.cookies[name(sessionCookie, secure: true)] != nil || request.cookies[sessionCookie] != nil
    }

    static func nonce(_ request: Request, secure: Bool) -> String? {
        guard let value = value(nonceCookie, request, secure: secure), value.utf8.count >= 16, value.utf8.count <= 64
        else { return nil }
        return value
    }

    /// True when `submitted` is the token for the request's cookie secret, compared in constant time,
    /// and the browser does not say the request came from another site.
    static func verify(_ submitted: String?, secret: String?, request: Request) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site == "cross-site" { return false }
        guard let submitted, let secret else { return false }
        let expected = Array(csrfToken(secret: secret).utf8)
        let given = Array(submitted.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func isUnsafe(_ method: HTTPRequest.Method) -> Bool {
        !(method == .get || method == .head || method == .options)
    }

    static func sessionCookie(token: String, maxAgeDays: Int, secure: Bool) -> Cookie {
        Cookie(
            name: name(sessionCookie, secure: secure), value: token, maxAge: maxAgeDays * 86_400, path: "/",
            secure: secure, httpOnly: true,
            sameSite: .lax)
    }

    static func expiredSessionCookie(secure: Bool) -> Cookie {
        Cookie(
            name: name(sessionCookie, secure: secure), value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true,
            sameSite: .lax)
    }

    static func nonceCookie(_ value: String, secure: Bool) -> Cookie {
        Cookie(
            name: name(nonceCookie, secure: secure), value: value, path: "/", secure: secure, httpOnly: true,
            sameSite: .lax)
    }

    static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
    }
}
