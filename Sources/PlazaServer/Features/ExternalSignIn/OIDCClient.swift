import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// What Plaza reads from a provider's discovery document.
struct OIDCMetadata: Decodable, Sendable {
    var issuer: String
    var authorizationEndpoint: String?
    var tokenEndpoint: String?
    var jwksURI: String
    var signingAlgorithms: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case signingAlgorithms = "id_token_signing_alg_values_supported"
    }
}

/// The claims Plaza reads from an ID token. Signature and expiry are checked by `verify`;
/// issuer, audience and nonce by `OIDCClient.verify`.
struct IDTokenClaims: JWTPayload, Equatable {
    var iss: String
    var sub: String
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim?
    var nonce: String?
    var email: String?
    /// A boolean, or (Apple) the string "true".
    var emailVerified: BoolClaim?
    var name: String?
    var preferredUsername: String?
    var givenName: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, email, name
        case emailVerified = "email_verified"
        case preferredUsername = "preferred_username"
        case givenName = "given_name"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired(currentDate: Date())
    }
}

/// Why a sign-in with a provider was refused.
enum ProviderError: Error, Equatable, CustomStringConvertible {
    /// The ID token is not one Plaza may accept: the reason, for the log and the client.
    case invalidToken(String)
    /// The provider could not be reached or answered nonsense.
    case unavailable(String)

    var description: String {
        switch self {
        case .invalidToken(let reason): "invalid ID token: \(reason)"
        case .unavailable(let reason): "provider unavailable: \(reason)"
        }
    }
}

/// The header fields of a JWT that choose its key, read strictly before any key is: the token
/// is three base64url parts, the header a JSON object with a string `alg` and optional `kid`.
struct JWTHeaderFields: Equatable, Decodable {
    var alg: String
    var kid: String?

    static let maxTokenBytes = 16 * 1024

    static func parse(_ token: String) -> JWTHeaderFields? {
        guard token.utf8.count <= maxTokenBytes else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }), let header = ByteText.bytes(base64url: parts[0])
        else { return nil }
        return try? JSONDecoder().decode(JWTHeaderFields.self, from: Data(header))
    }
}

/// One provider's OpenID Connect side: its discovery document and signing keys, fetched on
/// first use and cached; the keys fetched again when a token names a key Plaza has not seen
/// (providers rotate them), at most once a minute.
actor OIDCClient {
    let provider: AuthProvider
    let http: HTTPClient
    private var metadata: OIDCMetadata?
    private var keys = JWTKeyCollection()
    private var knownKeyIDs: Set<String> = []
    private var keysLoaded = false
    private var hasUnnamedKeys = false
    /// When a token naming an unseen key last made Plaza fetch the keys again.
    private var refetchedAt: ContinuousClock.Instant?
    static let refetchInterval: Duration = .seconds(60)
    static let supportedAlgorithms: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
    ]

    init(provider: AuthProvider, http: HTTPClient = .shared) {
        self.provider = provider
        self.http = http
    }

    func discovery() async throws -> OIDCMetadata {
        if let metadata { return metadata }
        let fetched: OIDCMetadata = try await Self.fetchJSON(provider.metadataURL, http: http)
        // OpenID Connect Discovery 4.3: the document must name the issuer it was asked for.
        guard Self.sameIssuer(fetched.issuer, provider.issuer) else {
            throw ProviderError.unavailable("its discovery document names issuer \(fetched.issuer)")
        }
        metadata = fetched
        return fetched
    }

    static func sameIssuer(_ a: String, _ b: String) -> Bool {
        func trimmed(_ text: String) -> Substring { text.hasSuffix("/") ? text.dropLast() : Substring(text) }
        return trimmed(a) == trimmed(b)
    }

    /// Checks an ID token: its signature against the provider's keys, `iss`, `aud` (one of
    /// `audiences`), `exp`, and, when `nonce` is given, that the token carries it (as sent, or
    /// its SHA-256 in hex, as Sign in with Apple's native flow does).
    func verify(_ token: String, audiences: [String], nonce: String?) async throws -> IDTokenClaims {
        guard let header = JWTHeaderFields.parse(token) else { throw ProviderError.invalidToken("not a JWT") }
        let metadata = try await discovery()
        let allowed = Self.supportedAlgorithms.intersection(metadata.signingAlgorithms ?? ["RS256"])
        guard allowed.contains(header.alg) else {
            throw ProviderError.invalidToken("algorithm \(header.alg) is not accepted")
        }
        // OpenID Connect Core 10.1 lets a provider with a single key leave `kid` out: then each of
        // its keys is tried. A named key must be one the provider publishes.
        if let kid = header.kid {
            if !knownKeyIDs.contains(kid) { try await refreshKeys(metadata) }
            guard knownKeyIDs.contains(kid) else { throw ProviderError.invalidToken("unknown key \(kid)") }
        } else if !keysLoaded {
            try await refreshKeys(metadata)
        }
        guard !knownKeyIDs.isEmpty || hasUnnamedKeys else {
            throw ProviderError.invalidToken("the provider publishes no usable key")
        }
        let claims: IDTokenClaims
        do {
            claims = try await keys.verify(token, as: IDTokenClaims.self, iteratingKeys: header.kid == nil)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            throw ProviderError.invalidToken("expired")
        } catch {
            throw ProviderError.invalidToken("bad signature or payload")
        }
        // Google's tokens may name their issuer without the scheme (its documentation says to accept both).
        let googleAlias = provider.kind == .google && "https://" + claims.iss == metadata.issuer
        guard Self.sameIssuer(claims.iss, metadata.issuer) || googleAlias else {
            throw ProviderError.invalidToken("wrong issuer")
        }
        guard claims.aud.value.contains(where: audiences.contains) else {
            throw ProviderError.invalidToken("not meant for this server (audience)")
        }
        if let issued = claims.iat?.value, issued > Date().addingTimeInterval(300) {
            throw ProviderError.invalidToken("issued in the future")
        }
        if let nonce {
            let hashed = ByteText.hex(SHA256.hash(data: Data(nonce.utf8)))
            guard let carried = claims.nonce, carried == nonce || carried == hashed else {
                throw ProviderError.invalidToken("wrong nonce")
            }
        }
        return claims
    }

    /// Fetches the keys: the first time, then for a token naming an unseen key at most once
    /// a minute (so made-up key ids cannot make Plaza hammer the provider).
    private func refreshKeys(_ metadata: OIDCMetadata) async throws {
        let now = ContinuousClock.now
        if keysLoaded {
            if let refetchedAt, now - refetchedAt < Self.refetchInterval { return }
            refetchedAt = now
        }
        let jwks: JWKS = try await Self.fetchJSON(metadata.jwksURI, http: http)
        let fresh = JWTKeyCollection()
        var ids: Set<String> = []
        var unnamed = 0
        for (index, published) in jwks.keys.enumerated() {
            var key = published
            // A key without an id gets one of ours (`plaza-unnamed-N`), never one a token can name.
            let kid = key.keyIdentifier?.string ?? "plaza-unnamed-\(index)"
            key.keyIdentifier = JWKIdentifier(string: kid)
            // Keys Plaza cannot use (encryption keys, other types) are skipped, not fatal.
            guard (try? await fresh.add(jwk: key)) != nil else { continue }
            if published.keyIdentifier != nil { ids.insert(kid) } else { unnamed += 1 }
        }
        keys = fresh
        knownKeyIDs = ids
        hasUnnamedKeys = unnamed > 0
        keysLoaded = true
    }

    /// Exchanges an authorization code at the token endpoint (client_secret_post, PKCE).
    func redeem(code: String, redirectURI: String, verifier: String, clientSecret: String?) async throws
        -> TokenResponse
    {
        var endpoint = provider.tokenURL
        if endpoint == nil { endpoint = try await discovery().tokenEndpoint }
        guard let endpoint else { throw ProviderError.unavailable("no token endpoint") }
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("client_id", provider.clientID), ("code_verifier", verifier),
        ]
        if let clientSecret { form.append(("client_secret", clientSecret)) }
        return try await Self.postForm(endpoint, form, http: http)
    }

    struct TokenResponse: Decodable, Sendable {
        var idToken: String?
        var accessToken: String?
        enum CodingKeys: String, CodingKey {
            case idToken = "id_token"
            case accessToken = "access_token"
        }
    }

    static let maxResponseBytes = 1_048_576

    static func fetchJSON<T: Decodable>(_ url: String, http: HTTPClient) async throws -> T {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        return try await send(request, http: http)
    }

    static func postForm<T: Decodable>(_ url: String, _ fields: [(String, String)], http: HTTPClient) async throws -> T
    {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: formEncode(fields)))
        return try await send(request, http: http)
    }

    static func formEncode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }

    private static func send<T: Decodable>(_ request: HTTPClientRequest, http: HTTPClient) async throws -> T {
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(10))
            body = try await response.body.collect(upTo: maxResponseBytes)
        } catch {
            throw ProviderError.unavailable("\(request.url): \(error)")
        }
        guard (200..<300).contains(response.status.code) else {
            throw ProviderError.unavailable("\(request.url) answered \(response.status.code)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer: body))
        } catch {
            throw ProviderError.unavailable("\(request.url) sent something unreadable")
        }
    }
}
