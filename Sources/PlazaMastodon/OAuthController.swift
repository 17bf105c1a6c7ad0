import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

/// OAuth 2 for Mastodon apps: `POST /api/v1/apps`, `POST /oauth/token`, `POST /oauth/revoke`
/// and the server's metadata. The consent page, `/oauth/authorize`, is the web app's
/// (`WebOAuthPages`), behind its sign-in.
struct OAuthController: FeatureRoutes {
    let oauth: OAuthStore
    let accounts: AccountStore
    let baseURL: String

    /// The apps' registration, served with the rest of Mastodon's API under `/api/v1`.
    var apps: RouteCollection<PlazaContext> {
        let apps = RouteCollection(context: PlazaContext.self)
        apps.post("apps", use: registerApp)
        apps.get("apps/verify_credentials", use: verifyApp)
        return apps
    }

    /// The token endpoints, with OAuth's own errors, and the server's metadata, at the root.
    var routes: RouteCollection<PlazaContext> {
        let routes = RouteCollection(context: PlazaContext.self)
        routes.get(".well-known/oauth-authorization-server", use: metadata)
        let oauth = routes.group("oauth").add(middleware: OAuthErrorMiddleware())
        oauth.post("token", use: token)
        oauth.post("revoke", use: revoke)
        return routes
    }

    /// Checks an app's registration: a name, redirect URIs (absolute, no fragment, no script
    /// schemes; or the out-of-band URN), known scopes, an optional http(s) website.
    static func validRedirectURIs(_ values: [String]) throws -> [String] {
        let uris = values.flatMap {
            $0.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        .filter { !$0.isEmpty }
        guard !uris.isEmpty else { throw MastodonError.validation("Redirect URI can't be blank") }
        guard uris.count <= 10 else { throw MastodonError.validation("Redirect URI: at most 10") }
        for uri in uris {
            guard uri == OAuthStore.outOfBand || isRedirectURI(uri) else {
                throw MastodonError.validation("Redirect URI must be an absolute URI.")
            }
        }
        return uris
    }

    static func isRedirectURI(_ uri: String) -> Bool {
        guard uri.utf8.count <= 2000, !uri.contains("#"),
            uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
            !["javascript", "data", "vbscript", "file", "about", "blob"].contains(scheme)
        else { return false }
        if scheme == "http" || scheme == "https" { return components.host?.isEmpty == false }
        return true
    }

    @Sendable func registerApp(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let name = (params.string("client_name") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw MastodonError.validation("Application name can't be blank") }
        guard name.count <= 60, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw MastodonError.validation("Application name is too long (maximum is 60 characters)") }
        let uris = try Self.validRedirectURIs(params.strings("redirect_uris"))
        guard let scopes = OAuthScopes(params.string("scopes")) else {
            throw MastodonError.validation("Scopes are not all known scopes")
        }
        var website = params.string("website").flatMap { $0.isEmpty ? nil : $0 }
        if let site = website {
            guard site.utf8.count <= 2000, let url = URLComponents(string: site),
                ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false
            else { throw MastodonError.validation("Website is not an http(s) URL") }
            website = site
        }
        let (app, secret) = try await oauth.register(name: name, website: website, redirectURIs: uris, scopes: scopes)
        var body = Self.application(app)
        body.clientId = app.clientID
        body.clientSecret = secret
        body.clientSecretExpiresAt = 0
        return try MastodonJSON.response(body)
    }

    static func application(_ app: OAuthStore.App) -> Mastodon.CredentialApplication {
        Mastodon.CredentialApplication(
            id: String(app.id), name: app.name, website: app.website, scopes: app.scopes.names,
            redirectUri: app.redirectURIs.joined(separator: "\n"), redirectUris: app.redirectURIs, vapidKey: nil)
    }

    /// The app behind the token: an app token's, or the app a person's token was given to.
    @Sendable func verifyApp(_ request: Request, context: PlazaContext) async throws -> Response {
        if let credential = context.appCredential { return try MastodonJSON.response(Self.application(credential.app)) }
        guard let identity = context.identity else { throw MastodonError.unauthorized }
        guard let appID = try await accounts.app(ofSession: identity.sessionID),
            let app = try await oauth.app(id: appID)
        else { throw MastodonError.unauthorized }
        return try MastodonJSON.response(Self.application(app))
    }

    // MARK: token

    /// The client's credentials: HTTP Basic, else `client_id` and `client_secret` in the body.
    private func client(_ request: Request, _ params: MastodonParams) -> (id: String, secret: String?)? {
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("basic "),
            let bytes = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: bytes, encoding: .utf8), let colon = text.firstIndex(of: ":")
        {
            let id = String(text[..<colon]).removingPercentEncoding ?? ""
            let secret = String(text[text.index(after: colon)...]).removingPercentEncoding ?? ""
            return (id, secret)
        }
        guard let id = params.string("client_id") else { return nil }
        return (id, params.string("client_secret"))
    }

    @Sendable func token(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        guard let client = client(request, params) else { throw OAuthError.invalidClient }
        let grant = params.string("grant_type") ?? ""
        switch grant {
        case "authorization_code":
            // Without its secret, a client proves itself with PKCE alone (a code asked for with a challenge).
            guard let app = try await oauth.app(clientID: client.id, secret: client.secret) else {
                throw OAuthError.invalidClient
            }
            guard let code = params.string("code"),
                let granted = try await oauth.redeem(
                    code: code, app: app, redirectURI: params.string("redirect_uri") ?? "",
                    verifier: params.string("code_verifier"), requireChallenge: client.secret == nil)
            else {
                throw OAuthError(
                    "invalid_grant",
                    "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."
                )
            }
            let token = try await accounts.createSession(
                userID: granted.user, userAgent: request.headers[.userAgent], ip: context.remoteAddress,
                app: (app.id, granted.scopes))
            return try Self.tokenResponse(token, scopes: granted.scopes)
        case "client_credentials":
            guard let app = try await oauth.app(clientID: client.id, secret: client.secret ?? "") else {
                throw OAuthError.invalidClient
            }
            let scopes = try Self.requestedScopes(params.string("scope"), of: app)
            return try Self.tokenResponse(try await oauth.appToken(app: app, scopes: scopes), scopes: scopes)
        case "":
            throw OAuthError("invalid_request", "The request is missing grant_type.")
        default:
            throw OAuthError(
                "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.")
        }
    }

    /// The scopes asked for (the app's own when none), if the app registered them.
    static func requestedScopes(_ text: String?, of app: OAuthStore.App) throws -> OAuthScopes {
        guard let text, !text.isEmpty else { return app.scopes }
        guard let scopes = OAuthScopes(text), app.scopes.covers(scopes) else {
            throw OAuthError(
                "invalid_scope", "The requested scope is invalid, unknown, or malformed.")
        }
        return scopes
    }

    private static func tokenResponse(_ token: String, scopes: OAuthScopes) throws -> Response {
        try MastodonJSON.response(
            Mastodon.Token(
                accessToken: token, tokenType: "Bearer", scope: scopes.description,
                createdAt: Timestamp.now.milliseconds / 1000),
            headers: [.cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"])
    }

    @Sendable func revoke(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        guard let client = client(request, params),
            let app = try await oauth.app(clientID: client.id, secret: client.secret ?? "")
        else {
            throw OAuthError(
                "unauthorized_client", "You are not authorized to revoke this token", status: .forbidden)
        }
        if let token = params.string("token") { try await oauth.revoke(token: token, app: app, accounts: accounts) }
        return try MastodonJSON.response([String: String]())
    }

    // MARK: metadata

    @Sendable func metadata(_ request: Request, context: PlazaContext) async throws -> Response {
        struct Metadata: Encodable {
            var issuer: String
            var serviceDocumentation = "https://docs.joinmastodon.org/"
            var authorizationEndpoint: String
            var tokenEndpoint: String
            var appRegistrationEndpoint: String
            var revocationEndpoint: String
            var scopesSupported: [String]
            var responseTypesSupported = ["code"]
            var responseModesSupported = ["query", "fragment"]
            var codeChallengeMethodsSupported = ["S256"]
            var grantTypesSupported = ["authorization_code", "client_credentials"]
            var tokenEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post", "none"]
        }
        let scopes =
            OAuthScopes.topLevel
            + OAuthScopes.granular.keys.sorted().flatMap { top in
                OAuthScopes.granular[top, default: []].map { "\(top):\($0)" }
            }
        return try MastodonJSON.response(
            Metadata(
                issuer: baseURL + "/", authorizationEndpoint: baseURL + "/oauth/authorize",
                tokenEndpoint: baseURL + "/oauth/token", appRegistrationEndpoint: baseURL + "/api/v1/apps",
                revocationEndpoint: baseURL + "/oauth/revoke", scopesSupported: scopes))
    }
}

/// An OAuth error at `/oauth/…` (RFC 6749 §5.2): `{"error": code, "error_description": text}`.
struct OAuthError: Error {
    let code: String
    let description: String
    var status: HTTPResponse.Status = .badRequest

    init(_ code: String, _ description: String, status: HTTPResponse.Status = .badRequest) {
        self.code = code
        self.description = description
        self.status = status
    }

    static let invalidClient = OAuthError(
        "invalid_client",
        "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.",
        status: .unauthorized)
}

struct OAuthErrorMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as OAuthError {
            return try MastodonJSON.response(
                ["error": error.code, "error_description": error.description], status: error.status,
                headers: [.cacheControl: "no-store"])
        } catch let error as PlazaError {
            return try MastodonJSON.response(
                ["error": "invalid_request", "error_description": error.message], status: error.status,
                headers: [.cacheControl: "no-store"])
        }
    }
}
