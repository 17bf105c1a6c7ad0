/// Direct JSON writing for the response types (see `JSONWriter`). Field names and shapes must
/// match the `Codable` forms; `JSONWriterTests` compares the two for each type.

extension Nullable: JSONWritable where Value: JSONWritable {
    public func writeJSON(to writer: inout JSONWriter) { wrappedValue.writeJSON(to: &writer) }
}

extension ErrorBody: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("error", error)
        }
    }
}

extension ErrorBody.Detail: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("code", code)
            w.field("message", message)
            w.fieldIfPresent("field", field)
            w.fieldIfPresent("challenge", challenge)
        }
    }
}

extension Page: JSONWritable where Item: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("items", items)
            w.field("nextCursor", nextCursor)
        }
    }
}

extension Media: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("contentType", contentType)
            w.field("width", width)
            w.field("height", height)
            w.field("blurhash", blurhash)
            w.field("url", url)
            w.field("variants", variants)
            w.field("state", state.rawValue)
            w.field("duration", duration)
            w.field("progress", progress)
            w.field("description", description)
        }
    }
}

extension Media.Variants: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("thumbnail", thumbnail)
            w.field("medium", medium)
            w.field("original", original)
        }
    }
}

extension UserStatus: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("kind", kind)
            w.field("text", text)
            w.field("updatedAt", updatedAt)
        }
    }
}

extension UserSummary: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("username", username)
            w.field("displayName", displayName)
            w.field("avatar", avatar)
            w.field("status", status)
        }
    }
}

extension User: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in writeFields(to: &w) }
    }

    func writeFields(to w: inout JSONWriter) {
        w.field("id", id)
        w.field("username", username)
        w.field("displayName", displayName)
        w.field("bio", bio)
        w.field("avatar", avatar)
        w.field("status", status)
        w.field("locked", locked)
        w.field("createdAt", createdAt)
        w.field("counts", counts)
        w.fieldIfPresent("viewer", viewer)
    }
}

extension User.Counts: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("posts", posts)
            w.field("followers", followers)
            w.field("following", following)
        }
    }
}

extension User.Viewer: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("following", following)
            w.field("followedBy", followedBy)
            w.field("blocking", blocking)
            w.field("requested", requested)
            w.field("muting", muting)
        }
    }
}

extension Me: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            user.writeFields(to: &w)
            w.field("email", email)
            w.field("emailVerified", emailVerified)
            w.field("pendingEmail", pendingEmail)
            w.field("preferences", preferences)
            w.field("isAdmin", isAdmin)
            w.field("unreadNotifications", unreadNotifications)
        }
    }
}

extension JSONValue: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        switch self {
        case .null: w.null()
        case .bool(let v): w.bool(v)
        case .number(let v): w.number(v)
        case .string(let v): w.string(v)
        case .array(let v): w.array(v)
        case .object(let members):
            w.object { w in
                for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                    w.string(key)
                    w.colon()
                    value.writeJSON(to: &w)
                }
            }
        }
    }
}

extension SpaceSummary: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("slug", slug)
            w.field("name", name)
        }
    }
}

extension LinkPreview: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("url", url)
            w.field("title", title)
            w.field("description", description)
            w.field("imageURL", imageURL)
            w.field("siteName", siteName)
            w.field("fetchedAt", fetchedAt)
            w.field("embedURL", embedURL)
        }
    }
}

extension Location: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("latitude", latitude)
            w.field("longitude", longitude)
            w.field("name", name)
        }
    }
}

extension Activity: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("type", type)
            w.field("emoji", emoji)
            w.field("color", color)
            w.field("progress", progress)
            w.field("completedAt", completedAt)
        }
    }
}

extension Post: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("kind", kind.rawValue)
            w.field("author", author)
            w.field("title", title)
            w.field("body", body)
            w.field("spaces", spaces)
            w.field("audience", audience.rawValue)
            w.field("media", media)
            w.field("link", link)
            w.field("location", location)
            w.field("activity", activity)
            w.field("price", price)
            w.field("tags", tags)
            w.field("contentWarning", contentWarning)
            w.field("sensitive", sensitive)
            w.field("pinned", pinned)
            w.field("boost", boost)
            w.field("poll", poll)
            w.field("createdAt", createdAt)
            w.field("editedAt", editedAt)
            w.field("counts", counts)
            w.field("viewer", viewer)
            w.fieldIfPresent("filtered", filtered)
        }
    }
}

extension FilterMatch: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("phrase", phrase)
            w.field("action", action.rawValue)
        }
    }
}

extension KeywordFilter: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("phrase", phrase)
            w.field("wholeWord", wholeWord)
            w.field("contexts", contexts.map(\.rawValue))
            w.field("action", action.rawValue)
            w.field("expiresAt", expiresAt)
            w.field("createdAt", createdAt)
        }
    }
}

extension Post.Counts: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("likes", likes)
            w.field("comments", comments)
            w.field("boosts", boosts)
        }
    }
}

extension Post.Viewer: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("liked", liked)
            w.field("saved", saved)
            w.field("boosted", boosted)
        }
    }
}

extension Post.Boost: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("by", by)
            w.field("at", at)
        }
    }
}

extension Poll: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("options", options)
            w.field("multiple", multiple)
            w.field("expiresAt", expiresAt)
            w.field("expired", expired)
            w.field("votersCount", votersCount)
            w.field("votesCount", votesCount)
            w.field("viewer", viewer)
        }
    }
}

extension Poll.Option: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("title", title)
            w.field("votes", votes)
        }
    }
}

extension Poll.Viewer: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("voted", voted)
            w.field("choices", choices)
        }
    }
}

extension Comment: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("postId", postId)
            w.field("author", author)
            w.field("body", body)
            w.field("createdAt", createdAt)
            w.fieldIfPresent("filtered", filtered)
        }
    }
}

extension LikeState: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("liked", liked)
            w.field("likes", likes)
        }
    }
}

extension Session: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("id", id)
            w.field("createdAt", createdAt)
            w.field("lastUsedAt", lastUsedAt)
            w.field("expiresAt", expiresAt)
            w.field("userAgent", userAgent)
            w.field("ip", ip)
            w.field("current", current)
            w.field("app", app)
            w.field("scopes", scopes)
        }
    }
}

extension AuthResponse: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("user", user)
            w.field("token", token)
            w.field("deviceToken", deviceToken)
        }
    }
}

extension Health: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("status", status)
        }
    }
}

extension JoinRequest: JSONWritable {
    public func writeJSON(to w: inout JSONWriter) {
        w.object { w in
            w.field("user", user)
            w.field("requestedAt", requestedAt)
        }
    }
}
