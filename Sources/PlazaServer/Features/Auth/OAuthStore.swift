import Crypto
import Foundation
import PlazaAPI

/// OAuth 2 as Mastodon speaks it: apps, the codes a person's consent gives them, and app-only
/// tokens. A person's token is a Plaza session that names its app and scopes
/// (`AccountStore.createSession(app:)`). Secrets, codes and tokens are stored as hashes only.
package struct OAuthStore: Sendable {
    let db: Database
    let ids: IDGenerator
    /// How long a code waits to be redeemed (Mastodon: 10 minutes).
    var codeLifetimeMillis: Int64 = 600_000

    /// The out-of-band redirect: the code is shown to the person instead of sent anywhere.
    package static let outOfBand = "urn:ietf:wg:oauth:2.0:oob"

    package struct App: Sendable, Hashable {
        package let id: Int64
        package let clientID: String
        package let name: String
        package let website: String?
        package let redirectURIs: [String]
        package let scopes: OAuthScopes
    }

    // MARK: apps

    /// Registers an app; returns it with its secret, which only this answer shows.
    package func register(name: String, website: String?, redirectURIs: [String], scopes: OAuthScopes) async throws -> (
        app: App, secret: String
    ) {
        let id = ids.next()
        let clientID = SessionToken.make()
        let secret = SessionToken.make()
        let app = App(
            id: id, clientID: clientID, name: name, website: website, redirectURIs: redirectURIs, scopes: scopes)
        try await db.write { db in
            try await db.exec(
                """
                INSERT INTO oauth_apps (id, client_id, client_secret_hash, name, website, redirect_uris, scopes, created_at)
                VALUES (\(bind: id), \(bind: clientID), \(bind: SessionToken.hash(secret)), \(bind: name), \(bind: website),
                        \(bind: redirectURIs.joined(separator: "\n")), \(bind: scopes.description), \(bind: Timestamp.now.milliseconds))
                """)
        }
        return (app, secret)
    }

    private static let appColumns: SQL = "a.id, a.client_id, a.name, a.website, a.redirect_uris, a.scopes"

    private static func app(_ row: Row) throws -> App {
        App(
            id: try row.decode(column: "id", as: Int64.self),
            clientID: try row.decode(column: "client_id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            website: try row.decode(column: "website", as: String?.self),
            redirectURIs: try row.decode(column: "redirect_uris", as: String.self).split(separator: "\n").map(
                String.init),
            scopes: OAuthScopes(try row.decode(column: "scopes", as: String.self)) ?? .defaultScopes)
    }

    /// The app with this client id; with `secret`, only if it is the app's secret.
    package func app(clientID: String, secret: String? = nil) async throws -> App? {
        guard clientID.utf8.count <= 128 else { return nil }
        var sql: SQL = "SELECT \(Self.appColumns) FROM oauth_apps a WHERE a.client_id = \(bind: clientID)"
        if let secret {
            guard secret.utf8.count <= 128 else { return nil }
            sql += " AND a.client_secret_hash = \(bind: SessionToken.hash(secret))"
        }
        let query = sql
        return try await db.read { db in try await db.first(query) }.map(Self.app)
    }

    package func app(id: Int64) async throws -> App? {
        try await db.read { db in
            try await db.first("SELECT \(Self.appColumns) FROM oauth_apps a WHERE a.id = \(bind: id)")
        }.map(Self.app)
    }

    // MARK: codes

    /// A code for `app` to redeem at `/oauth/token` for a token of `user` with `scopes`.
    func issueCode(app: App, user: Int64, redirectURI: String, scopes: OAuthScopes, challenge: String?) async throws
        -> String
    {
        let code = SessionToken.make()
        let expires = Timestamp.now.milliseconds + codeLifetimeMillis
        try await db.write { db in
            try await db.exec(
                """
                INSERT INTO oauth_codes (code_hash, app_id, user_id, redirect_uri, scopes, code_challenge, expires_at)
                VALUES (\(bind: SessionToken.hash(code)), \(bind: app.id), \(bind: user), \(bind: redirectURI),
                        \(bind: scopes.description), \(bind: challenge), \(bind: expires))
                """)
        }
        return code
    }

    /// Redeems a code once: the person and scopes it grants, if it is `app`'s, unexpired, for
    /// the same redirect URI, and (when the authorization asked for PKCE) `verifier` matches.
    /// `requireChallenge`: a client without its secret may redeem only a code asked for with PKCE.
    /// A code is gone after its first use, right or wrong.
    package func redeem(code: String, app: App, redirectURI: String, verifier: String?, requireChallenge: Bool)
        async throws
        -> (
            user: Int64, scopes: OAuthScopes
        )?
    {
        guard code.utf8.count <= 128 else { return nil }
        let now = Timestamp.now.milliseconds
        let row = try await db.write { db in
            try await db.first(
                """
                DELETE FROM oauth_codes WHERE code_hash = \(bind: SessionToken.hash(code))
                RETURNING app_id, user_id, redirect_uri, scopes, code_challenge, expires_at
                """)
        }
        guard let row, try row.decode(column: "app_id", as: Int64.self) == app.id,
            try row.decode(column: "expires_at", as: Int64.self) > now,
            try row.decode(column: "redirect_uri", as: String.self) == redirectURI,
            let scopes = OAuthScopes(try row.decode(column: "scopes", as: String.self))
        else { return nil }
        if let challenge = try row.decode(column: "code_challenge", as: String?.self) {
            guard let verifier, Self.challenge(verifier: verifier) == challenge else { return nil }
        } else if requireChallenge {
            return nil
        }
        return (try row.decode(column: "user_id", as: Int64.self), scopes)
    }

    /// PKCE's S256: the base64url SHA-256 of a verifier of 43–128 unreserved characters (RFC 7636).
    static func challenge(verifier: String) -> String? {
        let bytes = Array(verifier.utf8)
        guard (43...128).contains(bytes.count),
            bytes.allSatisfy({ isUnreserved($0) })
        else { return nil }
        return ByteText.base64url(SHA256.hash(data: Data(bytes)))
    }

    /// RFC 3986's unreserved characters: letters, digits, `-`, `.`, `_`, `~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    // MARK: app tokens

    /// A token that acts as the app alone (`client_credentials`): public reads, and the app's
    /// own `verify_credentials`.
    package func appToken(app: App, scopes: OAuthScopes) async throws -> String {
        let token = SessionToken.make()
        try await db.write { db in
            try await db.exec(
                """
                INSERT INTO oauth_app_tokens (token_hash, app_id, scopes, created_at)
                VALUES (\(bind: SessionToken.hash(token)), \(bind: app.id), \(bind: scopes.description), \(bind: Timestamp.now.milliseconds))
                """)
        }
        return token
    }

    /// The app and scopes of an app-only token.
    package func appCredential(token: String) async throws -> (app: App, scopes: OAuthScopes)? {
        let row = try await db.read { db in
            try await db.first(
                """
                SELECT \(Self.appColumns), t.scopes AS token_scopes FROM oauth_app_tokens t JOIN oauth_apps a ON a.id = t.app_id
                WHERE t.token_hash = \(bind: SessionToken.hash(token))
                """)
        }
        guard let row, let scopes = OAuthScopes(try row.decode(column: "token_scopes", as: String.self)) else {
            return nil
        }
        return (try Self.app(row), scopes)
    }

    /// Revokes a token `app` was given: a person's session or an app token, forgotten at once
    /// by this server's session cache (`accounts`'). Another app's token, or an unknown one, is
    /// left alone (RFC 7009 answers 200 either way).
    package func revoke(token: String, app: App, accounts: AccountStore) async throws {
        if let ended = try await revoke(token: token, app: app) {
            accounts.sessionCache.forget(userID: ended.user, sessionID: ended.session)
        }
    }

    private func revoke(token: String, app: App) async throws -> (user: Int64, session: Int64)? {
        guard token.utf8.count <= 128 else { return nil }
        let hash = SessionToken.hash(token)
        return try await db.write { db in
            try await db.exec(
                "DELETE FROM oauth_app_tokens WHERE token_hash = \(bind: hash) AND app_id = \(bind: app.id)")
            guard
                let row = try await db.first(
                    "DELETE FROM sessions WHERE token_hash = \(bind: hash) AND app_id = \(bind: app.id) RETURNING id, user_id"
                )
            else { return nil }
            return (try row.decode(column: "user_id", as: Int64.self), try row.decode(column: "id", as: Int64.self))
        }
    }
}
