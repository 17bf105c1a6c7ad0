import OpenAPIKit

extension OpenAPIDocument {
    /// Accounts and sessions: sign-up, sign-in, two-factor, email, password, profile, preferences, export, sessions.
    static var accountOperations: [(String, Operation)] {
        [
            authRegisterOperations, meTwoFactorOperations, meEmailVerificationOperations, meOperations,
            mePreferencesOperations,
        ].flatMap { $0 }
    }

    private static var authRegisterOperations: [(String, Operation)] {
        [
            (
                "\(v1)/auth/register",
                Operation(
                    method: .post,
                    summary: """
                        Create an account and sign in, as the registration mode (GET /about) allows: 201 signed in; \
                        202 {"status": "pending"} when an admin must approve it first; 403 registrations_closed, \
                        or invite_required without a valid invite
                        """,
                    auth: .none, body: "RegisterRequest", status: 201, otherSuccess: [202: ref("PendingRegistration")],
                    response: ref("AuthResponse"), errors: [403, 409], links: userLinks
                )
            ),
            (
                "\(v1)/auth/login",
                Operation(
                    method: .post,
                    summary: """
                        Sign in with username or email; throttled after failures (429 with Retry-After). With \
                        two-factor sign-in on, a right password gets 401 `second_factor_required` with a `challenge`
                        """,
                    auth: .none, query: [Params.deviceToken], body: "LoginRequest", response: ref("AuthResponse"))
            ),
            (
                "\(v1)/auth/login/second-factor",
                Operation(
                    method: .post,
                    summary: """
                        Complete a sign-in with a code from the authenticator app (each once) or a recovery code; \
                        5 codes per challenge, which lasts 5 minutes; wrong codes are throttled like passwords
                        """,
                    auth: .none, query: [Params.deviceToken], body: "SecondFactorRequest",
                    response: ref("AuthResponse"),
                    errors: [422])
            ),
            (
                "\(v1)/me/two-factor",
                Operation(
                    method: .get, summary: "Whether two-factor sign-in is on, and recovery codes left", auth: .required,
                    response: ref("TwoFactorStatus"))
            ),
            (
                "\(v1)/me/two-factor",
                Operation(
                    method: .post,
                    summary: """
                        Begin two-factor sign-in: a new secret for an authenticator app, as text, as an otpauth URL \
                        and as its QR code (an SVG document the server draws); 409 when it is on
                        """,
                    auth: .required, query: [Params.deviceToken], body: "CurrentPasswordRequest",
                    response: ref("TwoFactorSetup"), errors: [403, 409])
            ),
        ]
    }

    private static var meTwoFactorOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/two-factor",
                Operation(
                    method: .put,
                    summary: "Turn two-factor sign-in on with a code from the app; returns 10 one-time recovery codes",
                    auth: .required, body: "ConfirmTwoFactorRequest", response: ref("RecoveryCodes"), errors: [409])
            ),
            (
                "\(v1)/me/two-factor",
                Operation(
                    method: .delete, summary: "Turn two-factor sign-in off", auth: .required,
                    query: [Params.deviceToken], body: "CurrentPasswordRequest", status: 204, errors: [403])
            ),
            (
                "\(v1)/me/two-factor/recovery-codes",
                Operation(
                    method: .post, summary: "New recovery codes; the old ones stop working", auth: .required,
                    query: [Params.deviceToken], body: "CurrentPasswordRequest", response: ref("RecoveryCodes"),
                    errors: [403, 409])
            ),
            (
                "\(v1)/auth/password/forgot",
                Operation(
                    method: .post,
                    summary: """
                        Mail a link to choose a new password (valid 1 hour, once). 202 whether or not an account \
                        has the address; an account gets at most one such mail a minute and five an hour
                        """,
                    auth: .none, body: "ForgotPasswordRequest", status: 202, errors: [422])
            ),
            (
                "\(v1)/auth/password/reset",
                Operation(
                    method: .post,
                    summary: """
                        Set a new password with the mailed token and sign in; every other session ends. 400 \
                        `invalid_link` for an unknown, used or expired token; with two-factor sign-in on, 401 \
                        `second_factor_required` with a `challenge` (the password is changed)
                        """,
                    auth: .none, query: [Params.deviceToken], body: "ResetPasswordRequest",
                    response: ref("AuthResponse"), errors: [400, 422])
            ),
            (
                "\(v1)/auth/email/verify",
                Operation(
                    method: .post,
                    summary: """
                        Confirm an address with the mailed token (valid 24 hours, once); a new address from \
                        `PUT /me/email` replaces the old one, which is told. 400 `invalid_link`; 409 when another \
                        account has taken the address meanwhile
                        """,
                    auth: .none, body: "VerifyEmailRequest", status: 204, errors: [400, 409])
            ),
        ]
    }

    private static var meEmailVerificationOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/email/verification",
                Operation(
                    method: .post,
                    summary: """
                        Mail the confirmation link again (to the pending new address if there is one); 409 when \
                        confirmed, 429 within a minute of the last one
                        """,
                    auth: .required, status: 202, errors: [409])
            ),
            (
                "\(v1)/me/email",
                Operation(
                    method: .put,
                    summary: """
                        Change the address: a link goes to the new one, which becomes the account's when opened \
                        (`pendingEmail` until then). 204 when it is the current address (a pending change is \
                        dropped); 409 when another account has it
                        """,
                    auth: .required, query: [Params.deviceToken], body: "ChangeEmailRequest", status: 202,
                    errors: [403, 409])
            ),
            (
                "\(v1)/admin/mail",
                Operation(
                    method: .get,
                    summary: "The mail outbox, newest first, without bodies (admins only); `state` filters it",
                    auth: .required, query: [Params.limit, Params.cursor, Params.mailState],
                    response: pageOf("OutgoingMail"), errors: [403])
            ),
            (
                "\(v1)/auth/logout",
                Operation(
                    method: .post, summary: "Revoke this session's token", auth: .required, status: 204)
            ),
            ("\(v1)/me", Operation(method: .get, summary: "The signed-in user", auth: .required, response: ref("Me"))),
            (
                "\(v1)/me",
                Operation(
                    method: .patch,
                    summary: "Edit my profile; null clears the status; unlocking accepts pending follow requests",
                    auth: .required,
                    body: "UpdateMeRequest", response: ref("Me"))
            ),
        ]
    }

    private static var meOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me",
                Operation(
                    method: .delete,
                    summary: """
                        Delete my account after my current password: it is hidden and every session ends now; \
                        after the grace period (`PLAZA_ACCOUNT_DELETION_GRACE_DAYS`, 30 days) it goes with \
                        everything only mine, media files included. Signing in before then keeps it. 403 for an admin
                        """,
                    auth: .required, query: [Params.deviceToken], body: "CurrentPasswordRequest", status: 202,
                    response: ref("AccountDeletionScheduled"), errors: [403])
            ),
            (
                "\(v1)/me/export",
                Operation(
                    method: .get,
                    summary: """
                        My data as a ZIP archive readable without Plaza: account, posts, comments, likes, follows, \
                        collections, spaces and history as JSON, my media files, and an index.html. 429 while the \
                        server makes two others
                        """,
                    auth: .required, zip: true)
            ),
            (
                "\(v1)/me/password",
                Operation(
                    method: .put,
                    summary: """
                        Change my password; revokes my other sessions; wrong current passwords are throttled like \
                        sign-in
                        """,
                    auth: .required, query: [Params.deviceToken], body: "ChangePasswordRequest", status: 204,
                    errors: [403])
            ),
            (
                "\(v1)/me/preferences",
                Operation(
                    method: .get, summary: "My app preferences", auth: .required, response: ref("Preferences"))
            ),
            (
                "\(v1)/me/preferences",
                Operation(
                    method: .put, summary: "Replace my app preferences (a JSON object, at most 4 KB)", auth: .required,
                    body: "Preferences", response: ref("Preferences"))
            ),
        ]
    }

    private static var mePreferencesOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/preferences",
                Operation(
                    method: .patch,
                    summary: """
                        Change some of my app preferences: a JSON merge patch (RFC 7396; null removes a key). \
                        `push` switches pushes per notification kind, e.g. {"push": {"like": false}}
                        """,
                    auth: .required, body: "Preferences", response: ref("Preferences"))
            ),
            (
                "\(v1)/me/avatar",
                Operation(
                    method: .put, summary: "Make one of my unused uploads my avatar (null removes it)", auth: .required,
                    body: "SetAvatarRequest", response: ref("Me"))
            ),
            (
                "\(v1)/me/sessions",
                Operation(
                    method: .get, summary: "My sessions", auth: .required, response: pageOf("Session"))
            ),
            (
                "\(v1)/me/sessions/{id}",
                Operation(
                    method: .delete, summary: "Revoke one of my sessions", auth: .required, status: 204, errors: [404])
            ),
        ]
    }
}
