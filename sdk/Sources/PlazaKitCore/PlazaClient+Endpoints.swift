import Foundation
import PlazaAPI

/// Which APNs service a device's token is for: `sandbox` for apps run from Xcode.
public enum APNsEnvironment: String, Sendable, Hashable, Codable {
    case production
    case sandbox
}

/// Which posts a feed shows, newest first.
public enum FeedSource: Sendable, Hashable, Codable {
    case home
    case global
    case user(String)
    case space(String)
    /// A hashtag's public posts (the tag without `#`, as written or folded).
    case tag(String)

    var path: String {
        switch self {
        case .home: "/feed/home"
        case .global: "/feed/global"
        case .user(let username): "/users/\(PlazaClient.segment(username))/posts"
        case .space(let slug): "/spaces/\(PlazaClient.segment(slug))/feed"
        case .tag(let name): "/hashtags/\(PlazaClient.segment(name))/posts"
        }
    }
}

/// Filters of a feed page: kind, and a date range (`since` exclusive, `until` exclusive); for
/// activities, a type (as written) and done or still going.
public struct FeedFilter: Sendable, Hashable {
    public enum Progress: String, Sendable { case done, ongoing }
    public var kind: PostKind?
    public var since: Timestamp?
    public var until: Timestamp?
    public var activityType: String?
    public var progress: Progress?
    public init(
        kind: PostKind? = nil, since: Timestamp? = nil, until: Timestamp? = nil, activityType: String? = nil,
        progress: Progress? = nil
    ) {
        self.kind = kind
        self.since = since
        self.until = until
        self.activityType = activityType
        self.progress = progress
    }

    var query: [String: String?] {
        [
            "kind": kind?.rawValue, "since": since?.description, "until": until?.description,
            "activity": activityType, "progress": progress?.rawValue,
        ]
    }
}

/// `GET /search/posts` parameters.
public struct PostSearch: Sendable {
    public enum Field: String, Sendable { case all, title, body, author, space, place }
    public var text: String?
    public var field: Field
    public var space: String?
    public var kind: PostKind?
    public var near: (latitude: Double, longitude: Double)?
    public var radiusKm: Double?
    /// Only posts by the people I follow ("near me among people I follow").
    public var followed: Bool

    public init(
        text: String? = nil, in field: Field = .all, space: String? = nil, kind: PostKind? = nil,
        near: (latitude: Double, longitude: Double)? = nil, radiusKm: Double? = nil, followed: Bool = false
    ) {
        self.followed = followed
        self.text = text
        self.field = field
        self.space = space
        self.kind = kind
        self.near = near
        self.radiusKm = radiusKm
    }
}

public enum HistorySort: String, Sendable { case viewedAt, postedAt, views }

/// Where a message of the mail outbox is: waiting to be (re)tried, sent, or given up on.
public enum MailState: String, Sendable { case pending, sent, failed }

extension PlazaClient {
    /// A path segment with everything but unreserved characters percent-encoded.
    static func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    // MARK: accounts and sessions

    /// How a sign-up ended: signed in (the token is kept), or waiting for an admin's approval
    /// (the server's `registrations` is `approval`): the person is mailed the decision and signs
    /// in with `login` once approved.
    public enum SignUp: Sendable, Hashable {
        case signedIn(Me)
        case pending
    }

    /// Creates an account as the server's registration mode (`about().registrations`) allows:
    /// an `invite` code where one is needed (it also skips approval), a `reason` for the admins
    /// where they approve sign-ups. A closed server throws `registrations_closed`, a missing or
    /// used-up invite `invite_required`. The device's time zone and language become the
    /// account's `preferences.timeZone` and `language` (the days of its activity heatmap, the
    /// language of the web app, its mails and pushes); pass nil to leave them unset.
    @discardableResult
    public func register(
        username: String, email: String, password: String, displayName: String? = nil,
        timeZone: String? = TimeZone.current.identifier, language: String? = Locale.preferredLanguages.first,
        invite: String? = nil, reason: String? = nil
    ) async throws -> SignUp {
        let response = try await send(
            "POST", "/auth/register",
            body: RegisterRequest(
                username: username, email: email, password: password, displayName: displayName, timeZone: timeZone,
                language: language, invite: invite, reason: reason),
            signingIn: true)
        if response.status == 202 { return .pending }
        let auth = try Self.decoder.decode(AuthResponse.self, from: response.body)
        await tokens.setToken(auth.token)
        return .signedIn(auth.user)
    }

    /// Posts to a route that answers `AuthResponse` and keeps its token.
    private func signIn(_ path: String, _ body: some Encodable & Sendable) async throws -> Me {
        let auth: AuthResponse = try await call("POST", path, body: body, signingIn: true)
        await tokens.setToken(auth.token)
        return auth.user
    }

    /// Signs in with a username or email and keeps the token. With two-factor sign-in on, a
    /// right password throws `PlazaClientError` with code `second_factor_required` and a
    /// `challenge` for `completeLogin(challenge:code:)`.
    @discardableResult
    public func login(_ login: String, password: String) async throws -> Me {
        try await signIn("/auth/login", LoginRequest(login: login, password: password))
    }

    /// The second step of a sign-in with two-factor on: a code from the authenticator app or a
    /// recovery code. A wrong code throws `invalid_code` (the challenge takes 5); an expired or
    /// used-up challenge `challenge_expired` (sign in again).
    @discardableResult
    public func completeLogin(challenge: String, code: String) async throws -> Me {
        try await signIn("/auth/login/second-factor", SecondFactorRequest(challenge: challenge, code: code))
    }

    /// The sign-in providers the server offers besides passwords (for "Continue with …" buttons).
    public func authProviders() async throws -> [AuthProviderInfo] {
        try await call("GET", "/auth/providers", signingIn: true)
    }

    /// Signs in with the ID token a provider's SDK gave the app, e.g. Sign in with Apple's
    /// `identityToken`, and keeps the token; the account is made on first use. `nonce` is the
    /// raw nonce the app gave the provider (Apple's SDK is given its SHA-256; either is checked).
    /// Throws `invalid_provider_token` (401), `email_in_use` (409: an account has the address,
    /// sign in and link instead), `provider_unavailable` (502) or, with two-factor on,
    /// `second_factor_required` for `completeLogin(challenge:code:)`.
    @discardableResult
    public func signIn(provider: String, idToken: String, nonce: String) async throws -> Me {
        try await signIn(
            "/auth/providers/\(Self.segment(provider))/token", ProviderTokenRequest(idToken: idToken, nonce: nonce))
    }

    /// Signs in with a Facebook Login access token (classic Facebook Login; Limited Login gives an ID token).
    @discardableResult
    public func signIn(provider: String, accessToken: String) async throws -> Me {
        try await signIn(
            "/auth/providers/\(Self.segment(provider))/token", ProviderTokenRequest(accessToken: accessToken))
    }

    /// The provider accounts linked to mine.
    public func linkedIdentities() async throws -> [LinkedIdentity] {
        let page: Page<LinkedIdentity> = try await call("GET", "/me/identities")
        return page.items
    }

    /// Unlinks a provider; throws `last_sign_in_method` (409) when it is my only way to sign in.
    public func unlinkIdentity(provider: String) async throws {
        try await send("DELETE", "/me/identities/\(Self.segment(provider))")
    }

    public func twoFactorStatus() async throws -> TwoFactorStatus { try await call("GET", "/me/two-factor") }
    /// Begins setting up two-factor sign-in: the secret to add to an authenticator app.
    public func beginTwoFactor(currentPassword: String) async throws -> TwoFactorSetup {
        try await call("POST", "/me/two-factor", body: CurrentPasswordRequest(currentPassword: currentPassword))
    }
    /// Turns it on with a code from the app; returns the recovery codes (shown once).
    public func confirmTwoFactor(code: String) async throws -> [String] {
        let codes: RecoveryCodes = try await call("PUT", "/me/two-factor", body: ConfirmTwoFactorRequest(code: code))
        return codes.recoveryCodes
    }
    public func disableTwoFactor(currentPassword: String) async throws {
        try await send("DELETE", "/me/two-factor", body: CurrentPasswordRequest(currentPassword: currentPassword))
    }
    public func newRecoveryCodes(currentPassword: String) async throws -> [String] {
        let codes: RecoveryCodes = try await call(
            "POST", "/me/two-factor/recovery-codes", body: CurrentPasswordRequest(currentPassword: currentPassword))
        return codes.recoveryCodes
    }

    // MARK: email and password reset

    /// Asks for a password-reset mail. The server answers the same whether or not an account
    /// has the address (and whether or not it was throttled), so this succeeds either way.
    public func forgotPassword(email: String) async throws {
        try await send(
            "POST", "/auth/password/forgot", body: ForgotPasswordRequest(email: email), signingIn: true)
    }

    /// Sets a new password with the token from a reset link (`/reset-password?token=…`) and signs
    /// in like `login`: every other session of the account ends. With two-factor sign-in on it
    /// throws `second_factor_required` with a `challenge` for `completeLogin(challenge:code:)`
    /// (the password is changed all the same). A used or expired link throws `invalid_link`.
    @discardableResult
    public func resetPassword(token: String, newPassword: String) async throws -> Me {
        try await signIn("/auth/password/reset", ResetPasswordRequest(token: token, newPassword: newPassword))
    }

    /// Confirms an address with the token from a mailed link (`/verify-email?token=…`); needs no
    /// sign-in. A pending change of address takes effect here. A used or expired link throws `invalid_link`.
    public func verifyEmail(token: String) async throws {
        try await send("POST", "/auth/email/verify", body: VerifyEmailRequest(token: token), signingIn: true)
    }

    /// Mails the confirmation link again (to the pending new address, if any). Throws
    /// `already_verified` (409), or 429 `rate_limited` with `retryAfter` when one went out a
    /// moment ago (one a minute, five an hour).
    public func resendEmailVerification() async throws {
        try await send("POST", "/me/email/verification")
    }

    /// Starts a change of address: a link goes to `email`, and `me().pendingEmail` shows it
    /// until the link is opened (`verifyEmail(token:)`); the old address is told once it is.
    /// Changing back to the current address cancels a pending change. Throws `email_taken`
    /// (409) when another account has the address, and 429 `rate_limited` like
    /// `resendEmailVerification()`.
    public func changeEmail(to email: String, currentPassword: String) async throws {
        try await send("PUT", "/me/email", body: ChangeEmailRequest(email: email, currentPassword: currentPassword))
    }

    /// Revokes this session and forgets the token.
    public func logout() async throws {
        try await send("POST", "/auth/logout")
        await tokens.setToken(nil)
    }

    public func me() async throws -> Me { try await call("GET", "/me") }
    @discardableResult
    public func updateMe(_ changes: UpdateMeRequest) async throws -> Me {
        try await call("PATCH", "/me", body: changes)
    }
    public func changePassword(current: String, new: String) async throws {
        try await send("PUT", "/me/password", body: ChangePasswordRequest(currentPassword: current, newPassword: new))
    }
    @discardableResult
    public func setAvatar(mediaID: String?) async throws -> Me {
        try await call("PUT", "/me/avatar", body: SetAvatarRequest(mediaId: mediaID))
    }
    public func preferences() async throws -> JSONValue { try await call("GET", "/me/preferences") }
    @discardableResult
    public func setPreferences(_ preferences: JSONValue) async throws -> JSONValue {
        try await call("PUT", "/me/preferences", body: preferences)
    }
    /// Changes some preferences: a JSON merge patch (keys set to null are removed, objects merge).
    @discardableResult
    public func updatePreferences(_ patch: JSONValue) async throws -> JSONValue {
        try await call("PATCH", "/me/preferences", body: patch)
    }
    public func sessions() async throws -> Page<Session> { try await call("GET", "/me/sessions") }

    // MARK: push

    /// Registers this device for pushes with the token APNs gave the app
    /// (`application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`). Call it on every
    /// launch: the same token again is the same device; a token another account had moves here.
    @discardableResult
    public func registerForPush(
        deviceToken: Data, environment: APNsEnvironment = .production, bundleID: String? = nil
    ) async throws -> PushDevice {
        let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
        return try await registerPushDevice(.apns(token: hex, environment: environment.rawValue, bundleId: bundleID))
    }

    /// Registers an APNs token or a Web Push subscription.
    @discardableResult
    public func registerPushDevice(_ device: RegisterPushDeviceRequest) async throws -> PushDevice {
        try await call("POST", "/me/push-devices", body: device)
    }
    public func pushDevices() async throws -> Page<PushDevice> { try await call("GET", "/me/push-devices") }
    public func removePushDevice(_ id: String) async throws {
        try await send("DELETE", "/me/push-devices/\(Self.segment(id))")
    }
    /// Turns pushes of some kinds of notification on or off (the rest stay as they are).
    @discardableResult
    public func setPushNotifications(_ kinds: [NotificationKind: Bool]) async throws -> JSONValue {
        try await updatePreferences(
            .object([
                "push": .object(Dictionary(uniqueKeysWithValues: kinds.map { ($0.key.rawValue, .bool($0.value)) }))
            ]))
    }
    /// The server's VAPID key, for a Web Push subscription.
    public func webPushKey() async throws -> WebPushKey { try await call("GET", "/push/web-push-key") }
    public func revokeSession(_ id: String) async throws {
        try await send("DELETE", "/me/sessions/\(Self.segment(id))")
    }

    // MARK: people

    public func user(_ username: String) async throws -> User {
        try await call("GET", "/users/\(Self.segment(username))")
    }
    @discardableResult
    public func follow(_ username: String) async throws -> User {
        try await call("PUT", "/users/\(Self.segment(username))/follow")
    }
    @discardableResult
    public func unfollow(_ username: String) async throws -> User {
        try await call("DELETE", "/users/\(Self.segment(username))/follow")
    }
    @discardableResult
    public func block(_ username: String) async throws -> User {
        try await call("PUT", "/users/\(Self.segment(username))/block")
    }
    @discardableResult
    public func unblock(_ username: String) async throws -> User {
        try await call("DELETE", "/users/\(Self.segment(username))/block")
    }
    public func followers(of username: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/users/\(Self.segment(username))/followers", query: page.query)
    }
    public func following(of username: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/users/\(Self.segment(username))/following", query: page.query)
    }
    /// People who follow each other with `username`.
    public func friends(of username: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/users/\(Self.segment(username))/friends", query: page.query)
    }
    /// Hides their posts from my feeds (not from their profile); no block.
    public func mute(_ username: String) async throws {
        try await send("PUT", "/users/\(Self.segment(username))/mute")
    }
    public func unmute(_ username: String) async throws {
        try await send("DELETE", "/users/\(Self.segment(username))/mute")
    }
    /// Locks my account (follows need my approval) or unlocks it, which accepts pending requests.
    @discardableResult
    public func setLocked(_ locked: Bool) async throws -> Me {
        try await updateMe(UpdateMeRequest(locked: locked))
    }
    /// People asking to follow me, newest first.
    public func followRequests(page: PageOptions = .init()) async throws -> Page<JoinRequest> {
        try await call("GET", "/me/follow-requests", query: page.query)
    }
    public func approveFollowRequest(from username: String) async throws {
        try await send("PUT", "/me/follow-requests/\(Self.segment(username))")
    }
    public func denyFollowRequest(from username: String) async throws {
        try await send("DELETE", "/me/follow-requests/\(Self.segment(username))")
    }
    /// The activity heatmap: days in the owner's time zone, or in `timeZone` (an IANA name).
    public func activity(of username: String, days: Int = 365, timeZone: String? = nil) async throws
        -> ActivityHeatmap
    {
        try await call(
            "GET", "/users/\(Self.segment(username))/activity", query: ["days": String(days), "tz": timeZone])
    }

    // MARK: posts, comments, likes

    @discardableResult
    public func createPost(_ post: CreatePostRequest) async throws -> Post {
        try await call("POST", "/posts", body: post)
    }
    public func post(_ id: String) async throws -> Post { try await call("GET", "/posts/\(Self.segment(id))") }
    @discardableResult
    public func updatePost(_ id: String, _ changes: UpdatePostRequest) async throws -> Post {
        try await call("PATCH", "/posts/\(Self.segment(id))", body: changes)
    }
    public func deletePost(_ id: String) async throws { try await send("DELETE", "/posts/\(Self.segment(id))") }
    public func comments(on postID: String, page: PageOptions = .init()) async throws -> Page<Comment> {
        try await call("GET", "/posts/\(Self.segment(postID))/comments", query: page.query)
    }
    @discardableResult
    public func comment(on postID: String, _ body: String) async throws -> Comment {
        try await call("POST", "/posts/\(Self.segment(postID))/comments", body: CreateCommentRequest(body: body))
    }
    public func deleteComment(_ id: String) async throws { try await send("DELETE", "/comments/\(Self.segment(id))") }
    @discardableResult
    public func like(_ postID: String) async throws -> LikeState {
        try await call("PUT", "/posts/\(Self.segment(postID))/like")
    }
    @discardableResult
    public func unlike(_ postID: String) async throws -> LikeState {
        try await call("DELETE", "/posts/\(Self.segment(postID))/like")
    }
    /// Sends a post to people who follow me, who get a `recommendation` notification; all of
    /// them or none (422 `cannot_recommend`).
    public func recommend(_ postID: String, to usernames: [String]) async throws {
        try await send("POST", "/posts/\(Self.segment(postID))/recommend", body: RecommendPostRequest(to: usernames))
    }
    public func likers(of postID: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/posts/\(Self.segment(postID))/likes", query: page.query)
    }

    /// Shares a public post with my followers (422 `not_boostable` for one that is not public);
    /// the post as I now see it.
    @discardableResult
    public func boost(_ postID: String) async throws -> Post {
        try await call("PUT", "/posts/\(Self.segment(postID))/boost")
    }
    @discardableResult
    public func unboost(_ postID: String) async throws -> Post {
        try await call("DELETE", "/posts/\(Self.segment(postID))/boost")
    }
    public func boosters(of postID: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/posts/\(Self.segment(postID))/boosts", query: page.query)
    }
    /// Votes in a post's poll with the options' indexes (one in a single-choice poll); the poll
    /// with its results. 422 `already_voted`, `poll_expired` or `own_poll`.
    @discardableResult
    public func vote(in postID: String, choices: [Int]) async throws -> Poll {
        try await call("POST", "/posts/\(Self.segment(postID))/poll/votes", body: PollVoteRequest(choices: choices))
    }
    /// The post as it reads now, then each version an edit replaced, newest first.
    public func history(of postID: String) async throws -> [PostVersion] {
        let page: Page<PostVersion> = try await call("GET", "/posts/\(Self.segment(postID))/history")
        return page.items
    }

    // MARK: hashtags

    /// A hashtag (without `#`) and whether I follow it.
    public func hashtag(_ name: String) async throws -> HashtagSummary {
        try await call("GET", "/hashtags/\(Self.segment(name))")
    }
    /// Tags that start with `prefix`, for a composer's suggestions.
    public func suggestHashtags(_ prefix: String, limit: Int = 10) async throws -> [HashtagSummary] {
        let page: Page<HashtagSummary> = try await call(
            "GET", "/hashtags", query: ["q": prefix, "limit": String(limit)])
        return page.items
    }
    /// Follows a tag: its public posts come into my home feed.
    public func followHashtag(_ name: String) async throws {
        try await send("PUT", "/hashtags/\(Self.segment(name))/follow")
    }
    public func unfollowHashtag(_ name: String) async throws {
        try await send("DELETE", "/hashtags/\(Self.segment(name))/follow")
    }
    public func followedHashtags() async throws -> [HashtagSummary] {
        let page: Page<HashtagSummary> = try await call("GET", "/me/followed-hashtags")
        return page.items
    }

    // MARK: pins

    /// Pins my post to my profile, or with `inSpace` (a slug; its moderators) to that space's top:
    /// five at most (422 `too_many_pins`).
    @discardableResult
    public func pin(_ postID: String, inSpace space: String? = nil) async throws -> Post {
        try await call("PUT", "/posts/\(Self.segment(postID))/pin", query: ["space": space])
    }
    /// Unpins a post from my profile, or with `inSpace` from that space's top.
    @discardableResult
    public func unpin(_ postID: String, inSpace space: String? = nil) async throws -> Post {
        try await call("DELETE", "/posts/\(Self.segment(postID))/pin", query: ["space": space])
    }
    /// The posts a person pinned to their profile, newest pin first.
    public func pinnedPosts(of username: String) async throws -> [Post] {
        let page: Page<Post> = try await call("GET", "/users/\(Self.segment(username))/pinned")
        return page.items
    }
    /// The posts pinned to a space's top, newest pin first.
    public func pinnedPosts(inSpace slug: String) async throws -> [Post] {
        let page: Page<Post> = try await call("GET", "/spaces/\(Self.segment(slug))/pinned")
        return page.items
    }

    // MARK: feeds

    /// One page of a feed, newest first.
    public func feed(_ source: FeedSource, filter: FeedFilter = .init(), page: PageOptions = .init()) async throws
        -> Page<Post>
    {
        try await call("GET", source.path, query: filter.query.merging(page))
    }

    /// The same page checked against the copy tagged `etag` (from an earlier answer): a 304
    /// (`.notModified`) costs no body; a changed page comes with its new tag.
    public func revalidateFeed(
        _ source: FeedSource, filter: FeedFilter = .init(), page: PageOptions = .init(), etag: String?
    ) async throws -> Revalidated<Page<Post>> {
        try await revalidate(source.path, query: filter.query.merging(page), etag: etag)
    }

    // MARK: spaces

    public func spaces(matching text: String? = nil, memberOnly: Bool = false, page: PageOptions = .init()) async throws
        -> Page<Space>
    {
        try await call(
            "GET", "/spaces",
            query: (["q": text, "member": memberOnly ? "true" : nil] as [String: String?]).merging(page))
    }
    @discardableResult
    public func createSpace(_ space: CreateSpaceRequest) async throws -> Space {
        try await call("POST", "/spaces", body: space)
    }
    public func space(_ slug: String) async throws -> Space { try await call("GET", "/spaces/\(Self.segment(slug))") }
    @discardableResult
    public func updateSpace(_ slug: String, _ changes: UpdateSpaceRequest) async throws -> Space {
        try await call("PATCH", "/spaces/\(Self.segment(slug))", body: changes)
    }
    @discardableResult
    public func join(space slug: String) async throws -> Space {
        try await call("PUT", "/spaces/\(Self.segment(slug))/membership")
    }
    @discardableResult
    public func leave(space slug: String) async throws -> Space {
        try await call("DELETE", "/spaces/\(Self.segment(slug))/membership")
    }
    /// Asks to join a closed space; a moderator answers.
    public func requestToJoin(space slug: String) async throws {
        try await send("POST", "/spaces/\(Self.segment(slug))/requests")
    }
    /// Joins the space of an invite code (from an invite link's last path segment).
    @discardableResult
    public func join(inviteCode code: String) async throws -> Space {
        try await call("POST", "/spaces/join/\(Self.segment(code))")
    }
    public func members(of slug: String, page: PageOptions = .init()) async throws -> Page<SpaceMember> {
        try await call("GET", "/spaces/\(Self.segment(slug))/members", query: page.query)
    }

    // MARK: moderating a space

    public func joinRequests(of slug: String, page: PageOptions = .init()) async throws -> Page<JoinRequest> {
        try await call("GET", "/spaces/\(Self.segment(slug))/requests", query: page.query)
    }
    public func answerJoinRequest(of username: String, to slug: String, approve: Bool) async throws {
        try await send(approve ? "PUT" : "DELETE", "/spaces/\(Self.segment(slug))/requests/\(Self.segment(username))")
    }
    @discardableResult
    public func createInvite(to slug: String, _ invite: CreateInviteRequest = .init()) async throws -> SpaceInvite {
        try await call("POST", "/spaces/\(Self.segment(slug))/invites", body: invite)
    }
    @discardableResult
    public func setRole(_ role: SpaceRole, of username: String, in slug: String) async throws -> SpaceMember {
        try await call(
            "PATCH", "/spaces/\(Self.segment(slug))/members/\(Self.segment(username))",
            body: UpdateMemberRequest(role: role))
    }
    public func removeMember(_ username: String, from slug: String) async throws {
        try await send("DELETE", "/spaces/\(Self.segment(slug))/members/\(Self.segment(username))")
    }
    /// Bans (removes and keeps out), or lifts the ban.
    public func setBanned(_ banned: Bool, _ username: String, from slug: String) async throws {
        try await send(banned ? "PUT" : "DELETE", "/spaces/\(Self.segment(slug))/bans/\(Self.segment(username))")
    }
    /// Takes a post out of the space (it stays its author's).
    public func removePost(_ postID: String, from slug: String) async throws {
        try await send("DELETE", "/spaces/\(Self.segment(slug))/posts/\(Self.segment(postID))")
    }

    // MARK: collections

    public func collections(page: PageOptions = .init()) async throws -> Page<SavedCollection> {
        try await call("GET", "/collections", query: page.query)
    }
    @discardableResult
    public func createCollection(named name: String) async throws -> SavedCollection {
        try await call("POST", "/collections", body: CollectionRequest(name: name))
    }
    @discardableResult
    public func renameCollection(_ id: String, to name: String) async throws -> SavedCollection {
        try await call("PATCH", "/collections/\(Self.segment(id))", body: CollectionRequest(name: name))
    }
    public func deleteCollection(_ id: String) async throws {
        try await send("DELETE", "/collections/\(Self.segment(id))")
    }
    public func items(in collectionID: String, page: PageOptions = .init()) async throws -> Page<CollectionItem> {
        try await call("GET", "/collections/\(Self.segment(collectionID))/items", query: page.query)
    }
    /// Saves a post (`postID`) or a link (`url`; its preview is fetched in the background).
    @discardableResult
    public func save(postID: String? = nil, url: String? = nil, note: String? = nil, in collectionID: String)
        async throws -> CollectionItem
    {
        try await call(
            "POST", "/collections/\(Self.segment(collectionID))/items",
            body: SaveItemRequest(postId: postID, url: url, note: note))
    }
    @discardableResult
    public func updateItem(_ id: String, moveTo collectionID: String? = nil, note: String? = nil) async throws
        -> CollectionItem
    {
        try await call(
            "PATCH", "/collections/items/\(Self.segment(id))",
            body: UpdateItemRequest(collectionId: collectionID, note: note))
    }
    public func deleteItem(_ id: String) async throws {
        try await send("DELETE", "/collections/items/\(Self.segment(id))")
    }

    // MARK: search, history, recommendations

    public func searchPosts(_ search: PostSearch, page: PageOptions = .init()) async throws -> Page<Post> {
        let query: [String: String?] = [
            "q": search.text, "in": search.field == .all ? nil : search.field.rawValue, "space": search.space,
            "kind": search.kind?.rawValue,
            "near": search.near.map { "\($0.latitude),\($0.longitude)" },
            "radiusKm": search.radiusKm.map { String($0) }, "followed": search.followed ? "true" : nil,
        ]
        return try await call("GET", "/search/posts", query: query.merging(page))
    }
    public func searchUsers(_ text: String, page: PageOptions = .init()) async throws -> Page<User> {
        try await call("GET", "/search/users", query: (["q": text] as [String: String?]).merging(page))
    }
    public func searchSaved(_ text: String, page: PageOptions = .init()) async throws -> Page<CollectionItem> {
        try await call("GET", "/search/saved", query: (["q": text] as [String: String?]).merging(page))
    }
    public func recordView(of postID: String) async throws {
        try await send("POST", "/posts/\(Self.segment(postID))/view")
    }
    public func recordClick(on postID: String) async throws {
        try await send("POST", "/me/history/\(Self.segment(postID))/click")
    }
    /// My reading history; `text` filters it, in the post's field `field` (all, title, body,
    /// author, space).
    public func history(
        sort: HistorySort = .viewedAt, text: String? = nil, in field: PostSearch.Field = .all,
        page: PageOptions = .init()
    ) async throws -> Page<HistoryItem> {
        try await call(
            "GET", "/me/history",
            query: (["sort": sort.rawValue, "q": text, "in": field == .all ? nil : field.rawValue] as [String: String?])
                .merging(page))
    }
    public func recommended(limit: Int? = nil) async throws -> Page<HistoryItem> {
        try await call("GET", "/me/recommended", query: ["limit": limit.map(String.init)])
    }

    // MARK: notifications

    public func notifications(unreadOnly: Bool = false, page: PageOptions = .init()) async throws -> Page<
        PlazaAPI.Notification
    > {
        try await call(
            "GET", "/me/notifications",
            query: (["unread": unreadOnly ? "true" : nil] as [String: String?]).merging(page))
    }
    /// Marks these notifications read, or all of them when `ids` is nil.
    public func markNotificationsRead(_ ids: [String]? = nil) async throws {
        try await send("POST", "/me/notifications/read", body: MarkNotificationsReadRequest(ids: ids))
    }

    // MARK: reports and moderation

    /// Reports a post, comment or person; returns my open report on it when I reported it before.
    /// With reason `.rules`, `ruleIds` names the rules of the server (`about().rules`) it breaks.
    @discardableResult
    public func report(
        _ type: ReportTargetType, id: String, reason: ReportReason, note: String? = nil, ruleIds: [String]? = nil
    ) async throws -> Report {
        try await call(
            "POST", "/reports",
            body: CreateReportRequest(targetType: type, targetId: id, reason: reason, note: note, ruleIds: ruleIds))
    }
    /// The moderation queue I may see (admins: all; a space's moderators: their spaces'), newest first.
    public func reports(state: ReportState = .open, page: PageOptions = .init()) async throws -> Page<Report> {
        try await call(
            "GET", "/admin/reports", query: (["state": state.rawValue] as [String: String?]).merging(page))
    }
    /// Resolves a report (and the other open reports on its target) with `action`.
    @discardableResult
    public func resolveReport(_ id: String, action: ReportAction, note: String? = nil) async throws -> Report {
        try await call(
            "PATCH", "/admin/reports/\(Self.segment(id))", body: ResolveReportRequest(action: action, note: note))
    }
    /// Suspends a person (admins only): their sessions end and what they made is hidden.
    public func suspend(_ username: String, note: String? = nil) async throws {
        try await send(
            "PUT", "/admin/users/\(Self.segment(username))/suspension", body: SuspensionRequest(note: note))
    }
    /// Lifts a suspension (admins only).
    public func unsuspend(_ username: String) async throws {
        try await send("DELETE", "/admin/users/\(Self.segment(username))/suspension")
    }
    /// The audit log, newest first (admins only).
    public func audit(page: PageOptions = .init()) async throws -> Page<AuditEntry> {
        try await call("GET", "/admin/audit", query: page.query)
    }
    /// The mail outbox, newest first (admins only): every message, or those in one `state`.
    public func outgoingMail(state: MailState? = nil, page: PageOptions = .init()) async throws
        -> Page<OutgoingMail>
    {
        try await call("GET", "/admin/mail", query: (["state": state?.rawValue] as [String: String?]).merging(page))
    }

    // MARK: media

    /// Uploads a photo (JPEG, PNG, WebP, HEIC or GIF) or a video (MP4, MOV, WebM) as multipart
    /// `file`; `progress` gets 0…1 as it is sent. A photo comes back ready; a video comes back
    /// `processing` (its poster ready) and is transcoded on the server: it can go on a post at
    /// once (the post shows when the video is ready), and `waitUntilProcessed` follows it.
    /// `description` is its alt text: what it shows, for people who cannot see it.
    public func upload(
        _ data: Data, filename: String = "image", contentType: String = "application/octet-stream",
        description: String? = nil, progress: (@Sendable (Double) -> Void)? = nil
    )
        async throws -> Media
    {
        let form = MultipartForm.upload(data, filename: filename, contentType: contentType, description: description)
        let response = try await send("POST", "/me/media", raw: form, uploadProgress: progress)
        return try Self.decoder.decode(Media.self, from: response.body)
    }
    /// People and spaces to follow, for a new person's empty home (best first).
    public func suggestions() async throws -> Suggestions { try await call("GET", "/me/suggestions") }

    public func myMedia(page: PageOptions = .init()) async throws -> Page<Media> {
        try await call("GET", "/me/media", query: page.query)
    }

    /// Sets (or with nil, removes) the alt text of one of my uploads, on the post that shows it too.
    @discardableResult
    public func describeMedia(_ id: String, as description: String?) async throws -> Media {
        try await call("PATCH", "/me/media/\(Self.segment(id))", body: UpdateMediaRequest(description: description))
    }

    /// One of my uploads as it is now: a video's state and progress.
    public func media(_ id: String) async throws -> Media {
        try await call("GET", "/me/media/\(Self.segment(id))")
    }

    /// Follows a video until it is no longer processing (ready or failed), reporting its
    /// progress (0–100); a photo returns at once. Ends with the task's cancellation.
    public func waitUntilProcessed(
        _ media: Media, every interval: Duration = .seconds(2), progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Media {
        var current = media
        while current.state == .processing {
            try await Task.sleep(for: interval)
            current = try await self.media(media.id)
            if let percent = current.progress { progress?(percent) }
        }
        return current
    }
}

extension Media {
    public enum Variant: String, Sendable { case thumbnail, medium, original }

    /// The path of one of the image's variants (resolve it with `PlazaClient.mediaURL`).
    public func path(_ variant: Variant) -> String {
        switch variant {
        case .thumbnail: variants.thumbnail
        case .medium: variants.medium
        case .original: variants.original
        }
    }
}

// MARK: the instance

extension PlazaClient {
    /// What the server says of itself: its name, description, rules, contact, terms, who may sign
    /// up (`registrations`), whether members make invites, and Plaza's version. No sign-in needed.
    public func about() async throws -> InstanceInfo {
        try await call("GET", "/about", signingIn: true)
    }

    /// My invite links, newest first.
    public func invites(page: PageOptions = .init()) async throws -> Page<InstanceInvite> {
        try await call("GET", "/invites", query: page.query)
    }

    /// A new invite link of mine: admins always, members when the server's `membersMayInvite` is
    /// on (else `invites_disabled`). A member's works for at most 100 people and 30 days (10 and
    /// a week when not given), and 20 of theirs work at a time (`too_many_invites`).
    @discardableResult
    public func createInvite(maxUses: Int? = nil, expiresAt: Timestamp? = nil) async throws -> InstanceInvite {
        try await call("POST", "/invites", body: CreateInviteRequest(maxUses: maxUses, expiresAt: expiresAt))
    }

    /// Revokes one of my invite links.
    public func revokeInvite(_ code: String) async throws {
        try await send("DELETE", "/invites/\(Self.segment(code))")
    }

    // MARK: running the instance (admins)

    /// Changes the server's settings (admins only): the fields given; an empty text clears one.
    public func updateInstance(_ patch: InstancePatch) async throws -> InstanceInfo {
        try await call("PATCH", "/admin/instance", body: patch)
    }

    /// The sign-ups waiting for approval, oldest first (admins only).
    public func pendingRegistrations(page: PageOptions = .init()) async throws -> Page<RegistrationRequest> {
        try await call("GET", "/admin/registrations", query: page.query)
    }

    /// Approves (the person can sign in) or rejects (the account is deleted) a waiting sign-up;
    /// the person is mailed either way (admins only).
    public func decideRegistration(_ username: String, approve: Bool) async throws {
        try await send(approve ? "PUT" : "DELETE", "/admin/registrations/\(Self.segment(username))")
    }

    /// Every invite link, newest first, whoever made it (admins only).
    public func allInvites(page: PageOptions = .init()) async throws -> Page<InstanceInvite> {
        try await call("GET", "/admin/invites", query: page.query)
    }

    /// Revokes anyone's invite link (admins only).
    public func revokeAnyInvite(_ code: String) async throws {
        try await send("DELETE", "/admin/invites/\(Self.segment(code))")
    }

    /// How the server is doing: people, storage, outboxes, queues, database (admins only).
    public func adminOverview() async throws -> AdminOverview {
        try await call("GET", "/admin/overview")
    }

    /// People, newest first, or those whose username starts with `query` (admins only).
    public func adminUsers(query: String? = nil, page: PageOptions = .init()) async throws -> Page<AdminUser> {
        try await call("GET", "/admin/users", query: (["q": query] as [String: String?]).merging(page))
    }

    /// Makes someone an admin, a moderator (every report, and nothing else) or a member again
    /// (admins only; not oneself).
    public func setRole(of username: String, to role: InstanceRole) async throws {
        try await send("PUT", "/admin/users/\(Self.segment(username))/role", body: RoleRequest(role: role.rawValue))
    }

    /// Turns off someone's two-factor sign-in when they lost their app and codes (admins only).
    public func turnOffTwoFactor(of username: String) async throws {
        try await send("DELETE", "/admin/users/\(Self.segment(username))/two-factor")
    }
}
