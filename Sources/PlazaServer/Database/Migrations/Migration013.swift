/// Sign-in with other providers (`IdentityStore`).
///
/// - `identities`: a provider's account (`provider`, its `subject`) linked to a person; one
///   provider account signs in to one person; `identities_user` lists a person's.
/// - `auth_flows`: a web sign-in under way, by the SHA-256 of its `state`: the nonce and PKCE
///   verifier sent, where to go after, and whose account to link it to (NULL: sign in). Ten
///   minutes, single use.
/// - `used_nonces`: nonces of ID tokens already exchanged by native apps, until the token
///   expires, so a captured token cannot be exchanged twice.
/// Accounts made by a provider have no password: `password_hash` is '' until they choose one.
enum Migration013 {
    static let migration = Migration(
        version: 13,
        name: "identities",
        statements: [
            """
            CREATE TABLE identities (
                provider TEXT NOT NULL,
                subject TEXT NOT NULL,
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                email TEXT,
                created_at BIGINT NOT NULL,
                last_used_at BIGINT NOT NULL,
                PRIMARY KEY (provider, subject)
            )
            """,
            "CREATE INDEX identities_user ON identities (user_id, provider)",
            """
            CREATE TABLE auth_flows (
                state_hash TEXT PRIMARY KEY,
                provider TEXT NOT NULL,
                nonce TEXT NOT NULL,
                verifier TEXT NOT NULL,
                next TEXT NOT NULL,
                link_user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX auth_flows_expiry ON auth_flows (expires_at)",
            """
            CREATE TABLE used_nonces (
                provider TEXT NOT NULL,
                nonce_hash TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (provider, nonce_hash)
            )
            """,
            "CREATE INDEX used_nonces_expiry ON used_nonces (expires_at)",
        ]
    )
}
