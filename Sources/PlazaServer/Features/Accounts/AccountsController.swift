import Foundation
import Hummingbird
import PlazaAPI

/// Registration, sign-in and the signed-in user's own account.
struct AccountsController: FeatureRoutes {
    let accounts: AccountStore
    /// For `locked`: unlocking accepts pending follow requests.
    let people: PeopleStore
    let passwords: PasswordHasher
    let throttle: LoginThrottle
    let devices: DeviceTokens
    let media: MediaActions
    let twoFactor: TwoFactorStore
    let emails: EmailStore
    let outbox: MailOutbox
    let deletions: AccountDeletion
    let export: AccountExport
    /// Where archives are made (the uploads folder, which maintenance clears of leftovers).
    let scratch: String
    /// Who may sign up (the registration mode, invites, approvals).
    let instance: InstanceStore
    /// Archives made at once on this server; more wait for a turn (429).
    let exports = ConcurrencyGate(limit: 2)

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.post("auth/register", use: register)
        routes.post("auth/login", use: login)
        routes.post("auth/login/second-factor", use: secondFactor)
        signedIn.post("auth/logout", use: logout)
        signedIn.get("me", use: me)
        signedIn.patch("me", use: updateMe)
        signedIn.delete("me", use: deleteMe)
        signedIn.get("me/export", use: exportMe)
        signedIn.put("me/password", use: changePassword)
        signedIn.put("me/avatar", use: setAvatar)
        signedIn.get("me/preferences", use: preferences)
        signedIn.put("me/preferences", use: setPreferences)
        signedIn.patch("me/preferences", use: patchPreferences)
        signedIn.get("me/sessions", use: sessions)
        signedIn.delete("me/sessions/{id}", use: deleteSession)
        signedIn.get("me/two-factor", use: twoFactorStatus)
        signedIn.post("me/two-factor", use: beginTwoFactor)
        signedIn.put("me/two-factor", use: confirmTwoFactor)
        signedIn.delete("me/two-factor", use: disableTwoFactor)
        signedIn.post("me/two-factor/recovery-codes", use: regenerateRecoveryCodes)
        registerEmail(to: routes)
        return routes
    }

    @Sendable func register(_ request: Request, context: PlazaContext) async throws -> Response {
        let body = try await request.decode(as: RegisterRequest.self, context: context)
        switch try await signUp(body, request: request, context: context) {
        case .signedIn(let auth):
            return try EditedResponse(status: .created, response: auth).response(from: request, context: context)
        case .pending:
            return try EditedResponse(status: .accepted, response: PendingRegistration()).response(
                from: request, context: context)
        }
    }

    /// What a sign-up comes to: an account and its first session, or an account that waits for
    /// an admin's approval (the registration mode `approval`).
    enum SignUpOutcome {
        case signedIn(AuthResponse)
        case pending
    }

    /// Creates the account as the registration mode allows (403 when it does not), and its first
    /// session unless it waits for approval; shared by the API and the web sign-up form.
    func signUp(_ body: RegisterRequest, request: Request, context: PlazaContext) async throws -> SignUpOutcome {
        let admission = try await instance.admission(invite: body.invite, reason: body.reason)
        let username = try Validate.username(body.username)
        let email = try Validate.email(body.email)
        try Validate.password(body.password)
        let displayName = try Validate.displayName(body.displayName) ?? username
        var preferences: [String: JSONValue] = [:]
        if let timeZone = body.timeZone { preferences["timeZone"] = .string(timeZone) }
        if let language = body.language { preferences["language"] = .string(language) }
        let preferencesJSON = try Self.checkedPreferences(.object(preferences))
        let hash = try await passwords.hash(body.password)
        let userID = try await accounts.createUser(
            .init(
                username: username, email: email, passwordHash: hash, displayName: displayName,
                preferences: preferencesJSON, admission: admission))
        do {
            _ = try await emails.sendVerification(userID: userID)
        } catch {
            // The account exists; the person can ask for the mail again from their settings.
            context.logger.warning("Verification mail not queued: \(String(reflecting: error))")
        }
        if case .pending(let reason) = admission {
            do {
                try await instance.notifyAdmins(ofSignUp: username, reason: reason)
            } catch {
                // The sign-up waits in the admins' list all the same.
                context.logger.warning("Admins not told of a sign-up: \(String(reflecting: error))")
            }
            return .pending
        }
        let token = try await accounts.createSession(
            userID: userID, userAgent: request.headers[.userAgent], ip: context.remoteAddress)
        return .signedIn(
            AuthResponse(
                user: try await accounts.me(userID: userID), token: token,
                deviceToken: try await devices.issue(userID: userID)))
    }

    @Sendable func login(_ request: Request, context: PlazaContext) async throws -> AuthResponse {
        try await signIn(
            try await request.decode(as: LoginRequest.self, context: context), request: request, context: context)
    }

    /// Checks the password (throttled, see `LoginThrottle`) and opens a session; shared by the API and the web form.
    func signIn(_ body: LoginRequest, request: Request, context: PlazaContext) async throws -> AuthResponse {
        let login = body.login.trimmingCharacters(in: .whitespaces)
        guard !login.isEmpty, login.count <= 254 else {
            throw PlazaError.invalid("login", "login must be a username or email.")
        }
        guard body.password.count <= 128 else { throw Self.invalidCredentials }
        let account = try await accounts.credentials(login: login)
        let key = LoginThrottle.account(id: account?.id, login: login)
        let client = try await throttleClient(userID: account?.id, request: request, clientKey: context.clientKey)
        if let wait = try await throttle.retryAfter(account: key, client: client) { throw Self.throttled(wait) }
        guard try await passwords.verify(body.password, hash: account?.hash), let account else {
            try await throttle.recordFailure(account: key, client: client)
            throw Self.invalidCredentials
        }
        try await throttle.recordSuccess(account: key, client: client)
        // Told only to whoever knows the password, so a suspension is no clue to guessers.
        guard !account.pending else { throw Self.pendingApproval }
        guard !account.suspended else { throw Self.suspended }
        if try await twoFactor.isEnabled(userID: account.id) {
            throw PlazaError(
                .unauthorized, "second_factor_required",
                "Enter the code from your authenticator app, or a recovery code.",
                challenge: try await twoFactor.challenge(userID: account.id))
        }
        return try await openSession(userID: account.id, request: request, context: context)
    }

    /// Signs in someone a provider vouched for: refused when suspended, and with two-factor
    /// sign-in on, the code is still asked for (401 `second_factor_required` with a challenge).
    func completeProviderSignIn(userID: Int64, request: Request, context: PlazaContext) async throws -> AuthResponse {
        guard try await accounts.maySignIn(userID: userID) else {
            throw try await accounts.isPending(userID: userID) ? Self.pendingApproval : Self.suspended
        }
        if try await twoFactor.isEnabled(userID: userID) {
            throw PlazaError(
                .unauthorized, "second_factor_required",
                "Enter the code from your authenticator app, or a recovery code.",
                challenge: try await twoFactor.challenge(userID: userID))
        }
        return try await openSession(userID: userID, request: request, context: context)
    }

    /// A new session (and device token) for someone who proved who they are.
    func openSession(userID: Int64, request: Request, context: PlazaContext) async throws -> AuthResponse {
        let token = try await accounts.createSession(
            userID: userID, userAgent: request.headers[.userAgent], ip: context.remoteAddress, signingIn: true)
        return AuthResponse(
            user: try await accounts.me(userID: userID), token: token,
            deviceToken: try await devices.issue(userID: userID))
    }

    /// Who is guessing, for the throttle: a device that signed in to `userID` before (a valid
    /// device token in the header or cookie), else an untrusted client at its address.
    func throttleClient(userID: Int64?, request: Request, clientKey: String) async throws -> LoginThrottle.Client {
        if let userID, let device = try await devices.device(DeviceTokens.presented(request), userID: userID) {
            return .trustedDevice(device)
        }
        return .untrusted(address: clientKey)
    }

    /// Checks the signed-in person's current password before a sensitive change, throttled
    /// like sign-in and counting in the same budgets (a stolen session cannot guess freely).
    func checkCurrentPassword(
        _ password: String, field: String = "currentPassword", request: Request, context: SignedInContext
    ) async throws {
        let me = context.user
        let key = LoginThrottle.account(id: me.userID, login: "")
        let client = try await throttleClient(userID: me.userID, request: request, clientKey: context.base.clientKey)
        if let wait = try await throttle.retryAfter(account: key, client: client) { throw Self.throttled(wait) }
        // Someone who signs in only with a provider has no password to check: their session is all there is.
        guard let current = try await accounts.passwordHash(userID: me.userID) else { return }
        guard password.count <= 128, try await passwords.verify(password, hash: current) else {
            try await throttle.recordFailure(account: key, client: client)
            throw PlazaError(.forbidden, "wrong_password", "The current password is not right.", field: field)
        }
        try await throttle.recordSuccess(account: key, client: client)
    }

    static func throttled(_ wait: Int) -> PlazaError {
        PlazaError.rateLimited(
            retryAfter: wait, message: "Too many failed password attempts. Try again in \(wait) seconds.")
    }

    static let pendingApproval = PlazaError(
        .forbidden, "pending_approval",
        "Your sign-up waits for an administrator's approval; you get a mail once decided."
    )
    static let suspended = PlazaError(
        .forbidden, "account_suspended",
        "This account is suspended by the moderators of this server, so it cannot sign in.")

    static let invalidCredentials = PlazaError(
        .unauthorized, "invalid_credentials", "Wrong username, email or password.")

    @Sendable func logout(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        _ = try await accounts.deleteSession(id: me.sessionID, userID: me.userID)
        return Response(status: .noContent)
    }

    @Sendable func me(_ request: Request, context: SignedInContext) async throws -> Me {
        try await accounts.me(userID: context.user.userID)
    }

    @Sendable func setAvatar(_ request: Request, context: SignedInContext) async throws -> Me {
        let me = context.user
        let body = try await request.decode(as: SetAvatarRequest.self, context: context)
        let mediaID = try body.mediaId.map { try Validate.id($0, field: "mediaId") }
        try await media.setAvatar(of: me.userID, to: mediaID, logger: context.logger)
        return try await accounts.me(userID: me.userID)
    }

    @Sendable func updateMe(_ request: Request, context: SignedInContext) async throws -> Me {
        let me = context.user
        let body = try await request.decode(as: UpdateMeRequest.self, context: context)
        let displayName = try body.displayName.map { try Validate.displayName($0, required: true) ?? "" }
        let bio = try body.bio.map { try Validate.bio($0) ?? "" }
        var status = FieldUpdate<StatusInput>.keep
        switch body.status {
        case .keep: break
        case .clear: status = .clear
        case .set(let input):
            let text = try Validate.text(input.text, field: "status.text", max: AccountRules.maxStatusTextLength) ?? ""
            status = .set(StatusInput(kind: try Validate.statusKind(input.kind), text: text))
        }
        try await accounts.updateProfile(userID: me.userID, displayName: displayName, bio: bio, status: status)
        if let locked = body.locked { try await people.setLocked(userID: me.userID, locked) }
        return try await accounts.me(userID: me.userID)
    }

    /// Schedules the account's deletion after the current password (202 with when it will go);
    /// every session ends now, and signing in again before then keeps the account.
    @Sendable func deleteMe(_ request: Request, context: SignedInContext) async throws
        -> EditedResponse<AccountDeletionScheduled>
    {
        let body = try await request.decode(as: CurrentPasswordRequest.self, context: context)
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        let due = try await deletions.request(userID: context.user.userID)
        return EditedResponse(
            status: .accepted, response: AccountDeletionScheduled(deletesAt: Timestamp(milliseconds: due)))
    }

    /// The person's data as a ZIP archive (`AccountExport`), made on demand and streamed; the
    /// file is unlinked once open, so nothing is left behind whatever happens to the download.
    @Sendable func exportMe(_ request: Request, context: SignedInContext) async throws -> Response {
        guard exports.enter() else {
            throw PlazaError.rateLimited(
                retryAfter: 30, message: "Other archives are being made. Try again in a moment.")
        }
        defer { exports.leave() }
        let path = (scratch as NSString).appendingPathComponent(
            "export-\(context.user.userID)-\(UInt64.random(in: 0...UInt64.max)).zip")
        let username = try await export.write(
            userID: context.user.userID, to: path, scratch: scratch, logger: context.logger)
        let body: FileDownload
        do {
            body = try await FileDownload.open(path, unlinking: true)
        } catch {
            unlink(path)
            throw error
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/zip", .contentLength: String(body.size),
                .contentDisposition: "attachment; filename=\"\(AccountExport.fileName(username: username))\"",
            ],
            body: body.body)
    }

    @Sendable func changePassword(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let body = try await request.decode(as: ChangePasswordRequest.self, context: context)
        try Validate.password(body.newPassword, field: "newPassword")
        try await checkCurrentPassword(body.currentPassword, request: request, context: context)
        let hash = try await passwords.hash(body.newPassword)
        try await accounts.setPassword(userID: me.userID, hash: hash, keepingSession: me.sessionID)
        return Response(status: .noContent)
    }

    @Sendable func preferences(_ request: Request, context: SignedInContext) async throws -> JSONValue {
        try await accounts.me(userID: context.user.userID).preferences
    }

    static let maxPreferencesBytes = 4096

    @Sendable func setPreferences(_ request: Request, context: SignedInContext) async throws -> JSONValue {
        let value = try await request.decode(as: JSONValue.self, context: context)
        try await accounts.setPreferences(userID: context.user.userID, json: try Self.checkedPreferences(value))
        return value
    }

    /// A JSON merge patch (RFC 7396): keys set to `null` are removed, objects merge.
    @Sendable func patchPreferences(_ request: Request, context: SignedInContext) async throws -> JSONValue {
        let patch = try await request.decode(as: JSONValue.self, context: context)
        guard case .object = patch else { throw PlazaError.invalid("preferences", "The patch must be a JSON object.") }
        return try await accounts.patchPreferences(
            userID: context.user.userID, patch: patch, check: Self.checkedPreferences)
    }

    /// Preferences as stored: a JSON object of at most `maxPreferencesBytes`, whose `push`, if
    /// any, switches notification kinds on or off (`{"like": false}`).
    @Sendable static func checkedPreferences(_ value: JSONValue) throws -> String {
        guard case .object(let preferences) = value else {
            throw PlazaError.invalid("preferences", "preferences must be a JSON object.")
        }
        if let timeZone = preferences["timeZone"] {
            guard case .string(let name) = timeZone, Validate.timeZone(name) != nil else {
                throw PlazaError.invalid("timeZone", "timeZone must be an IANA time zone name, such as Europe/Berlin.")
            }
        }
        if let language = preferences["language"] {
            guard case .string(let tag) = language, Validate.languageTag(tag) else {
                throw PlazaError.invalid("language", "language must be a language tag, such as de or pt-BR.")
            }
        }
        if let push = preferences["push"] {
            guard case .object(let kinds) = push,
                kinds.allSatisfy({ NotificationKind(rawValue: $0.key) != nil && $0.value.isBool })
            else {
                throw PlazaError.invalid(
                    "push",
                    "push must map notification kinds (\(NotificationKind.allCases.map(\.rawValue).joined(separator: ", "))) to true or false."
                )
            }
        }
        let data = try JSON.encoder.encode(value)
        guard data.count <= Self.maxPreferencesBytes else {
            throw PlazaError.invalid(
                "preferences", "preferences must be at most \(Self.maxPreferencesBytes) bytes of JSON.")
        }
        return String(decoding: data, as: UTF8.self)
    }

    @Sendable func sessions(_ request: Request, context: SignedInContext) async throws -> Page<Session> {
        let me = context.user
        return Page(items: try await accounts.sessions(userID: me.userID, current: me.sessionID), nextCursor: nil)
    }

    @Sendable func deleteSession(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let id = try context.parameters.id("id", "Session")
        guard try await accounts.deleteSession(id: id, userID: me.userID) else { throw PlazaError.notFound("Session") }
        return Response(status: .noContent)
    }
}
