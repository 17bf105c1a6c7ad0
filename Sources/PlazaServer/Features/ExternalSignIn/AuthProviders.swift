import Configuration
import Foundation

/// A sign-in provider an operator configured: any OpenID Connect provider, or a preset for
/// Apple, Google or Facebook with their addresses filled in. Every address can be overridden
/// (tests point them at loopback).
public struct AuthProvider: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case oidc, apple, google, facebook }

    /// In URLs and settings: 1–32 lower-case letters and digits.
    public var id: String
    /// On the buttons: "Continue with <name>".
    public var name: String
    public var kind: Kind
    /// The OpenID Connect issuer; its discovery document is `<issuer>/.well-known/openid-configuration`
    /// unless `discoveryURL` says otherwise.
    public var issuer: String
    public var discoveryURL: String?
    public var clientID: String
    public var clientSecret: String?
    public var scopes: [String]
    /// More audiences accepted in ID tokens that native apps exchange: an iOS app's bundle id
    /// (Apple) or its own client id (Google).
    public var audiences: [String] = []
    /// Sign in with Apple: the client secret is a JWT signed with this key (.p8 file), made anew as needed.
    public var teamID: String?
    public var keyID: String?
    public var privateKeyFile: String?
    /// Facebook's web sign-in is OAuth 2 plus its Graph API, not OpenID Connect.
    public var authorizationURL: String?
    public var tokenURL: String?
    public var graphURL: String?

    public init(id: String, kind: Kind, clientID: String) {
        self.id = id
        self.kind = kind
        self.clientID = clientID
        switch kind {
        case .oidc:
            name = id.prefix(1).uppercased() + id.dropFirst()
            issuer = ""
            scopes = ["openid", "email", "profile"]
        case .google:
            name = "Google"
            issuer = "https://accounts.google.com"
            scopes = ["openid", "email", "profile"]
        case .apple:
            name = "Apple"
            issuer = "https://appleid.apple.com"
            scopes = ["name", "email"]
        case .facebook:
            name = "Facebook"
            // Limited Login's ID tokens; the web sign-in below uses OAuth 2 and Graph.
            issuer = "https://www.facebook.com"
            discoveryURL = "https://limited.facebook.com/.well-known/openid-configuration/"
            scopes = ["email", "public_profile"]
            authorizationURL = "https://www.facebook.com/v19.0/dialog/oauth"
            tokenURL = "https://graph.facebook.com/v19.0/oauth/access_token"
            graphURL = "https://graph.facebook.com/v19.0"
        }
    }

    var metadataURL: String {
        discoveryURL ?? (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer)
            + "/.well-known/openid-configuration"
    }

    /// Every audience an ID token may be for.
    var acceptedAudiences: [String] { [clientID] + audiences }

    /// The settings of `PLAZA_AUTH_PROVIDERS` (ids, comma-separated) and
    /// `PLAZA_AUTH_<ID>_CLIENT_ID`, `…_CLIENT_SECRET`, … for each, or of a JSON file
    /// (`PLAZA_AUTH_PROVIDERS_FILE`: an array of objects with the same keys in camel case).
    /// `reader` is scoped to `plaza`.
    static func read(from reader: ConfigReader) throws -> [AuthProvider] {
        var providers: [AuthProvider] = []
        if let path = reader.string(forKey: "auth.providers.file"), !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError("auth-providers-file: cannot read \(path).")
            }
            let entries: [FileEntry]
            do {
                entries = try JSONDecoder().decode([FileEntry].self, from: data)
            } catch {
                throw ConfigurationError("auth-providers-file: \(path) is not a JSON array of providers: \(error)")
            }
            providers += try entries.map { try $0.provider() }
        }
        let ids = reader.string(forKey: "auth.providers", default: "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        for id in ids {
            func value(_ key: String) -> String? {
                reader.string(forKey: ConfigKey("auth.\(id).\(key)")).flatMap { $0.isEmpty ? nil : $0 }
            }
            let entry = FileEntry(
                id: id, kind: value("kind"), name: value("name"), issuer: value("issuer"),
                discoveryURL: value("discovery.url"), clientId: value("client.id") ?? "",
                clientSecret: value("client.secret"),
                scopes: value("scopes")?.split(separator: " ").map(String.init),
                audiences: value("audiences")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
                teamId: value("team.id"), keyId: value("key.id"), privateKeyFile: value("private.key.file"),
                authorizationURL: value("authorization.url"), tokenURL: value("token.url"), graphURL: value("graph.url")
            )
            providers.append(try entry.provider())
        }
        guard Set(providers.map(\.id)).count == providers.count else {
            throw ConfigurationError("auth providers: each id may be configured once.")
        }
        return providers
    }

    /// One provider as the file and the environment give it.
    struct FileEntry: Decodable {
        var id: String
        var kind: String?
        var name: String?
        var issuer: String?
        var discoveryURL: String?
        var clientId: String
        var clientSecret: String?
        var scopes: [String]?
        var audiences: [String]?
        var teamId: String?
        var keyId: String?
        var privateKeyFile: String?
        var authorizationURL: String?
        var tokenURL: String?
        var graphURL: String?

        func provider() throws -> AuthProvider {
            guard (1...32).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber) }) else {
                throw ConfigurationError("auth provider id \(id) must be 1 to 32 lower-case letters and digits.")
            }
            let kindName = kind ?? (Kind(rawValue: id) != nil ? id : "oidc")
            guard let kind = Kind(rawValue: kindName) else {
                throw ConfigurationError("auth provider \(id): kind must be oidc, apple, google or facebook.")
            }
            guard !clientId.isEmpty else { throw ConfigurationError("auth provider \(id) needs a client id.") }
            var provider = AuthProvider(id: id, kind: kind, clientID: clientId)
            if let name { provider.name = name }
            if let issuer { provider.issuer = issuer }
            if let discoveryURL { provider.discoveryURL = discoveryURL }
            provider.clientSecret = clientSecret
            if let scopes { provider.scopes = scopes }
            provider.audiences = audiences ?? []
            provider.teamID = teamId
            provider.keyID = keyId
            provider.privateKeyFile = privateKeyFile
            if let authorizationURL { provider.authorizationURL = authorizationURL }
            if let tokenURL { provider.tokenURL = tokenURL }
            if let graphURL { provider.graphURL = graphURL }
            guard !provider.issuer.isEmpty else {
                throw ConfigurationError("auth provider \(id) needs an issuer (its OpenID Connect address).")
            }
            for url in [provider.metadataURL, provider.authorizationURL, provider.tokenURL, provider.graphURL]
                .compactMap({ $0 })
            {
                guard let parsed = URL(string: url), ["https", "http"].contains(parsed.scheme ?? ""),
                    parsed.host != nil
                else { throw ConfigurationError("auth provider \(id): \(url) is not an http(s) URL.") }
            }
            switch kind {
            case .apple:
                guard provider.teamID != nil, provider.keyID != nil, let file = provider.privateKeyFile else {
                    throw ConfigurationError(
                        "auth provider \(id) (Apple) needs a team id, a key id and a private key file.")
                }
                guard FileManager.default.isReadableFile(atPath: file) else {
                    throw ConfigurationError("auth provider \(id): cannot read the private key file \(file).")
                }
            case .facebook, .google:
                guard provider.clientSecret != nil else {
                    throw ConfigurationError("auth provider \(id) needs a client secret.")
                }
            case .oidc: break
            }
            return provider
        }
    }
}
