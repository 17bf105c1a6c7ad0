import OpenAPIKit
import PlazaServer

/// Mastodon's client API at Mastodon's paths (docs/mastodon.md). Its entities are Mastodon's, as
/// documented at docs.joinmastodon.org; the schemas here hold the keys clients cannot do without.
/// Bodies are JSON or forms; errors are `{"error": "…"}`.
extension OpenAPIDocument {
    static var mastodonOperations: [(String, Operation)] { MastodonOperations().all }

    /// The operations, with the parameters, schemas and defaults they share.
    struct MastodonOperations {
        let v2 = "/api/v2"
        let statusPage = [mastodonLimit(20, 40), maxID, sinceID, minID]
        let accountPage = [mastodonLimit(40, 80), maxID, sinceID, minID]
        func op(
            _ method: OpenAPI.HttpMethod, _ summary: String, _ auth: Auth, _ response: JSONSchema? = nil,
            query: [OpenAPI.Parameter] = [], body: Bool = false, status: Int = 200, also: [Int] = [],
            errors: [Int] = [], upload: Bool = false, eventStream: Bool = false
        ) -> Operation {
            var operation = Operation(mastodon: method, summary: summary, auth: auth)
            operation.query = query
            operation.eventStream = eventStream
            operation.status = status
            operation.alsoStatus = also
            operation.response = response
            operation.errors = errors + (auth == .none ? [] : [403])
            operation.upload = upload
            operation.mastodonBody = body
            return operation
        }
        let status = ref("MastodonStatus")
        let account = ref("MastodonAccount")
        var statuses: JSONSchema { .array(items: status) }
        var accounts: JSONSchema { .array(items: account) }
        let relationship = ref("MastodonRelationship")
        let empty = JSONSchema.array(items: .object)

        var all: [(String, Operation)] {
            [
                oauth, appsAndAccounts, relationships, timelinesAndStatuses, tags, notificationsAndMore,
                pushAndStreaming, filters, lists, personalLists, inbox, suggestionsAndInstance, emptyFeatures, streams,
            ].flatMap { $0 }
        }

        /// OAuth's endpoints, at the root: they take the app's credentials, not a token.
        var oauth: [(String, Operation)] {
            [
                (
                    "/oauth/token",
                    op(
                        .post, "A token: authorization_code (with the PKCE verifier), client_credentials or password",
                        .none, .object, body: true, errors: [401, 403])
                ),
                (
                    "/oauth/revoke",
                    op(
                        .post, "Revoke a token (client_id, client_secret, token)", .none, .object, body: true,
                        errors: [401, 403])
                ),
                (
                    "/.well-known/oauth-authorization-server",
                    op(.get, "The server's OAuth 2 metadata (RFC 8414)", .none, .object)
                ),
            ]
        }

        var appsAndAccounts: [(String, Operation)] {
            [
                (
                    "\(v1)/apps",
                    op(
                        .post, "Register an app (client_name, redirect_uris, scopes, website)", .none, .object,
                        body: true)
                ),
                ("\(v1)/apps/verify_credentials", op(.get, "The app behind the token", .required, .object)),
                (
                    "\(v1)/instance",
                    op(.get, "The instance (Mastodon v1 entity; version 4.3.0 compatible)", .none, .object)
                ),
                ("\(v2)/instance", op(.get, "The instance (Mastodon v2 entity)", .none, .object)),
                ("\(v1)/instance/rules", op(.get, "The server's rules", .none, .array)),
                ("\(v1)/accounts/verify_credentials", op(.get, "My account, with `source`", .required, account)),
                (
                    "\(v1)/accounts/update_credentials",
                    op(
                        .patch, "Change my display_name, note (bio), locked or avatar (a multipart form)", .required,
                        account, body: true)
                ),
                (
                    "\(v1)/accounts/lookup",
                    op(
                        .get, "An account by username (acct)", .optional, account,
                        query: [.query(name: "acct", schema: .string)], errors: [404])
                ),
                (
                    "\(v1)/accounts/relationships",
                    op(
                        .get, "My relationships to the accounts id[]", .required, .array(items: relationship),
                        query: [idArray])
                ),
                (
                    "\(v1)/accounts/search",
                    op(.get, "Accounts whose name matches q", .optional, accounts, query: [q, mastodonLimit(40, 80)])
                ),
                ("\(v1)/accounts/{id}", op(.get, "An account", .optional, account)),
                (
                    "\(v1)/accounts/{id}/statuses",
                    op(
                        .get, "An account's posts, newest first; pinned=true, those pinned to its profile", .optional,
                        statuses, query: statusPage)
                ),
                (
                    "\(v1)/accounts/{id}/followers",
                    op(.get, "Who follows the account", .optional, accounts, query: accountPage)
                ),
                (
                    "\(v1)/accounts/{id}/following",
                    op(.get, "Whom the account follows", .optional, accounts, query: accountPage)
                ),
            ]
        }

        var relationships: [(String, Operation)] {
            var operations: [(String, Operation)] = []
            for action in ["follow", "unfollow", "block", "unblock", "mute", "unmute"] {
                operations.append(
                    (
                        "\(v1)/accounts/{id}/\(action)",
                        op(.post, "\(action.capitalized) the account", .required, relationship, errors: [422])
                    ))
            }
            return operations
        }

        /// Tags and boosts.
        var tags: [(String, Operation)] {
            [
                (
                    "\(v1)/statuses/{id}/reblog",
                    op(.post, "Boost a public post: the boost's status, the post inside", .required, status)
                ),
                ("\(v1)/statuses/{id}/unreblog", op(.post, "Undo my boost: the post", .required, status)),
                ("\(v1)/polls/{id}", op(.get, "A post's poll (its id is the post's)", .optional, .object)),
                (
                    "\(v1)/polls/{id}/votes",
                    op(
                        .post, "Vote with choices[] (option indexes): the poll with its results", .required, .object,
                        errors: [422])
                ),
                ("\(v1)/trends", op(.get, "Trending tags (as trends/tags)", .optional, .array(items: .object))),
                (
                    "\(v1)/trends/statuses",
                    op(.get, "The public posts the most people liked or boosted lately", .optional, statuses)
                ),
                (
                    "\(v1)/trends/links",
                    op(.get, "The links the most people shared lately", .optional, .array(items: .object))
                ),
                (
                    "\(v1)/trends/tags",
                    op(.get, "The tags the most people used lately, with their week", .optional, .array(items: .object))
                ),
                (
                    "\(v1)/statuses/{id}/history",
                    op(.get, "A post's versions, oldest first (the last is now)", .optional, .array(items: .object))
                ),
                ("\(v1)/statuses/{id}/source", op(.get, "A post as written, to edit it", .required, .object)),
                (
                    "\(v1)/statuses/{id}/pin",
                    op(.post, "Pin my post to my profile (five at most): the post, pinned", .required, status)
                ),
                ("\(v1)/statuses/{id}/unpin", op(.post, "Unpin my post: the post", .required, status)),
                (
                    "\(v1)/tags/{tag}",
                    op(.get, "A tag, its last week's use, and whether I follow it", .optional, .object)
                ),
                (
                    "\(v1)/tags/{tag}/follow",
                    op(.post, "Follow the tag: its public posts come home", .required, .object)
                ),
                ("\(v1)/tags/{tag}/unfollow", op(.post, "Unfollow the tag", .required, .object)),
                ("\(v1)/followed_tags", op(.get, "The tags I follow", .required, .array(items: .object))),
            ]
        }

        var timelinesAndStatuses: [(String, Operation)] {
            [
                ("\(v1)/timelines/home", op(.get, "My home feed", .required, statuses, query: statusPage)),
                ("\(v1)/timelines/public", op(.get, "Everyone's public posts", .optional, statuses, query: statusPage)),
                (
                    "\(v1)/timelines/tag/{tag}",
                    op(.get, "The tag's public posts, newest first", .optional, statuses, query: statusPage)
                ),
                (
                    "\(v1)/statuses",
                    op(
                        .post,
                        "Post (status, media_ids[], visibility, spoiler_text, sensitive), or comment (in_reply_to_id)",
                        .required,
                        status, body: true, errors: [404])
                ),
                ("\(v1)/statuses/{id}", op(.get, "A post or a comment", .optional, status)),
                (
                    "\(v1)/statuses/{id}",
                    op(.delete, "Delete my post or comment; the answer has its text", .required, status)
                ),
                (
                    "\(v1)/statuses/{id}",
                    op(.put, "Edit my post's text, spoiler_text and sensitive", .required, status, body: true)
                ),
                ("\(v1)/statuses/{id}/context", op(.get, "A post's comments, or a comment's post", .optional, .object)),
                ("\(v1)/statuses/{id}/favourite", op(.post, "Like", .required, status)),
                ("\(v1)/statuses/{id}/unfavourite", op(.post, "Unlike", .required, status)),
                (
                    "\(v1)/statuses/{id}/favourited_by",
                    op(.get, "Who liked it", .optional, accounts, query: [mastodonLimit(40, 80)])
                ),
                (
                    "\(v1)/statuses/{id}/reblogged_by",
                    op(.get, "Who boosted it", .optional, accounts, query: [mastodonLimit(40, 80)])
                ),
                ("\(v1)/statuses/{id}/bookmark", op(.post, "Save into my Bookmarks collection", .required, status)),
                ("\(v1)/statuses/{id}/unbookmark", op(.post, "Take out of my Bookmarks collection", .required, status)),
                (
                    "\(v2)/media",
                    op(
                        .post, "Upload a photo or video (202 while a video is processed)", .required,
                        ref("MastodonMediaAttachment"), also: [202], upload: true)
                ),
                (
                    "\(v1)/media",
                    op(
                        .post, "Upload a photo or video", .required, ref("MastodonMediaAttachment"), also: [202],
                        upload: true)
                ),
                (
                    "\(v1)/media/{id}",
                    op(.get, "My upload (206 while processed)", .required, ref("MastodonMediaAttachment"), also: [206])
                ),
            ]
        }

        var notificationsAndMore: [(String, Operation)] {
            [
                (
                    "\(v1)/media/{id}",
                    op(
                        .put, "Sets my upload's description (alt text; a focus is not kept)", .required,
                        ref("MastodonMediaAttachment"),
                        body: true, also: [206])
                ),
                (
                    "\(v1)/notifications",
                    op(
                        .get, "My notifications, newest first (account_id: only that account's)", .required,
                        .array(items: ref("MastodonNotification")),
                        query: [
                            mastodonLimit(40, 80), maxID, sinceID, OpenAPIDocument.closestMinID,
                            .query(name: "account_id", schema: .string, description: "Only this account's"),
                        ])
                ),
                (
                    "\(v2)/notifications",
                    op(
                        .get, "My notifications, grouped (likes of a post, follows) as Plaza groups them", .required,
                        .object, query: [mastodonLimit(40, 80), maxID, sinceID, OpenAPIDocument.closestMinID])
                ),
                (
                    "\(v1)/notifications/{id}",
                    op(.get, "One of my notifications", .required, ref("MastodonNotification"))
                ),
                ("\(v1)/notifications/clear", op(.post, "Delete all my notifications", .required, .object)),
                ("\(v1)/notifications/{id}/dismiss", op(.post, "Delete one of my notifications", .required, .object)),
                (
                    "\(v2)/search",
                    op(
                        .get, "Accounts, statuses (and the hashtag asked for) matching q", .optional, .object,
                        query: [
                            q, .query(name: "type", schema: .string(allowedValues: "accounts", "statuses", "hashtags")),
                            mastodonLimit(20, 40),
                        ])
                ),
                ("\(v1)/markers", op(.get, "Where I stopped reading (timeline[])", .required, .object)),
                (
                    "\(v1)/markers",
                    op(.post, "Save where I stopped reading", .required, .object, body: true, errors: [422])
                ),
                ("\(v1)/preferences", op(.get, "My posting and reading preferences", .required, .object)),
                (
                    "\(v1)/follow_requests",
                    op(.get, "Who asks to follow me, newest request first", .required, accounts, query: accountPage)
                ),
                ("\(v1)/follow_requests/{id}/authorize", op(.post, "Accept a follow request", .required, relationship)),
                ("\(v1)/follow_requests/{id}/reject", op(.post, "Refuse a follow request", .required, relationship)),
                ("\(v1)/streaming/health", op(.get, "OK when streaming works", .none)),
            ]
        }

        var pushAndStreaming: [(String, Operation)] {
            [
                (
                    "\(v1)/push/subscription",
                    op(
                        .post,
                        """
                        Subscribe this token to Web Push (subscription[endpoint], subscription[keys][p256dh|auth], \
                        subscription[standard] for aes128gcm, else aesgcm; data[alerts][…], data[policy]); replaces its last
                        """, .required, .object, body: true)
                ),
                (
                    "\(v1)/push/subscription",
                    op(.get, "This token's push subscription", .required, .object, errors: [404])
                ),
                (
                    "\(v1)/push/subscription",
                    op(.put, "Change its alerts or policy", .required, .object, body: true, errors: [404])
                ),
                ("\(v1)/push/subscription", op(.delete, "Unsubscribe this token", .required, .object)),
                (
                    "\(v1)/streaming",
                    op(
                        .get,
                        """
                        Mastodon's streaming WebSocket (token as Bearer, access_token or Sec-WebSocket-Protocol); \
                        a plain GET is 400, and so is a refused upgrade
                        """, .none)
                ),
            ]
        }

        var emptyFeatures: [(String, Operation)] {
            var operations: [(String, Operation)] = []
            for (path, auth) in [
                ("custom_emojis", Auth.none),
                ("announcements", .none), ("conversations", .required),
                ("scheduled_statuses", .required), ("endorsements", .required), ("featured_tags", .required),
                ("domain_blocks", .required), ("featured_tags/suggestions", .required),
            ] {
                operations.append(("\(v1)/\(path)", op(.get, "Empty: no such feature in Plaza", auth, empty)))
            }
            return operations
        }

        var streams: [(String, Operation)] {
            var operations: [(String, Operation)] = []
            for (path, auth) in [
                ("user", Auth.required), ("user/notification", .required), ("public", .required),
                ("public/local", .required), ("public/media", .required), ("public/local/media", .required),
            ] {
                operations.append(
                    (
                        "\(v1)/streaming/\(path)",
                        op(.get, "Mastodon's \(path) stream as Server-Sent Events", auth, eventStream: true)
                    ))
            }
            return operations
        }
    }

    static func mastodonLimit(_ fallback: Int, _ max: Int) -> OpenAPI.Parameter {
        .query(name: "limit", schema: .integer(defaultValue: .init(fallback)), description: "At most \(max)")
    }
    static var maxID: OpenAPI.Parameter { .query(name: "max_id", schema: .string, description: "Older than this id") }
    static var sinceID: OpenAPI.Parameter {
        .query(name: "since_id", schema: .string, description: "Newer than this id")
    }
    static var minID: OpenAPI.Parameter {
        .query(name: "min_id", schema: .string, description: "Newer than this id (served like since_id)")
    }
    /// Notifications read `min_id` upwards: the page just above it.
    static var closestMinID: OpenAPI.Parameter {
        .query(name: "min_id", schema: .string, description: "The page just newer than this id")
    }
    static var q: OpenAPI.Parameter { .query(name: "q", schema: .string) }
    /// Repeated (`id[]=1&id[]=2`), as Mastodon's clients send it. Described as one string: an
    /// array-typed query parameter crashed schemathesis's coverage phase (a CPython 3.11 `ast`
    /// error in hypothesis, under two workers), failing `make test` without a request sent.
    static var idArray: OpenAPI.Parameter {
        .query(name: "id[]", schema: .string, description: "An account id; repeat the parameter for more")
    }

    /// The keys of Mastodon's entities every client reads (docs.joinmastodon.org/entities).
    static var mastodonSchemas: [String: JSONSchema] {
        func entity(_ keys: [String: JSONSchema]) -> JSONSchema { Schemas.object(keys) }
        let string = JSONSchema.string
        return [
            "MastodonError": entity(["error": string]),
            "MastodonAccount": entity([
                "id": string, "username": string, "acct": string, "display_name": string, "locked": .boolean,
                "bot": .boolean, "created_at": string, "note": string, "url": string, "avatar": string,
                "header": string, "followers_count": .integer, "following_count": .integer, "statuses_count": .integer,
                "emojis": .array(items: .object), "fields": .array(items: .object),
            ]),
            "MastodonStatus": entity([
                "id": string, "created_at": string, "account": ref("MastodonAccount"), "content": string,
                "visibility": .string(allowedValues: "public", "unlisted", "private", "direct"), "sensitive": .boolean,
                "spoiler_text": string, "media_attachments": .array(items: ref("MastodonMediaAttachment")),
                "mentions": .array(items: .object), "tags": .array(items: .object), "emojis": .array(items: .object),
                "reblogs_count": .integer, "favourites_count": .integer, "replies_count": .integer,
            ]),
            "MastodonMediaAttachment": entity([
                "id": string, "type": .string(allowedValues: "image", "gifv", "video", "audio", "unknown"),
                "url": Schemas.nullable(string), "preview_url": string, "meta": .object,
            ]),
            "MastodonNotification": entity([
                "id": string, "type": string, "created_at": string, "account": ref("MastodonAccount"),
            ]),
            "MastodonRelationship": entity([
                "id": string, "following": .boolean, "followed_by": .boolean, "blocking": .boolean, "muting": .boolean,
                "requested": .boolean,
            ]),
        ]
    }
}
