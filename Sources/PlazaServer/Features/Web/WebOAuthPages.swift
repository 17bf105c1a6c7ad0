import Foundation
import Hummingbird
import PlazaAPI

/// `/oauth/authorize`: an app asks a person for access. Signed out, they sign in first (the
/// sign-in page comes back here); signed in, they see the app and what it asks for, and allow
/// or deny. Allowing sends the app a code (`redirectURI?code=…&state=…`), or shows it for the
/// out-of-band redirect. Errors in the app's own request (unknown app, redirect URI not
/// registered) are shown here and never sent to an unverified address.
struct WebOAuthPages {
    let web: WebController
    let oauth: OAuthStore

    func register(to web: RouterGroup<PlazaContext>) {
        web.get("oauth/authorize", use: authorizePage)
        web.post("oauth/authorize", use: authorize)
    }

    /// The request's parameters, from the query (GET) or the consent form (POST).
    struct Authorization: Decodable, Sendable {
        var responseType: String?
        var clientID: String?
        var redirectURI: String?
        var scope: String?
        var state: String?
        var codeChallenge: String?
        var codeChallengeMethod: String?
        var decision: String?
        var _csrf: String?

        enum CodingKeys: String, CodingKey {
            case responseType = "response_type"
            case clientID = "client_id"
            case redirectURI = "redirect_uri"
            case scope, state
            case codeChallenge = "code_challenge"
            case codeChallengeMethod = "code_challenge_method"
            case decision, _csrf
        }

        /// The same, with the empty fields of a form (a hidden input of an absent value) absent.
        var normalized: Self {
            func present(_ value: String?) -> String? { value?.isEmpty == false ? value : nil }
            var copy = self
            copy.redirectURI = present(redirectURI)
            copy.scope = present(scope)
            copy.state = present(state)
            copy.codeChallenge = present(codeChallenge)
            copy.codeChallengeMethod = present(codeChallengeMethod)
            return copy
        }
    }

    /// What the consent page shows.
    struct ConsentPage: Sendable {
        struct Scope: Sendable {
            let name: String
            let meaning: String
        }
        let app: String
        let website: String?
        let scopes: [Scope]
        let request: Authorization
        let scope: String
    }

    struct CodePage: Sendable {
        let app: String
        let code: String
    }

    /// An authorization checked against the app's registration.
    struct Checked {
        let app: OAuthStore.App
        let redirectURI: String
        let scopes: OAuthScopes
    }

    /// Checks the app's request against its registration. Every error is shown on this page
    /// (400), none sent to the app's address: anyone may register an app, so redirecting an
    /// error before a person chose would make this page an open redirect (RFC 9700 §4.11.2).
    func check(_ request: Authorization) async throws -> Checked {
        let request = request.normalized
        func refuse(_ code: String, _ message: String) -> PlazaError { PlazaError(.badRequest, code, message) }
        guard let clientID = request.clientID, let app = try await oauth.app(clientID: clientID) else {
            throw refuse("invalid_client", "This app is not registered here (unknown client_id).")
        }
        let redirect = request.redirectURI ?? (app.redirectURIs.count == 1 ? app.redirectURIs[0] : "")
        guard app.redirectURIs.contains(redirect) else {
            throw refuse("invalid_redirect_uri", "The redirect URI is not one this app registered.")
        }
        guard request.responseType == "code" else {
            throw refuse("unsupported_response_type", "Only response_type=code is supported.")
        }
        guard let scopes = OAuthScopes(request.scope), app.scopes.covers(scopes) else {
            throw refuse("invalid_scope", "The app asks for scopes it did not register, or unknown ones.")
        }
        if let challenge = request.codeChallenge {
            guard request.codeChallengeMethod == "S256", challenge.utf8.count == 43,
                challenge.utf8.allSatisfy(OAuthStore.isUnreserved)
            else {
                throw refuse(
                    "invalid_request", "code_challenge must be an S256 challenge (code_challenge_method=S256).")
            }
        }
        return Checked(app: app, redirectURI: redirect, scopes: scopes)
    }

    /// What the consent form may lead to: the app's address (its origin, or its own scheme).
    static func formTarget(_ redirect: String) -> [String] {
        guard redirect != OAuthStore.outOfBand, let url = URLComponents(string: redirect), let scheme = url.scheme
        else { return [] }
        guard let host = url.host, !host.isEmpty, ["http", "https"].contains(scheme.lowercased()) else {
            return [scheme.lowercased() + ":"]
        }
        return ["\(scheme.lowercased())://\(host)" + (url.port.map { ":\($0)" } ?? "")]
    }

    /// `uri` with the parameters that have a value added to its query (a custom scheme's too).
    static func redirect(_ uri: String, _ parameters: [(String, String?)]) -> Response {
        let query = OIDCClient.formEncode(parameters.compactMap { name, value in value.map { (name, $0) } })
        return Response(status: .found, headers: [.location: uri + (uri.contains("?") ? "&" : "?") + query])
    }

    static let meanings: [String: String] = [
        "read": "Read everything you can see: posts, people, notifications",
        "write": "Post, comment, like, save and change your profile as you",
        "follow": "Follow, unfollow, block and mute people as you",
        "push": "Send you push notifications",
        "profile": "Know who you are (your profile only)",
    ]

    @Sendable func authorizePage(_ request: Request, context: PlazaContext) async throws -> Response {
        let query: Authorization
        do {
            query = try URLEncodedFormDecoder().decode(Authorization.self, from: request.uri.query ?? "").normalized
        } catch {
            throw PlazaError.malformed("The authorization request could not be read.")
        }
        let checked = try await check(query)
        guard context.identity != nil else {
            return WebController.redirect(to: "/login?next=" + WebPages.encoded(request.uri.description))
        }
        let body = ConsentPage(
            app: checked.app.name, website: checked.app.website,
            scopes: checked.scopes.names.map { .init(name: $0, meaning: Self.meanings[$0] ?? Self.meaning(of: $0)) },
            request: query, scope: checked.scopes.description)
        return try await web.page(
            "oauth-authorize", title: "Authorize \(checked.app.name)", body, request: request, context: context,
            formTargets: Self.formTarget(checked.redirectURI))
    }

    static func meaning(of scope: String) -> String {
        let parts = scope.split(separator: ":")
        guard parts.count == 2 else { return scope }
        return (parts[0] == "read" ? "Read your " : "Change your ") + parts[1].replacingOccurrences(of: "_", with: " ")
    }

    @Sendable func authorize(_ request: Request, context: PlazaContext) async throws -> Response {
        let form = try await web.form(Authorization.self, request, context: context).normalized
        try web.checkCSRF(form._csrf, request, context: context)
        guard let me = context.identity else { return WebController.redirect(to: "/login") }
        let checked = try await check(form)
        guard form.decision == "allow" else {
            if checked.redirectURI == OAuthStore.outOfBand { return WebController.redirect(to: "/") }
            return Self.redirect(
                checked.redirectURI,
                [
                    ("error", "access_denied"), ("error_description", "The person denied the request."),
                    ("state", form.state),
                ])
        }
        let code = try await oauth.issueCode(
            app: checked.app, user: me.userID, redirectURI: checked.redirectURI, scopes: checked.scopes,
            challenge: form.codeChallenge)
        if checked.redirectURI == OAuthStore.outOfBand {
            return try await web.page(
                "oauth-code", title: "Authorization code", CodePage(app: checked.app.name, code: code),
                request: request,
                context: context)
        }
        return Self.redirect(checked.redirectURI, [("code", code), ("state", form.state)])
    }
}
