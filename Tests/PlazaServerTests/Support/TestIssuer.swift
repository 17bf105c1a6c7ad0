import Crypto
import Foundation
import Hummingbird
import JWTKit
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing

@testable import PlazaServer

/// An OpenID Connect issuer on 127.0.0.1 for the identity tests: discovery, JWKS, an
/// authorization endpoint that approves at once for `next` (a subject and address the test
/// sets), and a token endpoint that checks the PKCE verifier. It signs with P-256 keys; which
/// keys it publishes, and whether it is up at all, the test decides.
final class TestIssuer: Sendable {
    struct Person: Sendable {
        var subject: String
        var email: String?
        var emailVerified = true
        var name: String? = nil
    }

    struct Grant: Sendable {
        var person: Person
        var clientID: String
        var redirectURI: String
        var challenge: String
        var nonce: String?
    }

    private struct State: Sendable {
        var published: [String: P256.Signing.PrivateKey] = [:]
        var next = Person(subject: "subject-1", email: "ana@provider.test")
        var grants: [String: Grant] = [:]
        var up = true
        var jwksFetches = 0
    }
    private let state = NIOLockedValueBox(State())
    let base: String
    let clientID = "plaza-test-client"
    let facebookAppID = "1234567890"
    /// Access tokens the fake Graph API knows: for which app, and whose.
    let facebookTokens = NIOLockedValueBox<[String: (app: String, person: Person)]>([:])

    /// A Facebook access token for `person`, issued to `app` (this app's id unless told).
    func facebookToken(_ person: Person, app: String? = nil) -> String {
        let token = "EAA\(UUID().uuidString.replacingOccurrences(of: "-", with: ""))"
        facebookTokens.withLockedValue { $0[token] = (app ?? facebookAppID, person) }
        return token
    }

    /// Facebook, its Graph API here (its Limited Login ID tokens are this issuer's).
    var facebook: AuthProvider {
        var provider = AuthProvider(id: "facebook", kind: .facebook, clientID: facebookAppID)
        provider.clientSecret = clientSecret
        provider.issuer = base
        provider.discoveryURL = nil
        provider.graphURL = "\(base)/graph"
        provider.authorizationURL = "\(base)/authorize"
        provider.tokenURL = "\(base)/token"
        return provider
    }
    let clientSecret = "plaza-test-secret"

    private init(base: String) {
        self.base = base
        publish(kid: "key-1")
    }

    /// A key the issuer signs with and lists in its JWKS.
    @discardableResult
    func publish(kid: String) -> P256.Signing.PrivateKey {
        let key = P256.Signing.PrivateKey()
        state.withLockedValue { $0.published[kid] = key }
        return key
    }

    func unpublishAll() { state.withLockedValue { $0.published = [:] } }
    func setUp(_ up: Bool) { state.withLockedValue { $0.up = up } }
    func signInNext(_ person: Person) { state.withLockedValue { $0.next = person } }
    var jwksFetches: Int { state.withLockedValue { $0.jwksFetches } }

    var provider: AuthProvider {
        var provider = AuthProvider(id: "test", kind: .oidc, clientID: clientID)
        provider.issuer = base
        provider.name = "Test ID"
        provider.clientSecret = clientSecret
        provider.audiences = ["com.example.app"]
        return provider
    }

    struct Claims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var nonce: String?
        var email: String?
        var emailVerified: Bool?
        var name: String?
        enum CodingKeys: String, CodingKey {
            case iss, sub, aud, exp, iat, nonce, email, name
            case emailVerified = "email_verified"
        }
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// An ID token; by default valid, for this issuer's client, signed with key-1.
    func idToken(
        _ person: Person? = nil, nonce: String? = "n-\(UUID().uuidString)", audience: String? = nil,
        issuer: String? = nil, expiresIn: TimeInterval = 600, kid: String = "key-1", namingTheKey: Bool = true,
        signingKey: P256.Signing.PrivateKey? = nil
    ) async throws -> String {
        let person = person ?? state.withLockedValue { $0.next }
        let key = try signingKey ?? #require(state.withLockedValue { $0.published[kid] })
        let keys = await JWTKeyCollection().add(
            ecdsa: try ES256PrivateKey(backing: key), kid: namingTheKey ? JWKIdentifier(string: kid) : nil)
        return try await keys.sign(
            Claims(
                iss: issuer ?? base, sub: person.subject, aud: audience ?? clientID,
                exp: ExpirationClaim(value: Date().addingTimeInterval(expiresIn)), iat: IssuedAtClaim(value: Date()),
                nonce: nonce, email: person.email, emailVerified: person.email == nil ? nil : person.emailVerified,
                name: person.name),
            kid: namingTheKey ? JWKIdentifier(string: kid) : nil)
    }

    /// What the provider's authorization page does once the person agrees: a code for the
    /// redirect URI, with the state sent back.
    func approve(_ authorizationURL: String) throws -> (redirect: String, code: String, state: String) {
        let components = try #require(URLComponents(string: authorizationURL))
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value }
        #expect(query["response_type"] == "code" && query["code_challenge_method"] == "S256")
        #expect(
            (query["client_id"] == clientID && query["scope"] == "openid email profile")
                || (query["client_id"] == facebookAppID && query["scope"] == "email public_profile"))
        let code = "code-\(UUID().uuidString)"
        let grant = Grant(
            person: state.withLockedValue { $0.next }, clientID: try #require(query["client_id"]),
            redirectURI: try #require(query["redirect_uri"]), challenge: try #require(query["code_challenge"]),
            nonce: query["nonce"])
        state.withLockedValue { $0.grants[code] = grant }
        return (grant.redirectURI, code, try #require(query["state"]))
    }

    static func run(_ body: @Sendable (TestIssuer) async throws -> Void) async throws {
        let issuer = NIOLockedValueBox<TestIssuer?>(nil)
        let router = Router()
        router.middlewares.add(Availability(issuer: issuer))
        router.get(".well-known/openid-configuration") { _, _ -> Response in
            let base = issuer.withLockedValue { $0?.base } ?? ""
            return json(
                """
                {"issuer":"\(base)","authorization_endpoint":"\(base)/authorize","token_endpoint":"\(base)/token",
                 "jwks_uri":"\(base)/jwks","id_token_signing_alg_values_supported":["ES256","RS256"]}
                """)
        }
        router.get("jwks") { _, _ -> Response in
            guard let issuer = issuer.withLockedValue({ $0 }) else { return Response(status: .notFound) }
            return json(issuer.jwks())
        }
        // Facebook's Graph API as Plaza uses it: debug_token (which app a token is for) and me
        // (which checks the appsecret_proof as Facebook does when the app requires it).
        router.get("graph/debug_token") { request, _ -> Response in
            guard let issuer = issuer.withLockedValue({ $0 }) else { return Response(status: .notFound) }
            let query = request.uri.queryParameters
            guard query["access_token"].map(String.init) == "\(issuer.facebookAppID)|\(issuer.clientSecret)",
                let token = query["input_token"].map(String.init)
            else { return json(#"{"error":{"message":"Invalid OAuth access token","code":190}}"#, status: .badRequest) }
            let user = issuer.facebookTokens.withLockedValue { $0[token] }
            return json(
                #"{"data":{"app_id":"\#(user?.app ?? "")","is_valid":\#(user != nil),"user_id":"\#(user?.person.subject ?? "")"}}"#
            )
        }
        router.get("graph/me") { request, _ -> Response in
            guard let issuer = issuer.withLockedValue({ $0 }) else { return Response(status: .notFound) }
            let query = request.uri.queryParameters
            guard let token = query["access_token"].map(String.init),
                let user = issuer.facebookTokens.withLockedValue({ $0[token] })
            else { return json(#"{"error":{"message":"Invalid OAuth access token","code":190}}"#, status: .badRequest) }
            let proof = ByteText.hex(
                HMAC<SHA256>.authenticationCode(
                    for: Data(token.utf8), using: SymmetricKey(data: Data(issuer.clientSecret.utf8))))
            guard query["appsecret_proof"].map(String.init) == proof else {
                return json(#"{"error":{"message":"Invalid appsecret_proof","code":100}}"#, status: .badRequest)
            }
            let email = user.person.email.map { #","email":"\#($0)""# } ?? ""
            return json(#"{"id":"\#(user.person.subject)","name":"\#(user.person.name ?? "FB User")"\#(email)}"#)
        }
        router.post("token") { request, _ -> Response in
            guard let issuer = issuer.withLockedValue({ $0 }) else { return Response(status: .notFound) }
            let body = String(buffer: try await request.body.collect(upTo: 65_536))
            var form: [String: String] = [:]
            for pair in body.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            return try await issuer.redeem(form)
        }
        try await FixtureServer.serve(router) { base in
            let made = TestIssuer(base: base)
            issuer.withLockedValue { $0 = made }
            try await body(made)
        }
    }

    private func jwks() -> String {
        let keys = state.withLockedValue { state in
            state.jwksFetches += 1
            return state.published
        }
        let entries = keys.sorted { $0.key < $1.key }.map { kid, key in
            let raw = Array(key.publicKey.rawRepresentation)
            return """
                {"kty":"EC","crv":"P-256","use":"sig","alg":"ES256","kid":"\(kid)",\
                "x":"\(ByteText.base64url(raw[0..<32]))","y":"\(ByteText.base64url(raw[32..<64]))"}
                """
        }
        return #"{"keys":[\#(entries.joined(separator: ","))]}"#
    }

    private func redeem(_ form: [String: String]) async throws -> Response {
        guard let code = form["code"], let grant = state.withLockedValue({ $0.grants.removeValue(forKey: code) }),
            form["grant_type"] == "authorization_code", form["client_id"] == grant.clientID,
            form["client_secret"] == clientSecret, form["redirect_uri"] == grant.redirectURI,
            let verifier = form["code_verifier"],
            ByteText.base64url(SHA256.hash(data: Data(verifier.utf8))) == grant.challenge
        else { return Self.json(#"{"error":"invalid_grant"}"#, status: .badRequest) }
        // Facebook's web sign-in is OAuth 2: an access token, no ID token.
        if grant.clientID == facebookAppID {
            return Self.json(
                #"{"access_token":"\#(facebookToken(grant.person))","token_type":"bearer","expires_in":5183944}"#)
        }
        let token = try await idToken(grant.person, nonce: grant.nonce)
        return Self.json(#"{"access_token":"at","token_type":"Bearer","id_token":"\#(token)"}"#)
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Answers 503 to everything while the issuer is down.
    struct Availability: RouterMiddleware {
        let issuer: NIOLockedValueBox<TestIssuer?>
        func handle(
            _ request: Request, context: BasicRequestContext,
            next: (Request, BasicRequestContext) async throws -> Response
        ) async throws -> Response {
            guard issuer.withLockedValue({ $0?.state.withLockedValue { $0.up } }) ?? true else {
                return Response(status: .serviceUnavailable)
            }
            return try await next(request, context)
        }
    }
}
