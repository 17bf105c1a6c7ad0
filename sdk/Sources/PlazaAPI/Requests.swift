/// Request and response bodies of the HTTP API v1.

public struct RegisterRequest: Codable, Sendable {
    public var username: String
    public var email: String
    public var password: String
    public var displayName: String?
    /// The device's IANA time zone (`Europe/Berlin`), kept as `preferences.timeZone`.
    public var timeZone: String?
    /// The device's language (a BCP 47 tag, `de-AT`), kept as `preferences.language`.
    public var language: String?
    /// The invite's code, when sign-ups need one (`GET /about`'s `registrations` is `invite`).
    public var invite: String?
    /// Why the person wants to join, for the admins, when sign-ups need approval.
    public var reason: String?
    public init(
        username: String, email: String, password: String, displayName: String? = nil, timeZone: String? = nil,
        language: String? = nil, invite: String? = nil, reason: String? = nil
    ) {
        self.username = username
        self.email = email
        self.password = password
        self.displayName = displayName
        self.timeZone = timeZone
        self.language = language
        self.invite = invite
        self.reason = reason
    }
}

public struct LoginRequest: Codable, Sendable {
    /// Username or email.
    public var login: String
    public var password: String
    public init(login: String, password: String) {
        self.login = login
        self.password = password
    }
}

public struct AuthResponse: Codable, Sendable {
    public var user: Me
    public var token: String
    /// Proof that this client signed in before: send it in the `Plaza-Device-Token` header when
    /// signing in or confirming the password, so other people's wrong guesses do not lock it out.
    @Nullable public var deviceToken: String?
    public init(user: Me, token: String, deviceToken: String? = nil) {
        self.user = user
        self.token = token
        self.deviceToken = deviceToken
    }
}

public struct StatusInput: Codable, Sendable, Hashable {
    public var kind: String
    public var text: String
    public init(kind: String, text: String) {
        self.kind = kind
        self.text = text
    }
}

public struct UpdateMeRequest: Codable, Sendable {
    public var displayName: String?
    public var bio: String?
    /// `null` clears the status.
    public var status: FieldUpdate<StatusInput>
    /// Whether follows need my approval.
    public var locked: Bool?
    public init(
        displayName: String? = nil, bio: String? = nil, status: FieldUpdate<StatusInput> = .keep, locked: Bool? = nil
    ) {
        self.locked = locked
        self.displayName = displayName
        self.bio = bio
        self.status = status
    }
}

public struct ChangePasswordRequest: Codable, Sendable {
    public var currentPassword: String
    public var newPassword: String
    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// `PUT /me/avatar`: one of the caller's unused uploads, or null to remove the avatar.
public struct SetAvatarRequest: Codable, Sendable {
    @Nullable public var mediaId: String?
    public init(mediaId: String?) {
        self.mediaId = mediaId
    }
}

/// `PATCH /me/media/{id}`: the upload's alt text; null or blank removes it.
public struct UpdateMediaRequest: Codable, Sendable {
    @Nullable public var description: String?
    public init(description: String?) {
        self.description = description
    }
}

public struct LinkInput: Codable, Sendable, Hashable {
    public var url: String
    public init(url: String) { self.url = url }
}

public struct ActivityInput: Codable, Sendable, Hashable {
    public var type: String?
    public var emoji: String?
    public var color: String?
    public var progress: Int?
    public init(type: String? = nil, emoji: String? = nil, color: String? = nil, progress: Int? = nil) {
        self.type = type
        self.emoji = emoji
        self.color = color
        self.progress = progress
    }
}

public struct CreatePostRequest: Codable, Sendable {
    public var kind: PostKind
    public var title: String?
    public var body: String?
    public var spaces: [String]?
    public var mediaIds: [String]?
    public var link: LinkInput?
    public var location: Location?
    public var activity: ActivityInput?
    public var price: String?
    /// `public` when left out.
    public var audience: PostAudience?
    /// A warning shown instead of the text and media until opened (at most 500 characters).
    public var contentWarning: String?
    /// Blur the photos and videos until opened.
    public var sensitive: Bool?
    /// A poll to vote in (not with photos or videos).
    public var poll: PollInput?
    public init(
        kind: PostKind, title: String? = nil, body: String? = nil, spaces: [String]? = nil, mediaIds: [String]? = nil,
        link: LinkInput? = nil, location: Location? = nil, activity: ActivityInput? = nil, price: String? = nil,
        audience: PostAudience? = nil, contentWarning: String? = nil, sensitive: Bool? = nil, poll: PollInput? = nil
    ) {
        self.poll = poll
        self.contentWarning = contentWarning
        self.sensitive = sensitive
        self.audience = audience
        self.kind = kind
        self.title = title
        self.body = body
        self.spaces = spaces
        self.mediaIds = mediaIds
        self.link = link
        self.location = location
        self.activity = activity
        self.price = price
    }
}

/// PATCH /posts/{id}: left-out fields stay, `null` clears (title, body, location, price).
public struct UpdatePostRequest: Codable, Sendable {
    public var title: FieldUpdate<String>
    public var body: FieldUpdate<String>
    public var location: FieldUpdate<Location>
    public var price: FieldUpdate<String>
    /// Changes only the given activity fields (usually `progress`).
    public var activity: ActivityInput?
    public var spaces: [String]?
    /// Narrowing takes effect at once, for streams and caches too.
    public var audience: PostAudience?
    public var contentWarning: FieldUpdate<String>
    public var sensitive: Bool?
    /// A new poll replaces the old one (its votes go unless only the end time changed); `null` removes it.
    public var poll: FieldUpdate<PollInput>
    public init(
        title: FieldUpdate<String> = .keep, body: FieldUpdate<String> = .keep, location: FieldUpdate<Location> = .keep,
        price: FieldUpdate<String> = .keep, activity: ActivityInput? = nil, spaces: [String]? = nil,
        audience: PostAudience? = nil, contentWarning: FieldUpdate<String> = .keep, sensitive: Bool? = nil,
        poll: FieldUpdate<PollInput> = .keep
    ) {
        self.poll = poll
        self.contentWarning = contentWarning
        self.sensitive = sensitive
        self.audience = audience
        self.title = title
        self.body = body
        self.location = location
        self.price = price
        self.activity = activity
        self.spaces = spaces
    }
}

public struct CreateCommentRequest: Codable, Sendable {
    public var body: String
    public init(body: String) { self.body = body }
}

// MARK: two-factor sign-in

/// The current password, for `POST` and `DELETE /me/two-factor` and new recovery codes.
/// POST /posts/{id}/recommend: send a post to people who follow me.
public struct RecommendPostRequest: Codable, Sendable {
    /// Their usernames, 1 to 20.
    public var to: [String]
    public init(to: [String]) { self.to = to }
}

public struct CurrentPasswordRequest: Codable, Sendable {
    public var currentPassword: String
    public init(currentPassword: String) { self.currentPassword = currentPassword }
}

/// The answer to `DELETE /me`: when the account goes, unless its owner signs in before then.
public struct AccountDeletionScheduled: Codable, Sendable, Hashable {
    public var deletesAt: Timestamp
    public init(deletesAt: Timestamp) { self.deletesAt = deletesAt }
}

/// The secret to add to an authenticator app: as text, as an `otpauth://` URL, and as that
/// URL's QR code (an SVG document drawn by the server, for apps that scan).
public struct TwoFactorSetup: Codable, Sendable, Hashable {
    public var secret: String
    public var otpauthURL: String
    public var qrCode: String
    public init(secret: String, otpauthURL: String, qrCode: String) {
        self.secret = secret
        self.otpauthURL = otpauthURL
        self.qrCode = qrCode
    }
}

/// `PUT /me/two-factor`: a code from the app, proving it has the secret.
public struct ConfirmTwoFactorRequest: Codable, Sendable {
    public var code: String
    public init(code: String) { self.code = code }
}

/// One-time recovery codes, shown once.
public struct RecoveryCodes: Codable, Sendable, Hashable {
    public var recoveryCodes: [String]
    public init(recoveryCodes: [String]) { self.recoveryCodes = recoveryCodes }
}

/// `GET /me/two-factor`.
public struct TwoFactorStatus: Codable, Sendable, Hashable {
    public var enabled: Bool
    public var recoveryCodesLeft: Int
    public init(enabled: Bool, recoveryCodesLeft: Int) {
        self.enabled = enabled
        self.recoveryCodesLeft = recoveryCodesLeft
    }
}

/// `POST /auth/login/second-factor`: the challenge from the 401 `second_factor_required`
/// answer to the password, and a code from the app or a recovery code.
public struct SecondFactorRequest: Codable, Sendable {
    public var challenge: String
    public var code: String
    public init(challenge: String, code: String) {
        self.challenge = challenge
        self.code = code
    }
}

/// `POST /auth/password/forgot`.
public struct ForgotPasswordRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// `POST /auth/password/reset`: the token from the mailed link and the new password.
public struct ResetPasswordRequest: Codable, Sendable {
    public var token: String
    public var newPassword: String
    public init(token: String, newPassword: String) {
        self.token = token
        self.newPassword = newPassword
    }
}

/// `POST /auth/email/verify`: the token from the mailed link.
public struct VerifyEmailRequest: Codable, Sendable {
    public var token: String
    public init(token: String) { self.token = token }
}

/// `PUT /me/email`: the new address takes effect once a link mailed to it is opened.
public struct ChangeEmailRequest: Codable, Sendable {
    public var email: String
    public var currentPassword: String
    public init(email: String, currentPassword: String) {
        self.email = email
        self.currentPassword = currentPassword
    }
}

/// A message in the outbox, as `GET /admin/mail` lists it (without its body).
public struct OutgoingMail: Codable, Sendable, Hashable {
    public var id: String
    /// `verify_email`, `password_reset`, `email_changed` or `provider_linked`.
    public var kind: String
    public var to: String
    public var subject: String
    /// `pending`, `sent` or `failed` (given up).
    public var state: String
    public var attempts: Int
    public var createdAt: Timestamp
    @Nullable public var sentAt: Timestamp?
    /// When a pending message is tried next.
    @Nullable public var nextAttemptAt: Timestamp?
    @Nullable public var lastError: String?
    public init(
        id: String, kind: String, to: String, subject: String, state: String, attempts: Int, createdAt: Timestamp,
        sentAt: Timestamp?, nextAttemptAt: Timestamp?, lastError: String?
    ) {
        self.id = id
        self.kind = kind
        self.to = to
        self.subject = subject
        self.state = state
        self.attempts = attempts
        self.createdAt = createdAt
        self.sentAt = sentAt
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

/// A sign-in provider this server offers (`GET /auth/providers`).
public struct AuthProviderInfo: Codable, Sendable, Hashable {
    public var id: String
    public var name: String
    /// `oidc` (OpenID Connect: Apple, Google, any other) or `oauth2` (Facebook's web sign-in).
    public var kind: String
    public init(id: String, name: String, kind: String) {
        self.id = id
        self.name = name
        self.kind = kind
    }
}

/// `POST /auth/providers/{id}/token`: what a provider's SDK gave a native app.
public struct ProviderTokenRequest: Codable, Sendable {
    /// An OpenID Connect ID token (Sign in with Apple, Google, Facebook Limited Login).
    public var idToken: String?
    /// A Facebook access token (classic Facebook Login).
    public var accessToken: String?
    /// The nonce the app gave the provider: the token must carry it (or its SHA-256 in hex).
    public var nonce: String?
    public init(idToken: String? = nil, accessToken: String? = nil, nonce: String? = nil) {
        self.idToken = idToken
        self.accessToken = accessToken
        self.nonce = nonce
    }
}

/// A provider account linked to mine (`GET /me/identities`).
public struct LinkedIdentity: Codable, Sendable, Hashable {
    public var provider: String
    public var name: String
    /// The address the provider gave, if any.
    @Nullable public var email: String?
    public var linkedAt: Timestamp
    public var lastUsedAt: Timestamp
    public init(provider: String, name: String, email: String?, linkedAt: Timestamp, lastUsedAt: Timestamp) {
        self.provider = provider
        self.name = name
        self.email = email
        self.linkedAt = linkedAt
        self.lastUsedAt = lastUsedAt
    }
}
