/// The component schemas of the OpenAPI document: the objects of API.md and the request bodies.
extension OpenAPIDocument {
    enum Schemas {
        typealias Object = OpenAPIDocument.Object

        static func object(_ properties: [String: Object], required: [String]? = nil, description: String? = nil)
            -> Object
        {
            var result: Object = [
                "type": "object", "properties": properties, "required": required ?? properties.keys.sorted(),
            ]
            if let description { result["description"] = description }
            return result
        }
        static func string(maxLength: Int? = nil, format: String? = nil) -> Object {
            var result: Object = ["type": "string"]
            if let maxLength { result["maxLength"] = maxLength }
            if let format { result["format"] = format }
            return result
        }
        static var id: Object { ["type": "string", "description": "A time-ordered 64-bit ID as a decimal string"] }
        static var timestamp: Object { ["type": "string", "format": "date-time"] }
        static var integer: Object { ["type": "integer"] }
        static var boolean: Object { ["type": "boolean"] }
        static func nullable(_ schema: Object) -> Object {
            if let type = schema["type"] as? String {
                var result = schema
                result["type"] = [type, "null"]
                return result
            }
            return ["oneOf": [schema, ["type": "null"]]]
        }
        static func array(_ items: Object) -> Object { ["type": "array", "items": items] }
        static func page(_ item: String) -> Object {
            object(["items": array(ref(item)), "nextCursor": nullable(string())])
        }

        static var all: Object {
            [
                "Error": object([
                    "error": object(
                        ["code": string(), "message": string(), "field": string()], required: ["code", "message"])
                ]),
                "Health": object(["status": string()]),
                "Media": object([
                    "id": id, "contentType": string(), "width": integer, "height": integer,
                    "blurhash": nullable(string()), "url": string(),
                    "variants": object(["thumbnail": string(), "medium": string(), "original": string()]),
                ]),
                "UserStatus": object(["kind": string(), "text": string(), "updatedAt": timestamp]),
                "UserSummary": object([
                    "id": id, "username": string(), "displayName": string(), "avatar": nullable(ref("Media")),
                ]),
                "User": object(
                    [
                        "id": id, "username": string(), "displayName": string(), "bio": string(),
                        "avatar": nullable(ref("Media")),
                        "status": nullable(ref("UserStatus")), "createdAt": timestamp,
                        "counts": object(["posts": integer, "followers": integer, "following": integer]),
                        "viewer": object(
                            ["following": boolean, "followedBy": boolean, "blocking": boolean],
                            description: "Present when signed in"),
                    ],
                    required: ["id", "username", "displayName", "bio", "avatar", "status", "createdAt", "counts"]),
                "Me": [
                    "allOf": [
                        ref("User"),
                        object([
                            "email": string(), "preferences": ref("Preferences"), "isAdmin": boolean,
                            "unreadNotifications": integer,
                        ]),
                    ]
                ],
                "Preferences": [
                    "type": "object", "description": "Free-form app preferences, e.g. {\"lastSpace\": \"cs101\"}",
                ],
                "SpaceSummary": object(["id": id, "slug": string(), "name": string()]),
                "LinkPreview": object([
                    "url": string(), "title": nullable(string()), "description": nullable(string()),
                    "imageURL": nullable(string()),
                    "siteName": nullable(string()), "fetchedAt": nullable(timestamp),
                ]),
                "Location": object(
                    [
                        "latitude": ["type": "number", "minimum": -90, "maximum": 90],
                        "longitude": ["type": "number", "minimum": -180, "maximum": 180],
                        "name": nullable(string(maxLength: 200)),
                    ], required: ["latitude", "longitude"]),
                "Activity": object([
                    "type": string(), "emoji": nullable(string()), "color": nullable(string()),
                    "progress": ["type": "integer", "minimum": 0, "maximum": 100],
                    "completedAt": nullable(timestamp),
                ]),
                "Post": object([
                    "id": id, "kind": ["type": "string", "enum": ["text", "photo", "link", "activity"]],
                    "author": ref("UserSummary"),
                    "title": nullable(string()), "body": nullable(string()), "spaces": array(ref("SpaceSummary")),
                    "media": array(ref("Media")),
                    "link": nullable(ref("LinkPreview")), "location": nullable(ref("Location")),
                    "activity": nullable(ref("Activity")),
                    "price": nullable(string()), "createdAt": timestamp, "editedAt": nullable(timestamp),
                    "counts": object(["likes": integer, "comments": integer]),
                    "viewer": object(["liked": boolean, "saved": boolean]),
                ]),
                "Comment": object([
                    "id": id, "postId": id, "author": ref("UserSummary"), "body": string(), "createdAt": timestamp,
                ]),
                "LikeState": object(["liked": boolean, "likes": integer]),
                "Session": object([
                    "id": id, "createdAt": timestamp, "lastUsedAt": timestamp, "expiresAt": timestamp,
                    "userAgent": nullable(string()),
                    "ip": nullable(string()), "current": boolean,
                ]),
                "AuthResponse": object([
                    "user": ref("Me"), "token": string(),
                    "deviceToken": nullable(string(maxLength: 200)).merging([
                        "description":
                            "Proof that this client signed in: send it in the Plaza-Device-Token header when signing in or confirming the password (docs/operations.md)"
                    ]) { $1 },
                ]),
                "Space": object([
                    "id": id, "slug": string(), "name": string(), "description": string(),
                    "image": nullable(ref("Media")), "owner": ref("UserSummary"),
                    "counts": object(["members": integer, "posts": integer]),
                    "viewer": object(["member": boolean, "owner": boolean]), "createdAt": timestamp,
                ]),
                "SavedCollection": object([
                    "id": id, "name": string(), "counts": object(["items": integer]), "createdAt": timestamp,
                ]),
                "CollectionItem": object(
                    [
                        "id": id, "collectionId": id, "post": nullable(ref("Post")),
                        "link": nullable(ref("LinkPreview")), "note": string(),
                        "state": ["type": "string", "enum": ["ready", "pending", "failed", "unavailable"]],
                        "savedAt": timestamp,
                    ],
                    description:
                        "state: pending while a link's preview is fetched; failed when none could be made (show domain and URL); unavailable when the saved post is gone or hidden"
                ),
                "ActivityHeatmap": object([
                    "days": array(object(["date": string(format: "date"), "completed": integer, "posted": integer]))
                ]),
                "HistoryItem": object([
                    "post": ref("Post"), "firstViewedAt": timestamp, "viewedAt": timestamp, "views": integer,
                    "clicks": integer,
                ]),
                "HistoryItemPage": page("HistoryItem"),
                "Notification": object(
                    [
                        "id": id,
                        "kind": ["type": "string", "enum": ["like", "comment", "reply", "follow", "mention"]],
                        "actor": ref("User"),
                        "actors": array(ref("UserSummary")), "actorCount": integer, "post": nullable(ref("Post")),
                        "comment": nullable(ref("Comment")),
                        "createdAt": timestamp, "read": boolean,
                    ],
                    description:
                        "like and follow group while unread (actor is the latest, actors the latest three, actorCount all); reply: a comment on a post whose thread I commented in"
                ),
                "NotificationPage": page("Notification"),
                "MarkNotificationsReadRequest": object(
                    ["ids": ["type": "array", "maxItems": 100, "items": id] as Object], required: []),
                "SpacePage": page("Space"), "SavedCollectionPage": page("SavedCollection"),
                "CollectionItemPage": page("CollectionItem"),
                "PostPage": page("Post"), "UserPage": page("User"), "CommentPage": page("Comment"),
                "SessionPage": page("Session"), "MediaPage": page("Media"),
                // Request bodies
                "RegisterRequest": object(
                    [
                        "username": ["type": "string", "pattern": "^[A-Za-z0-9_]{3,30}$"],
                        "email": string(maxLength: 254),
                        "password": ["type": "string", "minLength": 8, "maxLength": 128],
                        "displayName": string(maxLength: 60),
                    ], required: ["username", "email", "password"]),
                "LoginRequest": object(["login": string(maxLength: 254), "password": string(maxLength: 128)]),
                "UpdateMeRequest": object(
                    [
                        "displayName": string(maxLength: 60), "bio": string(maxLength: 500),
                        "status": nullable(
                            object([
                                "kind": ["type": "string", "pattern": "^[a-z0-9_]{1,32}$"],
                                "text": string(maxLength: 140),
                            ])),
                    ], required: []),
                "SetAvatarRequest": object(["mediaId": nullable(id)]),
                "ChangePasswordRequest": object([
                    "currentPassword": string(), "newPassword": ["type": "string", "minLength": 8, "maxLength": 128],
                ]),
                "ActivityInput": object(
                    [
                        "type": string(maxLength: 40), "emoji": string(maxLength: 16),
                        "color": ["type": "string", "pattern": "^#[0-9A-Fa-f]{6}$"],
                        "progress": ["type": "integer", "minimum": 0, "maximum": 100],
                    ], required: []),
                "CreatePostRequest": object(
                    [
                        "kind": ["type": "string", "enum": ["text", "photo", "link", "activity"]],
                        "title": string(maxLength: 300),
                        "body": string(maxLength: 10_000), "spaces": array(string()), "mediaIds": array(id),
                        "link": object(["url": string(maxLength: 2048, format: "uri")]), "location": ref("Location"),
                        "activity": ref("ActivityInput"),
                        "price": string(maxLength: 32),
                    ], required: ["kind"],
                    description:
                        "text needs title or body; link needs link.url; activity needs activity.type; photo needs 1–10 mediaIds"
                ),
                "UpdatePostRequest": object(
                    [
                        "title": nullable(string(maxLength: 300)), "body": nullable(string(maxLength: 10_000)),
                        "location": nullable(ref("Location")),
                        "price": nullable(string(maxLength: 32)), "activity": ref("ActivityInput"),
                        "spaces": array(string()),
                    ], required: [], description: "Left-out fields stay as they are; null clears"),
                "CreateCommentRequest": object(["body": string(maxLength: 5000)]),
                "CreateSpaceRequest": object(
                    [
                        "slug": ["type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{1,39}$"],
                        "name": string(maxLength: 80),
                        "description": string(maxLength: 2000), "imageId": id,
                    ], required: ["slug", "name"]),
                "UpdateSpaceRequest": object(
                    ["name": string(maxLength: 80), "description": string(maxLength: 2000), "imageId": nullable(id)],
                    required: []),
                "CollectionRequest": object(["name": string(maxLength: 100)]),
                "SaveItemRequest": object(
                    ["postId": id, "url": string(maxLength: 2048, format: "uri"), "note": string(maxLength: 2000)],
                    required: [],
                    description: "Either postId or url"),
                "UpdateItemRequest": object(["collectionId": id, "note": string(maxLength: 2000)], required: []),
            ]
        }
    }
}
