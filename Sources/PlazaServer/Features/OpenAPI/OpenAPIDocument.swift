import Foundation
import OpenAPIKit

/// The OpenAPI 3.1 description of every route, as OpenAPIKit values. `OpenAPITests` fails when a
/// registered route is missing here or this names one that does not exist, and when it does not encode.
enum OpenAPIDocument {
    /// The document as JSON, keys sorted. Throws when it cannot be encoded (a component name OpenAPI
    /// does not allow, say).
    static func json() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(document()))
    }

    static func document() throws -> OpenAPI.Document {
        OpenAPI.Document(
            openAPIVersion: .v3_1_0,
            info: .init(
                title: "Plaza API",
                description: """
                    The HTTP API of Plaza, a self-hosted social backend. Lists are keyset-paginated; \
                    errors are {"error": {code, message, field?}}.
                    """,
                version: "1.0.0"),
            servers: [.init(urlTemplate: try URLTemplate(templateString: "/"))],
            paths: paths,
            components: .init(
                schemas: try Schemas.components, securitySchemes: ["bearerAuth": .b(.http(scheme: "bearer"))])
        )
    }

    // MARK: paths

    enum Auth { case none, optional, required }

    struct Operation {
        var method: OpenAPI.HttpMethod
        var summary: String
        var auth: Auth
        var query: [OpenAPI.Parameter] = []
        var body: String? = nil
        var bodyRequired = true
        /// The response is a Server-Sent Events stream.
        var eventStream = false
        var status = 200
        /// Other success statuses with the same body (e.g. 200 for "already there" beside 201).
        var alsoStatus: [Int] = []
        var response: JSONSchema? = nil
        var errors: [Int] = []
        /// The body is multipart/form-data with a `file` field instead of JSON.
        var upload = false
        /// The response is the bytes of an image, not JSON.
        var image = false
        /// The response is a ZIP archive to save.
        var zip = false
        /// For browsers: errors are an HTML page (the sign-in page saying what went wrong), not JSON.
        var page = false
        /// OpenAPI links from this response to operations taking `parameter` from the value at
        /// `pointer` in this response's body (lets clients and fuzzers follow a created object to
        /// what can be done with it).
        var links: [Link] = []
        /// Mastodon's API: errors are `{"error": "…"}` (`MastodonError`).
        var mastodon = false
        /// A Mastodon body: JSON or a form, Mastodon's parameters.
        var mastodonBody = false
    }

    typealias Link = (operationID: String, parameter: String, pointer: JSONReference<JSONSchema>.Path)

    static let postLinks: [Link] = [
        "getPostsId", "patchPostsId", "deletePostsId", "getPostsIdComments", "postPostsIdComments", "putPostsIdLike",
        "deletePostsIdLike", "getPostsIdLikes",
    ].map { (operationID: $0, parameter: "id", pointer: "/id") }
    static let userLinks: [Link] = [
        "getUsersUsername", "getUsersUsernamePosts", "getUsersUsernameFollowers", "getUsersUsernameFollowing",
        "getUsersUsernameFriends",
    ].map { (operationID: $0, parameter: "username", pointer: "/user/username") }
    static let spaceLinks: [Link] = [
        "getSpacesSlug", "patchSpacesSlug", "putSpacesSlugMembership", "deleteSpacesSlugMembership",
        "getSpacesSlugFeed",
    ].map { (operationID: $0, parameter: "slug", pointer: "/slug") }
    static let collectionLinks: [Link] = [
        "patchCollectionsId", "deleteCollectionsId", "getCollectionsIdItems", "postCollectionsIdItems",
    ].map { (operationID: $0, parameter: "id", pointer: "/id") }

    static let v1 = "/api/v1"

    static var operations: [(String, Operation)] {
        let page = [Params.limit, Params.cursor]
        let feed = page + [Params.since, Params.until, Params.kind, Params.activityType, Params.activityProgress]
        return [
            (
                "/healthz",
                Operation(
                    method: .get, summary: "Health check: 200 when the database answers", auth: .none,
                    response: ref("Health"), errors: [503])
            ),
            ("\(v1)/openapi.json", Operation(method: .get, summary: "This document", auth: .none, response: .object)),
            // Accounts and sessions
            (
                "\(v1)/auth/register",
                Operation(
                    method: .post, summary: "Create an account and sign in", auth: .none,
                    body: "RegisterRequest", status: 201, response: ref("AuthResponse"), errors: [409], links: userLinks
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
                    summary: "Begin two-factor sign-in: a new secret for an authenticator app (409 when it is on)",
                    auth: .required, query: [Params.deviceToken], body: "CurrentPasswordRequest",
                    response: ref("TwoFactorSetup"), errors: [403, 409])
            ),
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
            (
                "\(v1)/me/identities/{provider}",
                Operation(
                    method: .delete,
                    summary: "Unlink a provider; 409 `last_sign_in_method` when it is the only way to sign in",
                    auth: .required, status: 204, errors: [404, 409])
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
                "\(v1)/push/web-push-key",
                Operation(
                    method: .get, summary: "The server's VAPID public key, for a browser's push subscription",
                    auth: .none, response: ref("WebPushKey"))
            ),
            (
                "\(v1)/me/push-devices",
                Operation(
                    method: .get, summary: "The devices that receive my pushes", auth: .required,
                    response: pageOf("PushDevice"))
            ),
            (
                "\(v1)/me/push-devices",
                Operation(
                    method: .post,
                    summary: """
                        Register an APNs device token or a Web Push subscription for pushes: 201, or 200 when \
                        it is mine already; a device someone else registered becomes mine. It goes when this \
                        session signs out. 422 `push_unavailable` for APNs on a server without APNs settings
                        """,
                    auth: .required, body: "RegisterPushDeviceRequest", status: 201, alsoStatus: [200],
                    response: ref("PushDevice"))
            ),
            (
                "\(v1)/me/push-devices/{id}",
                Operation(method: .delete, summary: "Stop pushes to one of my devices", auth: .required, status: 204)
            ),
            (
                "\(v1)/me/avatar",
                Operation(
                    method: .put, summary: "Make one of my unused uploads my avatar (null removes it)", auth: .required,
                    body: "SetAvatarRequest", response: ref("Me"))
            ),
            (
                "\(v1)/me/media",
                Operation(
                    method: .post,
                    summary: """
                        Upload a photo (JPEG, PNG, WebP, GIF, HEIC: re-encoded, metadata stripped, variants made; 201) \
                        or a video (MP4, MOV, WebM: probed, its poster made, then transcoded in the background to \
                        H.264/AAC MP4 at most 720p, metadata stripped; 202 with state processing, see GET \
                        /me/media/{id}). 422 no_video, unreadable_video, video_too_large (past 4K), video_too_long; \
                        413 past the size cap or storage_quota_exceeded past the storage quota; 429 daily_upload_limit \
                        past the daily cap
                        """,
                    auth: .required, status: 201, alsoStatus: [202], response: ref("Media"), upload: true)
            ),
            (
                "\(v1)/me/media",
                Operation(
                    method: .get, summary: "My uploads, newest first", auth: .required, query: page,
                    response: pageOf("Media"))
            ),
            (
                "\(v1)/me/media/{id}",
                Operation(
                    method: .get,
                    summary:
                        "One of my uploads: a video's state (processing, ready, failed) and progress while processing",
                    auth: .required, response: ref("Media"))
            ),
            (
                "/media/{id}/{variant}",
                Operation(
                    method: .get,
                    summary: """
                        The bytes of a media variant (thumbnail, medium, original; a video's original is its MP4, \
                        thumbnail and medium its poster), at the URL Media gives (with its key k). An upload nothing \
                        uses yet is its owner's alone (Cache-Control: private); media in use are cached for a year; \
                        a post's media are 404 to whoever may not see the post. One span of bytes=… in Range gets \
                        206 (416 past the end); anything else in Range gets the whole file
                        """,
                    auth: .optional, query: [Params.mediaKey, Params.range], image: true)
            ),
            (
                "/media/{id}/{variant}",
                Operation(
                    method: .head, summary: "The headers of a media variant", auth: .optional,
                    query: [Params.mediaKey, Params.range], image: true)
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
            // People
            (
                "\(v1)/users/{username}",
                Operation(
                    method: .get, summary: "A profile", auth: .optional, response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/posts",
                Operation(
                    method: .get, summary: "A user's posts, newest first", auth: .optional, query: feed,
                    response: pageOf("Post"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/follow",
                Operation(
                    method: .put,
                    summary: """
                        Follow (idempotent); a locked person is asked instead (viewer.requested, a follow_request \
                        notification to them)
                        """,
                    auth: .required, response: ref("User"), errors: [403, 404])
            ),
            (
                "\(v1)/users/{username}/follow",
                Operation(
                    method: .delete, summary: "Unfollow, or withdraw a pending request (idempotent)", auth: .required,
                    response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/friends",
                Operation(
                    method: .get, summary: "People who follow each other with the user, newest follow first",
                    auth: .optional, query: page, response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/mute",
                Operation(
                    method: .put,
                    summary: "Mute (idempotent): hides their posts from my feeds, not from their profile; no block",
                    auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/users/{username}/mute",
                Operation(method: .delete, summary: "Unmute (idempotent)", auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/me/suggestions",
                Operation(
                    method: .get,
                    summary: """
                        People and spaces to follow, best first (up to 10 and 5): followed by people I follow, posting \
                        in my spaces or lately; spaces my people are in or lately posted to. Never me, anyone I follow \
                        or asked to, anyone hidden from me, or a space I am in
                        """,
                    auth: .required, response: ref("Suggestions"))
            ),
            (
                "\(v1)/me/follow-requests",
                Operation(
                    method: .get, summary: "People asking to follow me, newest first", auth: .required, query: page,
                    response: pageOf("JoinRequest"))
            ),
            (
                "\(v1)/me/follow-requests/{username}",
                Operation(
                    method: .put, summary: "Approve a follow request: they follow me", auth: .required, status: 204,
                    errors: [404])
            ),
            (
                "\(v1)/me/follow-requests/{username}",
                Operation(
                    method: .delete, summary: "Deny a follow request", auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/users/{username}/followers",
                Operation(
                    method: .get, summary: "Followers, newest first", auth: .optional, query: page,
                    response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/following",
                Operation(
                    method: .get, summary: "Whom the user follows, newest first", auth: .optional, query: page,
                    response: pageOf("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/block",
                Operation(
                    method: .put, summary: "Block: hides each side's content from the other and ends follows",
                    auth: .required, response: ref("User"), errors: [404])
            ),
            (
                "\(v1)/users/{username}/block",
                Operation(
                    method: .delete, summary: "Unblock", auth: .required, response: ref("User"), errors: [404])
            ),
            // Posts, comments, likes
            (
                "\(v1)/posts",
                Operation(
                    method: .post,
                    summary: """
                        Create a post; a link not previewed before counts against the daily cap of link previews \
                        (429 daily_link_preview_limit)
                        """,
                    auth: .required, body: "CreatePostRequest", status: 201, response: ref("Post"), links: postLinks)
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .get, summary: "One post", auth: .optional, response: ref("Post"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .patch, summary: "Edit my post; null clears a field", auth: .required,
                    body: "UpdatePostRequest", response: ref("Post"), errors: [403, 404])
            ),
            (
                "\(v1)/posts/{id}",
                Operation(
                    method: .delete, summary: "Delete my post with its comments and likes", auth: .required,
                    status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/posts/{id}/comments",
                Operation(
                    method: .get, summary: "Comments, oldest first", auth: .optional, query: page,
                    response: pageOf("Comment"), errors: [404])
            ),
            (
                "\(v1)/posts/{id}/comments",
                Operation(
                    method: .post, summary: "Comment on a post", auth: .required, body: "CreateCommentRequest",
                    status: 201, response: ref("Comment"), errors: [404],
                    links: [(operationID: "deleteCommentsId", parameter: "id", pointer: "/id")])
            ),
            (
                "\(v1)/comments/{id}",
                Operation(
                    method: .delete, summary: "Delete a comment (its author or the post's author)", auth: .required,
                    status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/posts/{id}/like",
                Operation(
                    method: .put, summary: "Like (idempotent)", auth: .required, response: ref("LikeState"),
                    errors: [404])
            ),
            (
                "\(v1)/posts/{id}/like",
                Operation(
                    method: .delete, summary: "Unlike (idempotent)", auth: .required, response: ref("LikeState"),
                    errors: [404])
            ),
            (
                "\(v1)/posts/{id}/recommend",
                Operation(
                    method: .post,
                    summary:
                        "Recommend the post to people who follow me (a notification each; 422 cannot_recommend names any who do not follow me, and then nobody is sent it; those who may not read the post are passed over silently)",
                    auth: .required, body: "RecommendPostRequest", status: 204, errors: [404, 422])
            ),
            (
                "\(v1)/posts/{id}/likes",
                Operation(
                    method: .get, summary: "Who liked the post, newest first", auth: .optional, query: page,
                    response: pageOf("User"), errors: [404])
            ),
            // Feeds
            (
                "\(v1)/feed/home",
                Operation(
                    method: .get, summary: "My posts and those of people I follow, newest first", auth: .required,
                    query: feed, response: pageOf("Post"))
            ),
            (
                "\(v1)/feed/global",
                Operation(
                    method: .get, summary: "All posts, newest first", auth: .optional, query: feed,
                    response: pageOf("Post"))
            ),
            (
                "\(v1)/users/{username}/activity",
                Operation(
                    method: .get,
                    summary: """
                        Activity heatmap: per day, activities posted and completed, and the streak of days with one \
                        completed; days are counted in the owner's preferences.timeZone (UTC when unset), or in tz
                        """,
                    auth: .optional, query: [Params.days, Params.tz], response: ref("ActivityHeatmap"),
                    errors: [404, 422])
            ),
            // Spaces
            (
                "\(v1)/spaces",
                Operation(
                    method: .get,
                    summary: "Spaces, newest first; q searches slug and name; member=true lists the ones I joined",
                    auth: .optional, query: page + [Params.q, Params.member], response: pageOf("Space"))
            ),
            (
                "\(v1)/spaces",
                Operation(
                    method: .post, summary: "Create a space; I own and join it", auth: .required,
                    body: "CreateSpaceRequest", status: 201, response: ref("Space"), errors: [409], links: spaceLinks)
            ),
            (
                "\(v1)/spaces/{slug}",
                Operation(
                    method: .get, summary: "A space; signed in, it becomes my lastSpace preference", auth: .optional,
                    response: ref("Space"), errors: [404])
            ),
            (
                "\(v1)/spaces/{slug}",
                Operation(
                    method: .patch, summary: "Edit my space (owner only); imageId null removes the image",
                    auth: .required,
                    body: "UpdateSpaceRequest", response: ref("Space"), errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/membership",
                Operation(
                    method: .put, summary: "Join an open space (idempotent)", auth: .required, response: ref("Space"),
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/membership",
                Operation(
                    method: .delete, summary: "Leave (idempotent; not the owner)", auth: .required,
                    response: ref("Space"),
                    errors: [404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/feed",
                Operation(
                    method: .get,
                    summary: "Posts in the space, newest first (a closed or private space's only for its members)",
                    auth: .optional, query: feed, response: pageOf("Post"), errors: [404])
            ),
            (
                "\(v1)/spaces/{slug}/members",
                Operation(
                    method: .get, summary: "Members and their roles, earliest first (closed and private: members only)",
                    auth: .optional, query: page, response: pageOf("SpaceMember"), errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/members/{username}",
                Operation(
                    method: .patch, summary: "Make a member a moderator or a moderator a member (owner only)",
                    auth: .required, body: "UpdateMemberRequest", response: ref("SpaceMember"),
                    errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/members/{username}",
                Operation(
                    method: .delete, summary: "Remove a member (moderators; a moderator only by the owner)",
                    auth: .required, status: 204, errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/bans/{username}",
                Operation(
                    method: .put, summary: "Ban: remove and keep out (moderators)", auth: .required, status: 204,
                    errors: [403, 404, 422])
            ),
            (
                "\(v1)/spaces/{slug}/bans/{username}",
                Operation(
                    method: .delete, summary: "Lift a ban (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/posts/{id}",
                Operation(
                    method: .delete, summary: "Take a post out of the space (moderators; it stays its author's)",
                    auth: .required, status: 204, errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/requests",
                Operation(
                    method: .post, summary: "Ask to join a closed space (idempotent)", auth: .required, status: 202,
                    errors: [403, 404, 409, 422])
            ),
            (
                "\(v1)/spaces/{slug}/requests",
                Operation(
                    method: .get, summary: "Pending join requests, oldest first (moderators)", auth: .required,
                    query: page, response: pageOf("JoinRequest"), errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/requests/{username}",
                Operation(
                    method: .put, summary: "Approve a join request (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/requests/{username}",
                Operation(
                    method: .delete, summary: "Deny a join request (moderators)", auth: .required, status: 204,
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/{slug}/invites",
                Operation(
                    method: .post, summary: "Make an invite link (moderators); the code is shown once",
                    auth: .required, body: "CreateInviteRequest", status: 201, response: ref("SpaceInvite"),
                    errors: [403, 404])
            ),
            (
                "\(v1)/spaces/join/{code}",
                Operation(
                    method: .post, summary: "Join with an invite code", auth: .required, response: ref("Space"),
                    errors: [403, 404])
            ),
            // Search
            (
                "\(v1)/search/posts",
                Operation(
                    method: .get,
                    summary: """
                        Full-text search over posts: every word must match, the last as a prefix, "quoted phrases" \
                        in order; ranked by relevance, then newest; near= limits to a circle (nearest first without q); \
                        followed=true to the people I follow; in=place searches place names
                        """,
                    auth: .optional,
                    query: page + [
                        Params.postQ, Params.searchIn, Params.space, Params.kind, Params.near, Params.radiusKm,
                        Params.followed,
                    ],
                    response: pageOf("Post"))
            ),
            (
                "\(v1)/search/users",
                Operation(
                    method: .get,
                    summary: "Accounts whose username or display name has words starting with each word of q",
                    auth: .optional, query: page + [Params.searchQ], response: pageOf("User"))
            ),
            (
                "\(v1)/search/saved",
                Operation(
                    method: .get,
                    summary: """
                        My saved items whose link title, description, URL, note or saved post contain every word of q, \
                        newest first
                        """,
                    auth: .required, query: page + [Params.searchQ], response: pageOf("CollectionItem"))
            ),
            (
                "\(v1)/posts/{id}/view",
                Operation(
                    method: .post, summary: "Record that I viewed the post (my reading history)", auth: .required,
                    status: 204, errors: [404])
            ),
            (
                "\(v1)/me/history",
                Operation(
                    method: .get,
                    summary: """
                        Posts I viewed; sort by when I last viewed them, when they were posted, or how often I viewed \
                        them; q and in search them
                        """,
                    auth: .required, query: page + [Params.historySort, Params.historyQ, Params.searchIn],
                    response: pageOf("HistoryItem"))
            ),
            (
                "\(v1)/me/history/{postId}/click",
                Operation(
                    method: .post,
                    summary: "Record that I picked this post from search results (it must be in my history)",
                    auth: .required, status: 204, errors: [404])
            ),
            (
                "\(v1)/me/recommended",
                Operation(
                    method: .get,
                    summary: """
                        My viewed posts, most likely to be opened next first (docs/recommendations.md); one page, \
                        up to limit
                        """,
                    auth: .required, query: [Params.limit], response: pageOf("HistoryItem"))
            ),
            // Notifications and realtime
            (
                "\(v1)/me/notifications",
                Operation(
                    method: .get, summary: "My notifications, most recent activity first; unread=true for unread only",
                    auth: .required, query: page + [Params.unread], response: pageOf("Notification"))
            ),
            (
                "\(v1)/me/notifications/read",
                Operation(
                    method: .post, summary: "Mark the given notifications read, or all of them without ids",
                    auth: .required, body: "MarkNotificationsReadRequest", bodyRequired: false, status: 204)
            ),
            (
                "\(v1)/stream",
                Operation(
                    method: .get,
                    summary: """
                        My events as Server-Sent Events: post.created, post.updated, post.deleted, comment.created, \
                        like.changed, notification; then ready (live), reset (resume point too old). Resume with the \
                        Last-Event-ID header or lastEventId
                        """,
                    auth: .required, query: [Params.lastEventId], eventStream: true)
            ),
            // Collections
            (
                "\(v1)/collections",
                Operation(
                    method: .get, summary: "My collections, newest first", auth: .required, query: page,
                    response: pageOf("SavedCollection"))
            ),
            (
                "\(v1)/collections",
                Operation(
                    method: .post, summary: "Create a collection", auth: .required, body: "CollectionRequest",
                    status: 201,
                    response: ref("SavedCollection"), links: collectionLinks)
            ),
            (
                "\(v1)/collections/{id}",
                Operation(
                    method: .patch, summary: "Rename my collection", auth: .required, body: "CollectionRequest",
                    response: ref("SavedCollection"), errors: [404])
            ),
            (
                "\(v1)/collections/{id}",
                Operation(
                    method: .delete, summary: "Delete my collection with its items", auth: .required, status: 204,
                    errors: [404])
            ),
            (
                "\(v1)/collections/{id}/items",
                Operation(
                    method: .get, summary: "Items of my collection, newest first", auth: .required, query: page,
                    response: pageOf("CollectionItem"), errors: [404])
            ),
            (
                "\(v1)/collections/{id}/items",
                Operation(
                    method: .post,
                    summary: """
                        Save a post or a link (its preview is fetched in the background; a new link counts against the \
                        daily cap of link previews, 429 daily_link_preview_limit)
                        """,
                    auth: .required, body: "SaveItemRequest", status: 201, response: ref("CollectionItem"),
                    errors: [404, 409],
                    links: [
                        (operationID: "patchCollectionsItemsId", parameter: "id", pointer: "/id"),
                        (operationID: "deleteCollectionsItemsId", parameter: "id", pointer: "/id"),
                    ])
            ),
            (
                "\(v1)/collections/items/{id}",
                Operation(
                    method: .patch, summary: "Move my item to another of my collections and/or edit its note",
                    auth: .required, body: "UpdateItemRequest", response: ref("CollectionItem"), errors: [404, 409])
            ),
            (
                "\(v1)/collections/items/{id}",
                Operation(
                    method: .delete, summary: "Remove my item", auth: .required, status: 204, errors: [404])
            ),
        ] + moderationOperations + mastodonOperations
    }

    static var paths: OpenAPI.PathItem.Map {
        var items: OrderedDictionary<OpenAPI.Path, OpenAPI.PathItem> = [:]
        for (path, operation) in operations {
            let rendered = render(operation, path: path)
            items[OpenAPI.Path(rawValue: path), default: OpenAPI.PathItem()][operation.method] = rendered
        }
        return items.mapValues { .b($0) }
    }

    static let bearerAuth = JSONReference<OpenAPI.SecurityScheme>.component(named: "bearerAuth")

    static func render(_ op: Operation, path: String) -> OpenAPI.Operation {
        let security: [OpenAPI.SecurityRequirement] =
            switch op.auth {
            case .none: []
            case .optional: [[:], [bearerAuth: []]]
            case .required: [[bearerAuth: []]]
            }
        var requestBody: OpenAPI.Request?
        if let body = op.body {
            requestBody = OpenAPI.Request(content: [.json: .b(.init(schema: ref(body)))], required: op.bodyRequired)
        }
        if op.mastodonBody {
            let free = OpenAPI.Content(schema: .object)
            requestBody = OpenAPI.Request(content: [.json: .b(free), .form: .b(free)], required: false)
        }
        if op.upload {
            let form = Schemas.object(["file": .string(format: .other("binary"))])
            requestBody = OpenAPI.Request(content: [.multipartForm: .b(.init(schema: form))], required: true)
        }
        var success = OpenAPI.Response(description: "Done")
        if let response = op.response {
            success = OpenAPI.Response(description: "OK", content: [.json: .b(.init(schema: response))])
        }
        if op.eventStream {
            success = OpenAPI.Response(
                description: "Server-Sent Events (docs/realtime.md)",
                content: [.eventStream: .b(.init(schema: .string))])
        }
        if op.image {
            let bytes = OpenAPI.Content(schema: .string(format: .other("binary")))
            success = OpenAPI.Response(
                description: "The image or video", content: [.anyImage: .b(bytes), .mp4: .b(bytes)])
        }
        if op.zip {
            success = OpenAPI.Response(
                description: "The archive (Content-Disposition: attachment)",
                content: [.other("application/zip"): .b(.init(schema: .string(format: .other("binary"))))])
        }
        for link in op.links {
            let value = OpenAPI.RuntimeExpression.response(.body(.path(link.pointer)))
            success.links[link.operationID] = .b(
                OpenAPI.Link(operationId: link.operationID, parameters: [link.parameter: .a(value)]))
        }
        var responses: OpenAPI.Response.Map = [.status(code: op.status): .b(success)]
        for code in op.alsoStatus { responses[.status(code: code)] = .b(success) }
        var errors = Set(op.errors + [400, 422, 429])
        if op.auth != .none || path.hasPrefix(v1) { errors.insert(401) }
        if op.body != nil || op.upload || op.mastodonBody { errors.formUnion([413, 415]) }
        if op.image {
            responses[.status(code: 304)] = .b(OpenAPI.Response(description: "Not modified (If-None-Match)"))
            var span = success
            span.description = "The span asked for in Range (Content-Range says which)"
            responses[.status(code: 206)] = .b(span)
            responses[.status(code: 416)] = .b(
                OpenAPI.Response(description: "The span lies past the end (Content-Range: bytes */length)"))
        }
        if path.contains("{") { errors.insert(404) }
        for code in errors.sorted() {
            var error = OpenAPI.Response(
                description: errorDescription(code),
                content: op.page
                    ? [.html: .b(.init(schema: .string))]
                    : [.json: .b(.init(schema: ref(op.mastodon ? "MastodonError" : "Error")))])
            if code == 429 {
                error.headers = ["Retry-After": .b(OpenAPI.Header(schema: .integer, description: "Seconds to wait"))]
            }
            responses[.status(code: code)] = .b(error)
        }
        return OpenAPI.Operation(
            tags: op.mastodon ? ["Mastodon"] : nil, summary: op.summary, operationId: operationID(op.method, path),
            parameters: (pathParameters(path) + op.query).map { .b($0) }, requestBody: requestBody,
            responses: responses, security: security)
    }

    static func pathParameters(_ path: String) -> [OpenAPI.Parameter] {
        path.split(separator: "/").filter { $0.hasPrefix("{") }.map { segment in
            .path(name: String(segment.dropFirst().dropLast()), schema: .string)
        }
    }

    static func operationID(_ method: OpenAPI.HttpMethod, _ path: String) -> String {
        let words = path.replacingOccurrences(of: v1, with: "").split(whereSeparator: { "/{}.".contains($0) })
        return method.rawValue.lowercased() + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    static func errorDescription(_ code: Int) -> String {
        switch code {
        case 400: "Malformed request (bad JSON or cursor)"
        case 401: "Not signed in, or the token is invalid or expired"
        case 403: "Not allowed"
        case 404: "Not found or not visible to you"
        case 409: "Conflict (username or email taken)"
        case 413: "Body too large, or the storage quota is full (storage_quota_exceeded)"
        case 415: "Body is not application/json"
        case 422: "A field is invalid; `field` names it"
        case 429: "Rate limited, or a daily cap reached (daily_upload_limit, daily_link_preview_limit); see Retry-After"
        case 503: "The database does not answer"
        default: "Error"
        }
    }

    // MARK: schema helpers

    static func ref(_ name: String) -> JSONSchema { .reference(.component(named: name)) }
    static func pageOf(_ name: String) -> JSONSchema { ref("\(name)Page") }

    enum Params {
        static var limit: OpenAPI.Parameter {
            .query(
                name: "limit",
                schema: .integer(maximum: (100, exclusive: false), minimum: (1, exclusive: false), defaultValue: 20))
        }
        static var mediaKey: OpenAPI.Parameter {
            .query(
                name: "k", required: true, schema: .string(pattern: "^[A-Za-z0-9_-]{16,64}$"),
                description: "The media's access key, as in the URLs of Media; a wrong or missing key is 404")
        }
        static var range: OpenAPI.Parameter {
            .header(
                name: "Range", schema: .string(maxLength: 100),
                description: "One span of bytes (bytes=first-last, bytes=first-, bytes=-suffix), for players to seek")
        }
        static var next: OpenAPI.Parameter {
            .query(name: "next", schema: .string(maxLength: 2000), description: "a path on this site to go to after")
        }
        static var link: OpenAPI.Parameter {
            .query(name: "link", schema: .string(allowedValues: ["1"]), description: "link to the signed-in account")
        }
        static var csrf: OpenAPI.Parameter {
            .query(name: "csrf", schema: .string, description: "the page's CSRF token (with link=1)")
        }
        static var code: OpenAPI.Parameter { .query(name: "code", schema: .string(maxLength: 2048)) }
        static var state: OpenAPI.Parameter { .query(name: "state", schema: .string(maxLength: 128)) }
        static var mailState: OpenAPI.Parameter {
            .query(name: "state", schema: .string(allowedValues: ["pending", "sent", "failed"]))
        }
        static var cursor: OpenAPI.Parameter {
            .query(name: "cursor", schema: .string, description: "nextCursor of the previous page")
        }
        static var since: OpenAPI.Parameter {
            .query(
                name: "since", schema: .string(format: .dateTime),
                description: "Only posts created at or after (RFC 3339)")
        }
        static var until: OpenAPI.Parameter {
            .query(
                name: "until", schema: .string(format: .dateTime), description: "Only posts created before (RFC 3339)")
        }
        static var days: OpenAPI.Parameter {
            .query(
                name: "days",
                schema: .integer(maximum: (366, exclusive: false), minimum: (1, exclusive: false), defaultValue: 365))
        }
        static var q: OpenAPI.Parameter { .query(name: "q", schema: .string(maxLength: 100)) }
        static var tz: OpenAPI.Parameter {
            .query(
                name: "tz", schema: .string(maxLength: 64), description: "an IANA time zone, e.g. America/Los_Angeles")
        }
        static var member: OpenAPI.Parameter {
            .query(name: "member", schema: .boolean, description: "true: only spaces I joined (sign-in required)")
        }
        static var searchQ: OpenAPI.Parameter { .query(name: "q", required: true, schema: .string(maxLength: 1000)) }
        static var postQ: OpenAPI.Parameter {
            .query(name: "q", schema: .string(maxLength: 1000), description: "words; needed unless near is given")
        }
        static var near: OpenAPI.Parameter {
            .query(name: "near", schema: .string(pattern: "^-?[0-9.]+,-?[0-9.]+$"), description: "latitude,longitude")
        }
        static var followed: OpenAPI.Parameter {
            .query(name: "followed", schema: .boolean, description: "true: only people I follow (sign-in required)")
        }
        static var radiusKm: OpenAPI.Parameter {
            .query(
                name: "radiusKm",
                schema: .number(maximum: (500, exclusive: false), minimum: (0, exclusive: true), defaultValue: 10))
        }
        static var historySort: OpenAPI.Parameter {
            .query(
                name: "sort",
                schema: .string(allowedValues: ["viewedAt", "postedAt", "views"], defaultValue: "viewedAt"))
        }
        static var historyQ: OpenAPI.Parameter { .query(name: "q", schema: .string(maxLength: 1000)) }
        static var searchIn: OpenAPI.Parameter {
            .query(
                name: "in", schema: .string(allowedValues: SearchText.Field.allCases.map { AnyCodable($0.rawValue) }))
        }
        static var space: OpenAPI.Parameter { .query(name: "space", schema: .string, description: "a space's slug") }
        static var unread: OpenAPI.Parameter { .query(name: "unread", schema: .boolean) }
        static var lastEventId: OpenAPI.Parameter {
            .query(
                name: "lastEventId", schema: .integer(minimum: (0, exclusive: false)),
                description: "the id of the last event received (or the Last-Event-ID header)")
        }
        static var deviceToken: OpenAPI.Parameter {
            .header(
                name: "Plaza-Device-Token", schema: .string(maxLength: 200),
                description: """
                    The deviceToken of an earlier sign-in to this account: this client then has its own failure \
                    budget and is not locked out by other people's wrong guesses
                    """)
        }
        static var activityType: OpenAPI.Parameter {
            .query(
                name: "activity", schema: .string(maxLength: 40),
                description: "activities of this type only (as written, e.g. Running)")
        }
        static var activityProgress: OpenAPI.Parameter {
            .query(
                name: "progress", schema: .string(allowedValues: ["done", "ongoing"]),
                description: "activities done (100%) or still going")
        }
        static var kind: OpenAPI.Parameter {
            .query(name: "kind", schema: .string(allowedValues: ["text", "photo", "link", "activity"]))
        }
    }
}
