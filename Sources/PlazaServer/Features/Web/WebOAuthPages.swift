import Foundation
import Hummingbird
import PlazaAPI

/// `/oauth/authorize`: an app asks a person for access. Signed out, they sign in first (the
/// sign-in page comes back here); signed in, they see the app and what it asks for, and allow
/// or deny. Allowing sends the app a code (`redirectURI?code=…&state=…`), or shows it for the
/// out-of-band redirect. Errors in the app's own request (unknown app, redirect URI not
/// registered) are shown here and never sent to an unverified address.
struct WebOAuthPages: FeatureRoutes {
    let web: WebController
    let oauth: OAuthStore

    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.get("oauth/authorize", use: authorizePage)
        routes.post("oauth/authorize", use: authorize)
        return routes
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

    /// What a scope lets the app do, as the consent page says it.
    static func meaning(of scope: String, t: Localizer) -> String {
        switch scope {
        case "read": t("Read everything you can see: posts, people, notifications")
        case "write": t("Post, comment, like, save and change your profile as you")
        case "follow": t("Follow, unfollow, block and mute people as you")
        case "push": t("Send you push notifications")
        case "profile": t("Know who you are (your profile only)")
        case "read:accounts": t("Read your accounts")
        case "read:blocks": t("Read your blocks")
        case "read:bookmarks": t("Read your bookmarks")
        case "read:favourites": t("Read your favourites")
        case "read:filters": t("Read your filters")
        case "read:follows": t("Read your follows")
        case "read:lists": t("Read your lists")
        case "read:mutes": t("Read your mutes")
        case "read:notifications": t("Read your notifications")
        case "read:search": t("Read your search")
        case "read:statuses": t("Read your statuses")
        case "write:accounts": t("Change your accounts")
        case "write:blocks": t("Change your blocks")
        case "write:bookmarks": t("Change your bookmarks")
        case "write:conversations": t("Change your conversations")
        case "write:favourites": t("Change your favourites")
        case "write:filters": t("Change your filters")
        case "write:follows": t("Change your follows")
        case "write:lists": t("Change your lists")
        case "write:media": t("Change your media")
        case "write:mutes": t("Change your mutes")
        case "write:notifications": t("Change your notifications")
        case "write:reports": t("Change your reports")
        case "write:statuses": t("Change your statuses")
        default: scope
        }
    }

    @Sendable func authorizePage(_ request: Request, context: PlazaContext) async throws -> Response {
        let query: Authorization
        do {
            query = try URLEncodedFormDecoder().decode(Authorization.self, from: request.uri.query ?? "").normalized
        } catch {
            throw PlazaError.malformed("The authorization request could not be read.")
        }
        let checked = try await check(query)
        guard context.identity != nil else {
            return WebController.redirect(to: "/login?next=" + PublicLinks.queryValue(request.uri.description))
        }
        let t = web.localizer(context)
        let body = ConsentPage(
            app: checked.app.name, website: checked.app.website,
            scopes: checked.scopes.names.map { .init(name: $0, meaning: Self.meaning(of: $0, t: t)) },
            request: query, scope: checked.scopes.description)
        return try await web.page(
            "oauth-authorize", title: t("Authorize {app}", ["app": checked.app.name]), body, request: request,
            context: context, formTargets: Self.formTarget(checked.redirectURI))
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
            let t = web.localizer(context)
            return try await web.page(
                "oauth-code", title: t("Authorization code"), CodePage(app: checked.app.name, code: code),
                request: request, context: context)
        }
        return Self.redirect(checked.redirectURI, [("code", code), ("state", form.state)])
    }
}
