import PlazaAPI

/// What makes a post valid, per kind, and how edits apply.
package enum PostRules {
    static let maxTitleLength = 300
    static let maxBodyLength = 10_000
    package static let maxCommentLength = 5_000
    static let maxPriceLength = 32
    static let maxContentWarningLength = 500
    /// Posts pinned to one profile, and to one space's top.
    static let maxPins = 5
    static let maxLocationNameLength = 200
    package static let maxMedia = 10
    static let maxActivityTypeLength = 40
    static let maxEmojiLength = 16
    /// The most people one recommendation goes to.
    static let maxRecipients = 20

    package static func draft(_ body: CreatePostRequest) throws -> PostStore.Draft {
        var draft = PostStore.Draft(
            kind: body.kind,
            title: try Validate.text(body.title, field: "title", max: maxTitleLength),
            body: try Validate.text(body.body, field: "body", max: maxBodyLength),
            location: try body.location.map(location),
            price: try Validate.text(body.price, field: "price", max: maxPriceLength))
        draft.spaces = try SpaceRules.postSpaces(body.spaces ?? [])
        draft.audience = body.audience ?? .public
        draft.contentWarning = try Validate.text(
            body.contentWarning, field: "contentWarning", max: maxContentWarningLength)
        draft.sensitive = body.sensitive ?? false
        try checkTags(title: draft.title, body: draft.body)
        draft.mediaIDs = try mediaIDs(body.mediaIds ?? [])
        draft.poll = try body.poll.map(PollRules.draft)
        if draft.poll != nil, !draft.mediaIDs.isEmpty { throw pollWithMedia }
        switch body.kind {
        case .text:
            guard draft.title != nil || draft.body != nil else {
                throw PlazaError.invalid("body", "A text post needs a title or a body.")
            }
        case .photo:
            guard !draft.mediaIDs.isEmpty else {
                throw PlazaError.invalid("mediaIds", "A photo post needs 1 to \(maxMedia) uploaded media ids.")
            }
        case .link:
            guard let link = body.link else { throw PlazaError.invalid("link.url", "A link post needs link.url.") }
            draft.linkURL = try Validate.url(link.url, field: "link.url")
        case .activity:
            guard let input = body.activity else {
                throw PlazaError.invalid("activity", "An activity post needs activity.type.")
            }
            guard let type = try Validate.text(input.type, field: "activity.type", max: maxActivityTypeLength) else {
                throw PlazaError.invalid("activity.type", "activity.type must not be empty.")
            }
            draft.activity = try activity(
                Activity(type: type, emoji: nil, color: nil, progress: 0, completedAt: nil), applying: input)
        }
        if body.kind != .link, body.link != nil { throw PlazaError.invalid("link", "Only link posts take a link.") }
        if body.kind != .activity, body.activity != nil {
            throw PlazaError.invalid("activity", "Only activity posts take an activity.")
        }
        return draft
    }

    package static func changes(_ body: UpdatePostRequest, to post: Post) throws -> PostStore.Changes {
        var changes = PostStore.Changes()
        changes.title = try text(body.title, field: "title", max: maxTitleLength)
        changes.body = try text(body.body, field: "body", max: maxBodyLength)
        changes.price = try text(body.price, field: "price", max: maxPriceLength)
        switch body.location {
        case .keep: break
        case .clear: changes.location = .clear
        case .set(let value): changes.location = .set(try location(value))
        }
        changes.spaces = try body.spaces.map(SpaceRules.postSpaces)
        changes.audience = body.audience
        changes.contentWarning = try text(
            body.contentWarning, field: "contentWarning", max: maxContentWarningLength)
        changes.sensitive = body.sensitive
        switch body.poll {
        case .keep: break
        case .clear: changes.poll = .clear
        case .set(let input):
            changes.poll = .set(try PollRules.draft(input))
            if !post.media.isEmpty { throw pollWithMedia }
        }
        try checkTags(title: changes.title.applied(to: post.title), body: changes.body.applied(to: post.body))
        if let input = body.activity {
            guard let current = post.activity else {
                throw PlazaError.invalid("activity", "Only activity posts have an activity.")
            }
            changes.activity = try activity(current, applying: input)
        }
        if post.kind == .text {
            let title = changes.title.applied(to: post.title)
            let text = changes.body.applied(to: post.body)
            guard title != nil || text != nil else {
                throw PlazaError.invalid("body", "A text post needs a title or a body.")
            }
        }
        return changes
    }

    static let pollWithMedia = PlazaError.invalid("poll", "A post with photos or videos cannot carry a poll.")

    /// A post's title and text carry at most `Hashtag.maxPerPost` tags, or 422 `too_many_tags`.
    static func checkTags(title: String?, body: String?) throws {
        guard Hashtag.tags(in: title, body).count <= Hashtag.maxPerPost else {
            throw PlazaError(
                .unprocessableContent, "too_many_tags",
                "A post carries at most \(Hashtag.maxPerPost) different hashtags.",
                field: "body")
        }
    }

    /// Applies the given activity fields; `completedAt` is set on reaching 100 and cleared below it.
    static func activity(_ current: Activity, applying input: ActivityInput, now: Timestamp = .now) throws -> Activity {
        var activity = current
        if let type = input.type {
            guard let value = try Validate.text(type, field: "activity.type", max: maxActivityTypeLength) else {
                throw PlazaError.invalid("activity.type", "activity.type must not be empty.")
            }
            activity.type = value
        }
        if let emoji = input.emoji {
            activity.emoji = try Validate.text(emoji, field: "activity.emoji", max: maxEmojiLength)
        }
        if let color = input.color { activity.color = try Validate.color(color) }
        if let progress = input.progress {
            guard (0...100).contains(progress) else {
                throw PlazaError.invalid("activity.progress", "activity.progress must be from 0 to 100.")
            }
            activity.progress = progress
        }
        if activity.progress == 100 {
            activity.completedAt = activity.completedAt ?? now
        } else {
            activity.completedAt = nil
        }
        return activity
    }

    static func location(_ value: Location) throws -> Location {
        guard value.latitude.isFinite, (-90...90).contains(value.latitude) else {
            throw PlazaError.invalid("location.latitude", "location.latitude must be from -90 to 90.")
        }
        guard value.longitude.isFinite, (-180...180).contains(value.longitude) else {
            throw PlazaError.invalid("location.longitude", "location.longitude must be from -180 to 180.")
        }
        return Location(
            latitude: value.latitude, longitude: value.longitude,
            name: try Validate.text(value.name, field: "location.name", max: maxLocationNameLength))
    }

    private static func text(_ update: FieldUpdate<String>, field: String, max: Int) throws -> FieldUpdate<String> {
        guard case .set(let value) = update else { return update }
        return try Validate.text(value, field: field, max: max).map(FieldUpdate.set) ?? .clear
    }

    /// Upload ids as given, at most `maxMedia`, each once. Whether they are the poster's and
    /// unused is checked when the post claims them.
    static func mediaIDs(_ values: [String]) throws -> [Int64] {
        guard values.count <= maxMedia else {
            throw PlazaError.invalid("mediaIds", "A post shows at most \(maxMedia) media.")
        }
        let ids = try values.map { try Validate.id($0, field: "mediaIds") }
        guard Set(ids).count == ids.count else { throw PlazaError.invalid("mediaIds", "A media id appears twice.") }
        return ids
    }
}
