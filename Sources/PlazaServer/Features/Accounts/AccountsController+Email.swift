import Hummingbird
import PlazaAPI

/// Addresses confirmed by mail, changes of address and password resets.
extension AccountsController {
    func registerEmail(to api: RouteCollection<PlazaContext>) {
        api.post("auth/password/forgot", use: forgotPassword)
        api.post("auth/password/reset", use: resetPassword)
        api.post("auth/email/verify", use: verifyEmail)
        let signedIn = api.signedIn
        signedIn.post("me/email/verification", use: sendVerification)
        signedIn.put("me/email", use: changeEmail)
        signedIn.get("admin/mail", use: outgoingMail)
    }

    /// 202 whether or not an account has the address, and whether or not it was throttled: the
    /// answer tells nobody who has an account here.
    @Sendable func forgotPassword(_ request: Request, context: PlazaContext) async throws -> Response {
        let body = try await request.decode(as: ForgotPasswordRequest.self, context: context)
        try await requestReset(email: body.email)
        return Response(status: .accepted)
    }

    func requestReset(email: String) async throws {
        try await emails.requestReset(email: try Validate.email(email))
    }

    @Sendable func resetPassword(_ request: Request, context: PlazaContext) async throws -> AuthResponse {
        let body = try await request.decode(as: ResetPasswordRequest.self, context: context)
        return try await reset(body, request: request, context: context)
    }

    /// Sets the new password and signs in (after the second factor when it is on); shared with the web form.
    func reset(_ body: ResetPasswordRequest, request: Request, context: PlazaContext) async throws -> AuthResponse {
        try Validate.password(body.newPassword, field: "newPassword")
        let token = try Self.mailedToken(body.token)
        let hash = try await passwords.hash(body.newPassword)
        guard let userID = try await emails.resetPassword(token: token, hash: hash) else { throw Self.invalidLink }
        accounts.forgetSessions(of: userID)
        if try await twoFactor.isEnabled(userID: userID) {
            throw PlazaError(
                .unauthorized, "second_factor_required",
                "Your password is changed. Enter the code from your authenticator app, or a recovery code, to sign in.",
                challenge: try await twoFactor.challenge(userID: userID))
        }
        return try await openSession(userID: userID, request: request, context: context)
    }

    @Sendable func verifyEmail(_ request: Request, context: PlazaContext) async throws -> Response {
        let body = try await request.decode(as: VerifyEmailRequest.self, context: context)
        try await verify(token: body.token)
        return Response(status: .noContent)
    }

    func verify(token: String) async throws {
        guard case .verified = try await emails.verify(token: try Self.mailedToken(token)) else {
            throw Self.invalidLink
        }
    }

    @Sendable func sendVerification(_ request: Request, context: SignedInContext) async throws -> Response {
        try Self.check(try await emails.sendVerification(userID: context.user.userID))
        return Response(status: .accepted)
    }

    @Sendable func changeEmail(_ request: Request, context: SignedInContext) async throws -> Response {
        let body = try await request.decode(as: ChangeEmailRequest.self, context: context)
        let email = try Validate.email(body.email)
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        switch try await emails.requestChange(userID: context.user.userID, to: email) {
        case .alreadyVerified: return Response(status: .noContent)
        case let outcome: try Self.check(outcome)
        }
        return Response(status: .accepted)
    }

    private static func check(_ outcome: EmailStore.SendOutcome) throws {
        switch outcome {
        case .sent: return
        case .alreadyVerified:
            throw PlazaError(.conflict, "already_verified", "Your email address is already confirmed.")
        case .noAddress:
            throw PlazaError(.conflict, "no_email", "Your account has no email address yet: add one first.")
        case .tooSoon(let wait):
            throw PlazaError.rateLimited(
                retryAfter: wait, message: "An email was sent a moment ago. Try again in \(wait) seconds.")
        }
    }

    /// The outbox, for admins: `?state=pending|sent|failed`, newest first.
    @Sendable func outgoingMail(_ request: Request, context: SignedInContext) async throws -> Page<OutgoingMail> {
        guard context.user.isAdmin else { throw PlazaError.forbidden }
        let state = request.query("state")
        if let state, !["pending", "sent", "failed"].contains(state) {
            throw PlazaError.invalid("state", "state must be one of: pending, sent, failed.")
        }
        return try await outbox.list(state: state, page: request.pageRequest())
    }

    /// A token from a mailed link: what `SessionToken.make` makes (43 base64url characters).
    static func mailedToken(_ text: String) throws -> String {
        guard text.utf8.count == 43, ByteText.bytes(base64url: text)?.count == 32 else { throw invalidLink }
        return text
    }

    static let invalidLink = PlazaError(
        .badRequest, "invalid_link", "This link is not valid: it was used already or has expired. Ask for a new one.",
        field: "token")
}
