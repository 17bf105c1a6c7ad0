import Hummingbird
import PlazaAPI

/// Two-factor sign-in (`TwoFactorStore`): setting it up and the sign-in's second step.
extension AccountsController {
    static let issuer = "Plaza"

    @Sendable func secondFactor(_ request: Request, context: PlazaContext) async throws -> AuthResponse {
        let body = try await request.decode(as: SecondFactorRequest.self, context: context)
        return try await completeSignIn(body, request: request, context: context)
    }

    /// The second step of a sign-in with two-factor on; shared by the API and the web form.
    /// Wrong codes count in the throttle under the account's own second-factor budgets, so
    /// someone who has the password cannot try codes faster by starting new sign-ins.
    func completeSignIn(_ body: SecondFactorRequest, request: Request, context: PlazaContext) async throws
        -> AuthResponse
    {
        guard !body.code.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw PlazaError.invalid("code", "Enter the code from your authenticator app, or a recovery code.")
        }
        guard let userID = try await twoFactor.challengedUser(token: body.challenge) else { throw Self.challengeGone }
        let key = "2fa:" + LoginThrottle.account(id: userID, login: "")
        let client = try await throttleClient(userID: userID, request: request, clientKey: context.clientKey)
        if let wait = try await throttle.retryAfter(account: key, client: client) { throw Self.throttled(wait) }
        switch try await twoFactor.redeem(token: body.challenge, code: body.code) {
        case .signedIn(let userID, _):
            try await throttle.recordSuccess(account: key, client: client)
            return try await openSession(userID: userID, request: request, context: context)
        case .wrongCode:
            try await throttle.recordFailure(account: key, client: client)
            throw PlazaError(.unauthorized, "invalid_code", "That code is not right.", field: "code")
        case .noChallenge:
            throw Self.challengeGone
        }
    }

    static let challengeGone = PlazaError(
        .unauthorized, "challenge_expired", "This sign-in has expired or had too many wrong codes. Sign in again.")

    @Sendable func twoFactorStatus(_ request: Request, context: SignedInContext) async throws -> TwoFactorStatus {
        let status = try await twoFactor.status(userID: context.user.userID)
        return TwoFactorStatus(enabled: status.enabled, recoveryCodesLeft: status.recoveryCodesLeft)
    }

    @Sendable func beginTwoFactor(_ request: Request, context: SignedInContext) async throws -> TwoFactorSetup {
        let body = try await request.decode(as: CurrentPasswordRequest.self, context: context)
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        return try await beginTwoFactor(userID: context.user.userID)
    }

    func beginTwoFactor(userID: Int64) async throws -> TwoFactorSetup {
        switch try await twoFactor.begin(userID: userID) {
        case .started(let secret):
            let username = try await accounts.me(userID: userID).user.username
            let url = TOTP.url(secret: secret, account: username, issuer: Self.issuer)
            return TwoFactorSetup(
                secret: Base32.encode(secret), otpauthURL: url,
                qrCode: QRCode(url)?.svg(title: "Two-factor key for \(username)") ?? "")
        case .alreadyEnabled:
            throw Self.alreadyEnabled
        }
    }

    @Sendable func confirmTwoFactor(_ request: Request, context: SignedInContext) async throws -> RecoveryCodes {
        let body = try await request.decode(as: ConfirmTwoFactorRequest.self, context: context)
        return try await confirmTwoFactor(userID: context.user.userID, code: body.code)
    }

    func confirmTwoFactor(userID: Int64, code: String) async throws -> RecoveryCodes {
        guard code.utf8.count <= AccountRules.maxCodeLength else { throw Self.wrongSetupCode }
        switch try await twoFactor.confirm(userID: userID, code: code) {
        case .enabled(let codes): return RecoveryCodes(recoveryCodes: codes)
        case .wrongCode: throw Self.wrongSetupCode
        case .notStarted:
            throw PlazaError(.conflict, "two_factor_not_started", "Start setting up two-factor sign-in first.")
        case .alreadyEnabled: throw Self.alreadyEnabled
        }
    }

    @Sendable func disableTwoFactor(_ request: Request, context: SignedInContext) async throws -> Response {
        let body = try await request.decode(as: CurrentPasswordRequest.self, context: context)
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        try await twoFactor.disable(userID: context.user.userID)
        return Response(status: .noContent)
    }

    @Sendable func regenerateRecoveryCodes(_ request: Request, context: SignedInContext) async throws -> RecoveryCodes {
        let body = try await request.decode(as: CurrentPasswordRequest.self, context: context)
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        guard let codes = try await twoFactor.regenerateRecoveryCodes(userID: context.user.userID) else {
            throw PlazaError(.conflict, "two_factor_off", "Two-factor sign-in is off.")
        }
        return RecoveryCodes(recoveryCodes: codes)
    }

    static let alreadyEnabled = PlazaError(
        .conflict, "two_factor_enabled", "Two-factor sign-in is on already. Turn it off first to use another app.")
    static let wrongSetupCode = PlazaError(
        .unprocessableContent, "invalid_code", "That code is not right. Check the app shows codes for Plaza.",
        field: "code")
}
