import OpenAPIKit
import PlazaAPI

/// The component schemas of the OpenAPI document: the objects of API.md and the request bodies.
extension OpenAPIDocument {
    package enum Schemas {
        /// An object schema; every property is required unless `required` names the required ones.
        package static func object(
            _ properties: [String: JSONSchema], required: [String]? = nil, description: String? = nil
        ) -> JSONSchema {
            let required = required ?? Array(properties.keys)
            // Sorted by name, so the `required` list OpenAPIKit derives from them is too.
            var ordered = OrderedDictionary<String, JSONSchema>()
            for (name, schema) in properties.sorted(by: { $0.key < $1.key }) {
                ordered[name] = required.contains(name) ? schema : schema.optionalSchemaObject()
            }
            return .object(description: description, properties: ordered)
        }
        static func string(maxLength: Int? = nil, format: JSONTypeFormat.StringFormat = .unspecified) -> JSONSchema {
            .string(format: format, maxLength: maxLength)
        }
        static var id: JSONSchema { .string(description: "A time-ordered 64-bit ID as a decimal string") }
        static var timestamp: JSONSchema { .string(format: .dateTime) }
        static var integer: JSONSchema { .integer }
        static var boolean: JSONSchema { .boolean }
        /// A schema that also allows null: its type plus "null", or one of it and null for a reference.
        package static func nullable(_ schema: JSONSchema) -> JSONSchema {
            if case .reference = schema.value { return .one(of: [schema, .null()]) }
            return schema.nullableSchemaObject()
        }
        static func array(_ items: JSONSchema) -> JSONSchema { .array(items: items) }
        static func page(_ item: String) -> JSONSchema {
            object(["items": array(ref(item)), "nextCursor": nullable(string())])
        }
        static func integer(minimum: Int, maximum: Int) -> JSONSchema {
            .integer(maximum: (maximum, exclusive: false), minimum: (minimum, exclusive: false))
        }
        static func number(minimum: Double, maximum: Double) -> JSONSchema {
            .number(maximum: (maximum, exclusive: false), minimum: (minimum, exclusive: false))
        }
        static func pattern(_ pattern: String) -> JSONSchema { .string(pattern: pattern) }
        static func enumeration(_ values: [String]) -> JSONSchema {
            .string(allowedValues: values.map { AnyCodable($0) })
        }
        static var audience: JSONSchema {
            enumeration(PostAudience.allCases.map(\.rawValue)).with(
                description: "public: anyone; followers: the author's followers; members: members of the post's spaces")
        }
        static var spaceVisibility: JSONSchema { enumeration(SpaceVisibility.allCases.map(\.rawValue)) }
        static var spaceRole: JSONSchema { enumeration(SpaceRole.allCases.map(\.rawValue)) }

        /// The schemas with the doors' `parts`, keyed by component name; a name OpenAPI does not
        /// allow is an error.
        static func components(with parts: [Part]) throws -> OpenAPI.ComponentDictionary<JSONSchema> {
            let schemas = parts.reduce(into: all) { all, part in all.merge(part.schemas()) { a, _ in a } }
            var result: OpenAPI.ComponentDictionary<JSONSchema> = [:]
            for (name, schema) in schemas.sorted(by: { $0.key < $1.key }) {
                result[try OpenAPI.ComponentKey.forceInit(rawValue: name)] = schema
            }
            return result
        }

        static var all: [String: JSONSchema] {
            [
                peopleSchemas, postSchemas, tagSchemas, spaceSchemas, notificationSchemas, accountRequestSchemas,
                signInAndPostRequestSchemas, spaceAndCollectionRequestSchemas, moderation, instance, filters,
            ].reduce(into: [:]) { all, part in all.merge(part) { a, _ in a } }
        }

        private static var peopleSchemas: [String: JSONSchema] {
            [
                "Error": object([
                    "error": object(
                        ["code": string(), "message": string(), "field": string(), "challenge": string()],
                        required: ["code", "message"])
                ]),
                "Health": object(["status": string()]),
                "Media": object([
                    "id": id, "contentType": string(), "width": integer, "height": integer,
                    "blurhash": nullable(string()), "url": string(),
                    "variants": object(["thumbnail": string(), "medium": string(), "original": string()]),
                    "state": enumeration(MediaState.allCases.map(\.rawValue)),
                    "duration": nullable(number(minimum: 0, maximum: 86_400)),
                    "progress": nullable(integer(minimum: 0, maximum: 100)),
                    "description": nullable(string(maxLength: MediaActions.maxAltTextLength)),
                ]),
                "UserStatus": object(["kind": string(), "text": string(), "updatedAt": timestamp]),
                "UserSummary": object([
                    "id": id, "username": string(), "displayName": string(), "avatar": nullable(ref("Media")),
                    "status": nullable(ref("UserStatus")),
                ]),
                "User": object(
                    [
                        "id": id, "username": string(), "displayName": string(), "bio": string(),
                        "avatar": nullable(ref("Media")), "status": nullable(ref("UserStatus")), "createdAt": timestamp,
                        "locked": boolean.with(description: "Follows need this person's approval"),
                        "counts": object(["posts": integer, "followers": integer, "following": integer]),
                        "viewer": object(
                            [
                                "following": boolean, "followedBy": boolean, "blocking": boolean, "requested": boolean,
                                "muting": boolean,
                            ],
                            description: "Present when signed in; requested: my follow request waits for approval"),
                    ],
                    required: [
                        "id", "username", "displayName", "bio", "avatar", "status", "locked", "createdAt", "counts",
                    ]),
                "Me": .all(of: [
                    ref("User"),
                    object([
                        "email": string(), "emailVerified": boolean, "pendingEmail": nullable(string()),
                        "preferences": ref("Preferences"), "isAdmin": boolean, "unreadNotifications": integer,
                    ]),
                ]),
                "Preferences": .object(
                    description: """
                        Free-form app preferences, e.g. {"lastSpace": "cs101"}. Plaza reads timeZone (an IANA name, \
                        e.g. Europe/Berlin: the days of the activity heatmap), language (a BCP 47 tag: the web app's \
                        language) and push ({kind: bool}); a bad value of one of them is a 422
                        """),
                "SpaceSummary": object(["id": id, "slug": string(), "name": string()]),
            ]
        }

        /// Posts and their tags.
        private static var tagSchemas: [String: JSONSchema] {
            [
                "Post": postSchema,
                "HashtagSummary": object(["name": string(), "key": string(), "following": boolean]),
                "HashtagSummaryPage": page("HashtagSummary"),
                "LinkPreviewPage": page("LinkPreview"),
                "PostVersion": object([
                    "title": nullable(string()), "body": nullable(string()), "contentWarning": nullable(string()),
                    "sensitive": boolean, "media": array(ref("Media")),
                    "poll": nullable(object(["options": array(string()), "multiple": boolean])),
                    "createdAt": timestamp,
                ]),
                "Poll": object(
                    [
                        "id": id,
                        "options": array(object(["title": string(), "votes": nullable(integer)])),
                        "multiple": boolean, "expiresAt": timestamp, "expired": boolean, "votersCount": integer,
                        "votesCount": nullable(integer),
                        "viewer": object(["voted": boolean, "choices": array(integer)]),
                    ],
                    description: """
                        A post's poll (its id is the post's). Each option's votes and votesCount are null until the \
                        reader may see results: once they voted, to its author, and to everyone once it ended
                        """),
                "PollInput": object(
                    [
                        "options": .array(
                            minItems: PollRules.optionCount.lowerBound, maxItems: PollRules.optionCount.upperBound,
                            items: string(maxLength: PollRules.maxOptionLength)),
                        "multiple": boolean,
                        "expiresInSeconds": integer(
                            minimum: PollRules.expiresInSeconds.lowerBound,
                            maximum: PollRules.expiresInSeconds.upperBound),
                    ], required: ["options", "expiresInSeconds"],
                    description: "Different options; not on a post with photos or videos"),
                "PollVoteRequest": object(
                    ["choices": .array(minItems: 1, maxItems: PollRules.optionCount.upperBound, items: integer)]),
                "PostVersionPage": page("PostVersion"),
            ]
        }

        private static var postSchema: JSONSchema {
            object(
                [
                    "id": id, "kind": enumeration(["text", "photo", "link", "activity"]),
                    "author": ref("UserSummary"),
                    "title": nullable(string()), "body": nullable(string()), "spaces": array(ref("SpaceSummary")),
                    "media": array(ref("Media")), "link": nullable(ref("LinkPreview")),
                    "location": nullable(ref("Location")), "activity": nullable(ref("Activity")),
                    "price": nullable(string()), "createdAt": timestamp, "editedAt": nullable(timestamp),
                    "audience": audience,
                    "counts": object(["likes": integer, "comments": integer, "boosts": integer]),
                    "viewer": object(["liked": boolean, "saved": boolean, "boosted": boolean]),
                    "boost": nullable(object(["id": id, "by": ref("UserSummary"), "at": timestamp])).with(
                        description: "on a home feed's item a boost brought: the boost, who boosted it, when"),
                    "tags": array(string()).with(description: "its hashtags' keys, folded as search folds text"),
                    "contentWarning": nullable(string()), "sensitive": boolean,
                    "pinned": boolean.with(
                        description: """
                            pinned where it is shown: to its author's profile (their profile, pinned list and the \
                            post's own page) or to its space's top (that space's feed and pinned list)
                            """),
                    "filtered": array(ref("FilterMatch")).with(
                        description:
                            "The viewer's keyword filters that put this post behind a warning; absent when none"
                    ),
                    "poll": nullable(ref("Poll")),
                ],
                required: [
                    "id", "kind", "author", "title", "body", "spaces", "media", "link", "location", "activity",
                    "price", "createdAt", "editedAt", "audience", "counts", "viewer", "tags", "contentWarning",
                    "sensitive", "pinned", "boost", "poll",
                ])
        }

        private static var postSchemas: [String: JSONSchema] {
            [
                "LinkPreview": object([
                    "url": string(), "title": nullable(string()), "description": nullable(string()),
                    "imageURL": nullable(string()), "siteName": nullable(string()), "fetchedAt": nullable(timestamp),
                    "embedURL": nullable(string()).with(
                        description: "a YouTube (youtube-nocookie.com) or Vimeo (player.vimeo.com) player for an iframe"
                    ),
                ]),
                "Location": object(
                    [
                        "latitude": number(minimum: -90, maximum: 90), "longitude": number(minimum: -180, maximum: 180),
                        "name": nullable(string(maxLength: PostRules.maxLocationNameLength)),
                    ], required: ["latitude", "longitude"]),
                "Activity": object([
                    "type": string(), "emoji": nullable(string()), "color": nullable(string()),
                    "progress": integer(minimum: 0, maximum: 100), "completedAt": nullable(timestamp),
                ]),
                "Comment": object(
                    [
                        "id": id, "postId": id, "author": ref("UserSummary"), "body": string(),
                        "createdAt": timestamp,
                        "filtered": array(ref("FilterMatch")).with(
                            description:
                                "The viewer's keyword filters that put this comment behind a warning; absent when none"
                        ),
                    ], required: ["id", "postId", "author", "body", "createdAt"]),
                "LikeState": object(["liked": boolean, "likes": integer]),
                "Session": object([
                    "id": id, "createdAt": timestamp, "lastUsedAt": timestamp, "expiresAt": timestamp,
                    "userAgent": nullable(string()), "ip": nullable(string()), "current": boolean,
                    "app": nullable(string()).with(
                        description: "The app let in with OAuth (a Mastodon app), by its name"),
                    "scopes": nullable(string()).with(description: "What that app may do: its OAuth scopes"),
                ]),
                "AuthResponse": object([
                    "user": ref("Me"), "token": string(),
                    "deviceToken": nullable(string(maxLength: 200)).with(
                        description: """
                            Proof that this client signed in: send it in the Plaza-Device-Token header when signing in or \
                            confirming the password (docs/operations.md)
                            """),
                ]),
            ]
        }

        private static var spaceSchemas: [String: JSONSchema] {
            [
                "Space": object([
                    "id": id, "slug": string(), "name": string(), "description": string(),
                    "visibility": spaceVisibility, "image": nullable(ref("Media")), "owner": ref("UserSummary"),
                    "counts": object(["members": integer, "posts": integer]),
                    "viewer": object([
                        "member": boolean, "owner": boolean, "role": nullable(spaceRole), "requested": boolean,
                    ]),
                    "createdAt": timestamp,
                ]),
                "SpaceMember": object(["user": ref("UserSummary"), "role": spaceRole, "joinedAt": timestamp]),
                "SpaceMemberPage": page("SpaceMember"),
                "JoinRequest": object(["user": ref("UserSummary"), "requestedAt": timestamp]),
                "JoinRequestPage": page("JoinRequest"),
                "SpaceInvite": object([
                    "code": string(), "url": string(), "expiresAt": nullable(timestamp), "maxUses": nullable(integer),
                ]),
                "SavedCollection": object([
                    "id": id, "name": string(), "counts": object(["items": integer]), "createdAt": timestamp,
                ]),
                "CollectionItem": object(
                    [
                        "id": id, "collectionId": id, "post": nullable(ref("Post")),
                        "link": nullable(ref("LinkPreview")), "note": string(),
                        "state": enumeration(["ready", "pending", "failed", "unavailable"]), "savedAt": timestamp,
                    ],
                    description: """
                        state: pending while a link's preview is fetched; failed when none could be made (show domain \
                        and URL); unavailable when the saved post is gone or hidden
                        """),
                "ActivityHeatmap": object([
                    "days": array(
                        object([
                            "date": string(format: .date), "completed": integer, "posted": integer,
                            "unfinished": integer,
                        ])),
                    "timeZone": string(), "streak": object(["current": integer, "longest": integer]),
                ]),
                "HistoryItem": object([
                    "post": ref("Post"), "firstViewedAt": timestamp, "viewedAt": timestamp, "views": integer,
                    "clicks": integer,
                ]),
                "HistoryItemPage": page("HistoryItem"),
            ]
        }

        private static var notificationSchemas: [String: JSONSchema] {
            [
                "Notification": object(
                    [
                        "id": id, "kind": enumeration(NotificationKind.allCases.map(\.rawValue)),
                        "actor": ref("User"), "actors": array(ref("UserSummary")), "actorCount": integer,
                        "post": nullable(ref("Post")), "comment": nullable(ref("Comment")), "createdAt": timestamp,
                        "read": boolean,
                    ],
                    description: """
                        like and follow group while unread (actor is the latest, actors the latest three, actorCount \
                        all); reply: a comment on a post whose thread I commented in
                        """),
                "NotificationPage": page("Notification"),
                "MarkNotificationsReadRequest": object(["ids": .array(maxItems: 100, items: id)], required: []),
                "Suggestions": object(["people": array(ref("User")), "spaces": array(ref("Space"))]),
                "SpacePage": page("Space"), "SavedCollectionPage": page("SavedCollection"),
                "CollectionItemPage": page("CollectionItem"), "PostPage": page("Post"), "UserPage": page("User"),
                "CommentPage": page("Comment"), "SessionPage": page("Session"), "MediaPage": page("Media"),
                // Request bodies
                "RegisterRequest": object(
                    [
                        "username": pattern(
                            "^[A-Za-z0-9_]{\(AccountRules.usernameLength.lowerBound),\(AccountRules.usernameLength.upperBound)}$"
                        ),
                        "email": string(maxLength: AccountRules.maxEmailLength),
                        "password": .string(
                            minLength: AccountRules.passwordLength.lowerBound,
                            maxLength: AccountRules.passwordLength.upperBound),
                        "displayName": string(maxLength: AccountRules.maxDisplayNameLength),
                        "invite": string(maxLength: 64), "reason": string(maxLength: InstanceStore.maxReason),
                    ], required: ["username", "email", "password"],
                    description: """
                        invite: the invite's code when registrations are invite; reason: why, for the admins, when                         they are approval (GET /about says which)
                        """),
                "LoginRequest": object([
                    "login": string(maxLength: AccountRules.maxEmailLength),
                    "password": string(maxLength: AccountRules.passwordLength.upperBound),
                ]),
                "UpdateMeRequest": object(
                    [
                        "displayName": string(maxLength: AccountRules.maxDisplayNameLength),
                        "bio": string(maxLength: AccountRules.maxBioLength),
                        "status": nullable(
                            object([
                                "kind": pattern("^[a-z0-9_]{1,32}$"),
                                "text": string(maxLength: AccountRules.maxStatusTextLength),
                            ])),
                        "locked": boolean,
                    ], required: []),
                "SetAvatarRequest": object(["mediaId": nullable(id)]),
                "UpdateMediaRequest": object([
                    "description": nullable(string(maxLength: MediaActions.maxAltTextLength))
                ]),
                "CurrentPasswordRequest": object(["currentPassword": string()]),
                "AccountDeletionScheduled": object(["deletesAt": timestamp]),
                "ForgotPasswordRequest": object(["email": string(maxLength: AccountRules.maxEmailLength)]),
            ]
        }

        private static var accountRequestSchemas: [String: JSONSchema] {
            [
                "ResetPasswordRequest": object([
                    "token": string(maxLength: 100),
                    "newPassword": .string(
                        minLength: AccountRules.passwordLength.lowerBound,
                        maxLength: AccountRules.passwordLength.upperBound),
                ]),
                "VerifyEmailRequest": object(["token": string(maxLength: 100)]),
                "ChangeEmailRequest": object([
                    "email": string(maxLength: AccountRules.maxEmailLength), "currentPassword": string(),
                ]),
                "OutgoingMail": object([
                    "id": id,
                    "kind": enumeration(MailMessage.Kind.allCases.map(\.rawValue)),
                    "to": string(), "subject": string(), "state": enumeration(["pending", "sent", "failed"]),
                    "attempts": integer, "createdAt": timestamp, "sentAt": nullable(timestamp),
                    "nextAttemptAt": nullable(timestamp), "lastError": nullable(string()),
                ]),
                "OutgoingMailPage": page("OutgoingMail"),
                "RegisterPushDeviceRequest": object(
                    [
                        "platform": enumeration(PushPlatform.allCases.map(\.rawValue)),
                        "token": pattern("^[0-9a-fA-F]{64,200}$").with(description: "APNs: the device token in hex"),
                        "environment": enumeration(["production", "sandbox"]),
                        "bundleId": string(maxLength: 155), "endpoint": string(maxLength: 2048),
                        "keys": ref("WebPushKeys"),
                    ], required: ["platform"],
                    description: "APNs: token (environment, bundleId); Web Push: endpoint and keys"),
                "WebPushKeys": object(["p256dh": string(maxLength: 200), "auth": string(maxLength: 200)]),
                "PushDevice": object([
                    "id": id, "platform": enumeration(PushPlatform.allCases.map(\.rawValue)),
                    "environment": nullable(string()), "bundleId": nullable(string()), "label": string(),
                    "thisSession": boolean, "createdAt": timestamp, "lastUsedAt": nullable(timestamp),
                ]),
                "PushDevicePage": page("PushDevice"),
                "WebPushKey": object(["publicKey": string()]),
                "AuthProviderInfo": object(["id": string(), "name": string(), "kind": enumeration(["oidc", "oauth2"])]),
                "ProviderTokenRequest": object(
                    [
                        "idToken": string(maxLength: 16_384), "accessToken": string(maxLength: 4096),
                        "nonce": string(maxLength: 256),
                    ], required: []),
                "LinkedIdentity": object([
                    "provider": string(), "name": string(), "email": nullable(string()), "linkedAt": timestamp,
                    "lastUsedAt": timestamp,
                ]),
                "LinkedIdentityPage": page("LinkedIdentity"),
                "TwoFactorSetup": object(["secret": string(), "otpauthURL": string(), "qrCode": string()]),
                "ConfirmTwoFactorRequest": object(["code": string(maxLength: AccountRules.maxCodeLength)]),
                "RecoveryCodes": object(["recoveryCodes": array(string())]),
                "TwoFactorStatus": object(["enabled": boolean, "recoveryCodesLeft": integer]),
            ]
        }

        private static var signInAndPostRequestSchemas: [String: JSONSchema] {
            [
                "SecondFactorRequest": object([
                    "challenge": string(maxLength: 100), "code": string(maxLength: AccountRules.maxCodeLength),
                ]),
                "ChangePasswordRequest": object([
                    "currentPassword": string(),
                    "newPassword": .string(
                        minLength: AccountRules.passwordLength.lowerBound,
                        maxLength: AccountRules.passwordLength.upperBound),
                ]),
                "ActivityInput": object(
                    [
                        "type": string(maxLength: PostRules.maxActivityTypeLength),
                        "emoji": string(maxLength: PostRules.maxEmojiLength),
                        "color": pattern("^#[0-9A-Fa-f]{6}$"), "progress": integer(minimum: 0, maximum: 100),
                    ], required: []),
                "CreatePostRequest": object(
                    [
                        "kind": enumeration(["text", "photo", "link", "activity"]),
                        "title": string(maxLength: PostRules.maxTitleLength),
                        "body": string(maxLength: PostRules.maxBodyLength), "spaces": array(string()),
                        "mediaIds": array(id),
                        "link": object(["url": string(maxLength: Validate.maxURLLength, format: .uri)]),
                        "location": ref("Location"),
                        "activity": ref("ActivityInput"), "price": string(maxLength: PostRules.maxPriceLength),
                        "audience": audience,
                        "contentWarning": string(maxLength: PostRules.maxContentWarningLength), "sensitive": boolean,
                        "poll": ref("PollInput"),
                    ], required: ["kind"],
                    description: """
                        text needs title or body; link needs link.url; activity needs activity.type; photo needs \
                        1–10 mediaIds; title and body carry at most \(Hashtag.maxPerPost) different hashtags \
                        (422 too_many_tags)
                        """),
                "UpdatePostRequest": object(
                    [
                        "title": nullable(string(maxLength: PostRules.maxTitleLength)),
                        "body": nullable(string(maxLength: PostRules.maxBodyLength)),
                        "location": nullable(ref("Location")),
                        "price": nullable(string(maxLength: PostRules.maxPriceLength)),
                        "activity": ref("ActivityInput"), "spaces": array(string()), "audience": audience,
                        "contentWarning": nullable(string(maxLength: PostRules.maxContentWarningLength)),
                        "sensitive": boolean, "poll": nullable(ref("PollInput")),
                    ], required: [],
                    description: """
                        Left-out fields stay as they are; null clears. A poll asking the same options keeps its votes \
                        (only its end moves); other options replace it, votes and all. In a closed or private space the audience is \
                        members whatever is asked
                        """),
                "CreateCommentRequest": object(["body": string(maxLength: PostRules.maxCommentLength)]),
                "RecommendPostRequest": object([
                    "to": .array(minItems: 1, maxItems: PostRules.maxRecipients, items: string())
                ]),
            ]
        }

        private static var spaceAndCollectionRequestSchemas: [String: JSONSchema] {
            [
                "CreateSpaceRequest": object(
                    [
                        "slug": pattern("^[A-Za-z0-9][A-Za-z0-9_-]{1,\(SpaceRules.maxSlugLength - 1)}$"),
                        "name": string(maxLength: SpaceRules.maxNameLength),
                        "description": string(maxLength: SpaceRules.maxDescriptionLength), "imageId": id,
                        "visibility": spaceVisibility,
                    ], required: ["slug", "name"]),
                "UpdateSpaceRequest": object(
                    [
                        "name": string(maxLength: SpaceRules.maxNameLength),
                        "description": string(maxLength: SpaceRules.maxDescriptionLength), "imageId": nullable(id),
                        "visibility": spaceVisibility,
                    ],
                    required: [],
                    description: "Closing a space (closed, private) makes the posts in it members-only"),
                "UpdateMemberRequest": object(["role": enumeration(["moderator", "member"])]),
                "CreateInviteRequest": object(
                    ["maxUses": integer(minimum: 1, maximum: 100_000), "expiresAt": timestamp], required: []),
                "CollectionRequest": object(["name": string(maxLength: CollectionRules.maxNameLength)]),
                "SaveItemRequest": object(
                    [
                        "postId": id, "url": string(maxLength: Validate.maxURLLength, format: .uri),
                        "note": string(maxLength: CollectionRules.maxNoteLength),
                    ],
                    required: [], description: "Either postId or url"),
                "UpdateItemRequest": object(
                    ["collectionId": id, "note": string(maxLength: CollectionRules.maxNoteLength)], required: []),
            ]
        }
    }
}
