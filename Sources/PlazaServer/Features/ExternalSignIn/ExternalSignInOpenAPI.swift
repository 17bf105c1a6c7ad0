import OpenAPIKit

extension OpenAPIDocument {
    /// Sign-in with other providers (OpenID Connect, Google, Facebook, Apple) and linked identities.
    static var externalSignInOperations: [(String, Operation)] {
        [authProvidersOperations, meIdentitiesProviderOperations].flatMap { $0 }
    }

    private static var authProvidersOperations: [(String, Operation)] {
        [
            (
                "\(v1)/auth/providers",
                Operation(
                    method: .get, summary: "The sign-in providers this server offers besides passwords", auth: .none,
                    response: .array(items: ref("AuthProviderInfo")))
            ),
            (
                "\(v1)/auth/providers/{id}/token",
                Operation(
                    method: .post,
                    summary: """
                        Native apps: exchange the ID token (with the nonce given to the provider; each token once) \
                        or, with Facebook, the access token from the provider's SDK. 201 with a new account, 200 \
                        with an existing one; 401 `invalid_provider_token`, 409 `email_in_use` (an account has the \
                        address: sign in and link instead), 502 `provider_unavailable`; with two-factor sign-in on, \
                        401 `second_factor_required`
                        """,
                    auth: .none, query: [Params.deviceToken], body: "ProviderTokenRequest",
                    response: ref("AuthResponse"), errors: [404, 409, 422, 502])
            ),
            (
                "\(v1)/auth/providers/{id}/start",
                Operation(
                    method: .get,
                    summary: """
                        Web sign-in: 302 to the provider (state, nonce, PKCE S256), `next` a path to return to; \
                        with `link=1` and the page's `csrf` token, links the provider to the signed-in account
                        """,
                    auth: .none, query: [Params.next, Params.link, Params.csrf], status: 302, errors: [403, 502])
            ),
            (
                "\(v1)/auth/providers/{id}/callback",
                Operation(
                    method: .get,
                    summary: "The provider sends the browser back here: signs in (session cookie) or links, then 303",
                    auth: .none, query: [Params.code, Params.state], status: 303, errors: [400, 409, 502],
                    page: true)
            ),
            (
                "\(v1)/auth/providers/{id}/callback",
                Operation(
                    method: .post, summary: "The same, for Sign in with Apple's form_post answer", auth: .none,
                    status: 303, errors: [400, 409, 502], page: true)
            ),
            (
                "\(v1)/me/identities",
                Operation(
                    method: .get, summary: "The provider accounts linked to mine", auth: .required,
                    response: pageOf("LinkedIdentity"))
            ),
        ]
    }

    private static var meIdentitiesProviderOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/identities/{provider}",
                Operation(
                    method: .delete,
                    summary: "Unlink a provider; 409 `last_sign_in_method` when it is the only way to sign in",
                    auth: .required, status: 204, errors: [404, 409])
            )
        ]
    }
}
