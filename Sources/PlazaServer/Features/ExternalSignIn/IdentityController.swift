import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import JWTKit
import Logging
import PlazaAPI

/// Signing in with other providers: the configured ones, each with its OpenID Connect client.
struct SignInProviders: Sendable {
    let providers: [AuthProvider]
    let clients: [String: OIDCClient]
    let http: HTTPClient

    init(_ providers: [AuthProvider], http: HTTPClient = .shared) {
        self.providers = providers
        self.http = http
        clients = Dictionary(uniqueKeysWithValues: providers.map { ($0.id, OIDCClient(provider: $0, http: http)) })
    }

    func provider(_ id: String) throws -> (AuthProvider, OIDCClient) {
        guard let provider = providers.first(where: { $0.id == id }), let client = clients[id] else {
            throw PlazaError.notFound("Sign-in provider")
        }
        return (provider, client)
    }

    /// The client secret to send: configured, or for Sign in with Apple an ES256 JWT made from
    /// the team's key (valid for an hour; Apple allows up to six months).
    static func clientSecret(for provider: AuthProvider) async throws -> String? {
        guard provider.kind == .apple, let teamID = provider.teamID, let keyID = provider.keyID,
            let file = provider.privateKeyFile
        else { return provider.clientSecret }
        let pem = try String(contentsOfFile: file, encoding: .utf8)
        let keys = await JWTKeyCollection().add(ecdsa: try ES256PrivateKey(pem: pem), kid: JWKIdentifier(string: keyID))
        let now = Date()
        return try await keys.sign(
            AppleClientSecret(
                iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: now),
                exp: ExpirationClaim(value: now.addingTimeInterval(3600)),
                aud: AudienceClaim(value: "https://appleid.apple.com"), sub: SubjectClaim(value: provider.clientID)),
            kid: JWKIdentifier(string: keyID))
    }

    struct AppleClientSecret: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var aud: AudienceClaim
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Who a Facebook access token belongs to, from the Graph API's `me`, with the
    /// `appsecret_proof` Facebook asks servers to send (HMAC-SHA256 of the token with the app secret).
    func facebookAccount(_ provider: AuthProvider, accessToken: String) async throws -> ProviderClaims {
        guard let graph = provider.graphURL, let secret = provider.clientSecret else {
            throw PlazaError(.badRequest, "unsupported_token", "This provider does not take access tokens.")
        }
        guard accessToken.utf8.count <= 4096 else { throw ProviderError.invalidToken("too long") }
        let proof = ByteText.hex(
            HMAC<SHA256>.authenticationCode(for: Data(accessToken.utf8), using: SymmetricKey(data: Data(secret.utf8))))
        // The token must be for this app: Graph's debug_token says which app it was issued to.
        let debug: FacebookDebugToken = try await OIDCClient.fetchJSON(
            "\(graph)/debug_token?"
                + OIDCClient.formEncode([
                    ("input_token", accessToken), ("access_token", "\(provider.clientID)|\(secret)"),
                ]), http: http)
        guard debug.data.isValid == true, debug.data.appID == provider.clientID else {
            throw ProviderError.invalidToken("not a valid token for this app")
        }
        let me: FacebookMe = try await OIDCClient.fetchJSON(
            "\(graph)/me?"
                + OIDCClient.formEncode([
                    ("fields", "id,name,email"), ("access_token", accessToken), ("appsecret_proof", proof),
                ]), http: http)
        guard !me.id.isEmpty, me.id == debug.data.userID ?? me.id else {
            throw ProviderError.invalidToken("the token's account does not match")
        }
        // Facebook gives an address only once its owner confirmed it.
        return ProviderClaims(subject: me.id, email: me.email, emailVerified: me.email != nil, name: me.name)
    }

    struct FacebookDebugToken: Decodable {
        struct Data: Decodable {
            var isValid: Bool?
            var appID: String?
            var userID: String?
            enum CodingKeys: String, CodingKey {
                case isValid = "is_valid"
                case appID = "app_id"
                case userID = "user_id"
            }
        }
        var data: Data
    }

    struct FacebookMe: Decodable {
        var id: String
        var name: String?
        var email: String?
    }
}

/// What Plaza keeps of a provider's account at sign-in.
struct ProviderClaims: Sendable, Equatable {
    var subject: String
    var email: String?
    var emailVerified: Bool
    var name: String?
    var preferredUsername: String?

    init(subject: String, email: String?, emailVerified: Bool, name: String?, preferredUsername: String? = nil) {
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
        self.preferredUsername = preferredUsername
    }

    init(_ claims: IDTokenClaims) {
        self.init(
            subject: claims.sub, email: claims.email, emailVerified: claims.emailVerified?.value ?? false,
            name: claims.name ?? claims.givenName, preferredUsername: claims.preferredUsername)
    }
}

/// Sign-in with other providers, for the API and the web pages: native apps exchange the
/// token their provider's SDK gave them; browsers go to the provider and come back.
struct IdentityController: FeatureRoutes {
    let signIn: SignInProviders
    let identities: IdentityStore
    let accounts: AccountsController
    let emails: EmailStore
    /// Where providers send browsers back: `<base>/api/v1/auth/providers/{id}/callback`.
    let baseURL: String

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("auth/providers", use: list)
        routes.post("auth/providers/{id}/token", use: exchange)
        signedIn.get("me/identities", use: linked)
        signedIn.delete("me/identities/{provider}", use: unlink)
        return routes
    }

    @Sendable func list(_ request: Request, context: PlazaContext) async throws -> [AuthProviderInfo] {
        signIn.providers.map {
            AuthProviderInfo(id: $0.id, name: $0.name, kind: $0.kind == .facebook ? "oauth2" : "oidc")
        }
    }

    func redirectURI(_ provider: AuthProvider) -> String { "\(baseURL)/api/v1/auth/providers/\(provider.id)/callback" }

    /// Native apps: 201 with a new account, 200 with an existing one.
    @Sendable func exchange(_ request: Request, context: PlazaContext) async throws -> EditedResponse<AuthResponse> {
        let (provider, client) = try signIn.provider(context.parameters.string("id"))
        let body = try await request.decode(as: ProviderTokenRequest.self, context: context)
        let claims: ProviderClaims
        do {
            if let idToken = body.idToken {
                if let nonce = body.nonce, nonce.isEmpty || nonce.utf8.count > 256 {
                    throw PlazaError.invalid("nonce", "nonce must be 1 to 256 characters.")
                }
                let verified = try await client.verify(
                    idToken, audiences: provider.acceptedAudiences, nonce: body.nonce)
                // A token carrying a nonce is exchanged once; one without cannot be told from a replay.
                guard let nonce = verified.nonce else {
                    throw ProviderError.invalidToken("no nonce: send the nonce given to the provider")
                }
                guard
                    try await identities.useNonce(
                        nonce, provider: provider.id, until: Int64(verified.exp.value.timeIntervalSince1970 * 1000))
                else { throw ProviderError.invalidToken("already used") }
                claims = ProviderClaims(verified)
            } else if let accessToken = body.accessToken {
                claims = try await signIn.facebookAccount(provider, accessToken: accessToken)
            } else {
                throw PlazaError.invalid(
                    "idToken", "Send the idToken (or, with Facebook, the accessToken) from the provider.")
            }
        } catch let error as ProviderError {
            throw Self.plazaError(error, logger: context.logger)
        }
        let (userID, created) = try await signInOrCreate(provider, claims)
        let auth = try await accounts.completeProviderSignIn(userID: userID, request: request, context: context)
        return EditedResponse(status: created ? .created : .ok, response: auth)
    }

    static func plazaError(_ error: ProviderError, logger: Logger) -> PlazaError {
        logger.info("Provider sign-in refused: \(error)")
        switch error {
        case .invalidToken(let reason):
            return PlazaError(
                .unauthorized, "invalid_provider_token", "The provider's token was not accepted: \(reason).",
                field: "idToken")
        case .unavailable:
            return PlazaError(
                .badGateway, "provider_unavailable", "The sign-in provider could not be reached. Try again later.")
        }
    }

    /// The person this provider account signs in to, or a new account made for it (a username
    /// from its name or address; its address, when the provider vouches for it, unless another
    /// account has it: accounts are never joined by address).
    func signInOrCreate(_ provider: AuthProvider, _ claims: ProviderClaims) async throws -> (Int64, Bool) {
        if let userID = try await identities.user(provider: provider.id, subject: claims.subject) {
            return (userID, false)
        }
        let email = claims.emailVerified ? claims.email.flatMap { try? Validate.email($0) } : nil
        if let email, try await accounts.accounts.credentials(login: email) != nil {
            throw PlazaError(
                .conflict, "email_in_use",
                "An account with \(email) exists. Sign in to it, then link \(provider.name) in your settings.")
        }
        // A provider's account joins as any other: refused when sign-ups are closed or need an
        // invite, waiting for approval when they need one.
        let admission = try await accounts.instance.admission(invite: nil, reason: "Signed up with \(provider.name).")
        let displayName = String(
            Validate.trustworthy(claims.name ?? "", lines: false).trimmingCharacters(in: .whitespacesAndNewlines)
                .prefix(60))
        let base = Self.usernameBase(claims)
        for attempt in 0..<20 {
            let username = attempt == 0 ? base : String(base.prefix(24)) + String(Int.random(in: 10...999_999))
            do {
                let userID = try await accounts.accounts.createUser(
                    .init(
                        username: username, email: email ?? "", passwordHash: "",
                        displayName: displayName.isEmpty ? username : displayName, emailVerified: email != nil,
                        identity: .init(provider: provider.id, subject: claims.subject, email: claims.email),
                        admission: admission))
                if case .pending(let reason) = admission {
                    try await accounts.instance.notifyAdmins(ofSignUp: username, reason: reason)
                }
                return (userID, true)
            } catch let error as PlazaError where error.code == AccountStore.usernameTaken.code {
                // Someone signed in with this provider account at the same moment: use theirs.
                if let userID = try await identities.user(provider: provider.id, subject: claims.subject) {
                    return (userID, false)
                }
            }
        }
        throw PlazaError(.conflict, "username_taken", "No free username was found. Try again.")
    }

    /// A username from the provider's preferred username, the address or the name: letters,
    /// digits and underscores, 3 to 30 of them.
    static func usernameBase(_ claims: ProviderClaims) -> String {
        let candidates = [
            claims.preferredUsername, claims.email?.split(separator: "@").first.map(String.init), claims.name,
        ]
        for candidate in candidates.compactMap({ $0 }) {
            let cleaned = String(
                candidate.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }
                    .map(Character.init)
            ).prefix(30)
            if cleaned.count >= 3 { return String(cleaned) }
        }
        return "user"
    }

    @Sendable func linked(_ request: Request, context: SignedInContext) async throws -> Page<LinkedIdentity> {
        let items = try await identities.identities(userID: context.user.userID).map { item in
            LinkedIdentity(
                provider: item.provider,
                name: signIn.providers.first(where: { $0.id == item.provider })?.name ?? item.provider,
                email: item.email, linkedAt: Timestamp(milliseconds: item.createdAt),
                lastUsedAt: Timestamp(milliseconds: item.lastUsedAt))
        }
        return Page(items: items, nextCursor: nil)
    }

    @Sendable func unlink(_ request: Request, context: SignedInContext) async throws -> Response {
        switch try await identities.unlink(
            provider: context.parameters.string("provider"), userID: context.user.userID)
        {
        case .removed: return Response(status: .noContent)
        case .notLinked: throw PlazaError.notFound("Linked sign-in")
        case .lastWayToSignIn:
            throw PlazaError(
                .conflict, "last_sign_in_method",
                "This is your only way to sign in. Set a password or link another provider first.")
        }
    }

    // MARK: the web sign-in

    /// Where to send the browser: the provider's authorization page with a fresh state, nonce
    /// and PKCE challenge (S256); the state goes in a cookie too, so only this browser finishes it.
    func authorizationURL(provider id: String, next: String, linkUserID: Int64?, logger: Logger) async throws -> (
        url: String, state: String
    ) {
        let (provider, client) = try signIn.provider(id)
        let (state, flow) = try await identities.startFlow(provider: provider.id, next: next, linkUserID: linkUserID)
        let challenge = ByteText.base64url(SHA256.hash(data: Data(flow.verifier.utf8)))
        var fields = [
            ("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI(provider)),
            ("scope", provider.scopes.joined(separator: " ")), ("state", state), ("nonce", flow.nonce),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ]
        // Apple posts the answer back when names or addresses are asked for.
        if provider.kind == .apple { fields.append(("response_mode", "form_post")) }
        let endpoint: String
        do {
            if let configured = provider.authorizationURL {
                endpoint = configured
            } else if let discovered = try await client.discovery().authorizationEndpoint {
                endpoint = discovered
            } else {
                throw ProviderError.unavailable("no authorization endpoint")
            }
        } catch let error as ProviderError {
            throw Self.plazaError(error, logger: logger)
        }
        let separator = endpoint.contains("?") ? "&" : "?"
        return (endpoint + separator + OIDCClient.formEncode(fields), state)
    }

    enum WebOutcome {
        case signedIn(AuthResponse, next: String)
        case linked(next: String)
    }

    /// Finishes a web sign-in when the provider sends the browser back with `code` and `state`.
    func finish(
        provider id: String, code: String, state: String, request: Request, context: PlazaContext
    ) async throws -> WebOutcome {
        let (provider, client) = try signIn.provider(id)
        guard let flow = try await identities.takeFlow(state: state, provider: provider.id) else {
            throw PlazaError(
                .badRequest, "sign_in_expired", "This sign-in took too long or was finished already. Try again.")
        }
        let claims: ProviderClaims
        do {
            let secret = try await SignInProviders.clientSecret(for: provider)
            let tokens = try await client.redeem(
                code: code, redirectURI: redirectURI(provider), verifier: flow.verifier, clientSecret: secret)
            if let idToken = tokens.idToken {
                claims = ProviderClaims(
                    try await client.verify(idToken, audiences: [provider.clientID], nonce: flow.nonce))
            } else if provider.kind == .facebook, let accessToken = tokens.accessToken {
                claims = try await signIn.facebookAccount(provider, accessToken: accessToken)
            } else {
                throw ProviderError.unavailable("no ID token in the answer")
            }
        } catch let error as ProviderError {
            throw Self.plazaError(error, logger: context.logger)
        }
        if let userID = flow.linkUserID {
            switch try await identities.link(
                provider: provider.id, subject: claims.subject, email: claims.email, to: userID)
            {
            case .linked:
                try await emails.notifyProviderLinked(userID: userID, provider: provider.name)
            case .alreadyYours: break
            case .taken:
                throw PlazaError(
                    .conflict, "identity_taken",
                    "That \(provider.name) account already signs in to another account here, or you linked another one."
                )
            }
            return .linked(next: flow.next)
        }
        let (userID, _) = try await signInOrCreate(provider, claims)
        return .signedIn(
            try await accounts.completeProviderSignIn(userID: userID, request: request, context: context),
            next: flow.next)
    }
}
