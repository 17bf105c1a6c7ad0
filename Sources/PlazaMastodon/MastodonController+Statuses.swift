import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

extension MastodonController {
    // MARK: timelines

    /// The creation time of the post `id` (a cursor's time), nil when it is gone.
    @Sendable func postTime(_ id: Int64) async throws -> Int64? { try await posts.creationTime(of: id) }

    /// Where the status `id` sits in a timeline: a post at its creation, a boost at its time with
    /// its post's id (the keys of its home entry).
    @Sendable func timelineKey(_ id: Int64) async throws -> (time: Int64, id: Int64)? {
        if let time = try await posts.creationTime(of: id) { return (time, id) }
        return try await actions.posts.boosts.key(of: id)
    }

    /// A page of a Plaza feed as statuses, with Mastodon's paging and `Link` header.
    func timeline(
        _ source: PostStore.FeedQuery.Source, viewer: Int64?, request: Request, context: PlazaContext,
        kind: PostKind? = nil
    ) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let paging = try MastodonPaging(params)
        var query = PostStore.FeedQuery(
            source: source, kind: params.bool("only_media") == true ? .photo : kind,
            page: try await paging.keysetPage(placing: timelineKey))
        var newer: (time: Int64, id: Int64)?
        if let id = paging.newerThan {
            let key = try await timelineKey(id) ?? (MastodonPaging.time(ofID: id), id)
            query.since = Timestamp(milliseconds: key.time)
            newer = key
        }
        let page = try await posts.feed(query, viewer: viewer)
        var items = page.items
        if let newer {
            items.removeAll { post in
                ((post.boost?.at ?? post.createdAt).milliseconds, Int64(post.id) ?? 0) <= (newer.time, newer.id)
            }
        }
        let statuses = try await withMentions(items.map(mapper.timelineStatus), viewer: viewer)
        return try MastodonJSON.response(
            statuses,
            headers: MastodonPaging.link(
                request, baseURL: config.baseURL, ids: statuses.map(\.id), hasMore: page.nextCursor != nil))
    }

    @Sendable func homeTimeline(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:statuses")
        return try await timeline(.home(me.userID), viewer: me.userID, request: request, context: context)
    }

    /// A person's posts (`only_media`, `exclude_replies` as Mastodon); `pinned=true`, the posts
    /// they pinned to their profile, newest pin first (one page: there are five at most).
    @Sendable func accountStatuses(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        let author = try await profile(try id(context), viewer: viewer)
        if request.uri.queryParameters.get("pinned") == "true" {
            let pinned = try await actions.pins.profilePins(author: Int64(author.id) ?? 0, viewer: viewer)
            return try MastodonJSON.response(try await withMentions(pinned.map(mapper.status), viewer: viewer))
        }
        return try await timeline(.author(Int64(author.id) ?? 0), viewer: viewer, request: request, context: context)
    }

    /// Everyone's posts (Plaza has one community: `local` and `remote` change nothing).
    @Sendable func publicTimeline(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        if request.uri.queryParameters.get("remote") == "true" { return try MastodonJSON.response([String]()) }
        return try await timeline(.global, viewer: viewer, request: request, context: context)
    }

    /// A tag's public posts, newest first.
    @Sendable func tagTimeline(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        let tag = try await asMastodon { try TagActions.tag(named: try context.parameters.require("tag")) }
        return try await timeline(.tag(tag.key), viewer: viewer, request: request, context: context)
    }

    @Sendable func showTag(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read")
        let tag = try await asMastodon { try TagActions.tag(named: try context.parameters.require("tag")) }
        let summary = try await tags.summary(tag, viewer: viewer)
        return try MastodonJSON.response(mapper.tag(summary, history: try await tags.history(of: tag)))
    }

    func followTag(_ following: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:follows")
        let name = try context.parameters.require("tag")
        let summary = try await asMastodon { try await actions.tags.follow(name, by: me.userID, following) }
        return try MastodonJSON.response(mapper.tag(summary))
    }

    /// The tags trending here, each with its week of use (people a day, as Plaza counts them).
    @Sendable func trendingTags(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = context.identity?.userID
        let params = try await MastodonParams.read(request, context: context)
        let trends = tags.trends
        let top = try await trends.tags(limit: try params.limit(default: 10, max: 20), viewer: viewer)
        let history = try await trends.history(of: top.map(\.key))
        return try MastodonJSON.response(top.map { mapper.tag($0, history: history[$0.key] ?? []) })
    }

    /// The public posts the most people liked or boosted lately (`offset` is not read).
    @Sendable func trendingStatuses(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = context.identity?.userID
        let params = try await MastodonParams.read(request, context: context)
        let trending = try await posts.trending(limit: try params.limit(default: 20, max: 40), viewer: viewer)
        return try MastodonJSON.response(try await withMentions(trending.map(mapper.status), viewer: viewer))
    }

    /// The links the most people shared lately, as preview cards.
    @Sendable func trendingLinks(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let links = try await tags.trends.links(limit: try params.limit(default: 10, max: 20))
        return try MastodonJSON.response(links.map(mapper.card))
    }

    /// Every tag the person follows, on one page (there are at most `TagStore.maxFollowed`).
    @Sendable func followedTags(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:follows")
        return try MastodonJSON.response(try await tags.followed(by: me.userID).map { mapper.tag($0) })
    }

    // MARK: statuses

    /// The post or comment `id` as the viewer may read it: a comment needs its post readable.
    func statusEntity(_ id: Int64, viewer: Int64?) async throws -> Mastodon.Status {
        if let record = try await posts.record(id: id, viewer: viewer) {
            // On its own, a post names every filter for threads that matches it, hiding ones too.
            return try await withMentions(
                mapper.status(try await actions.filters.matcher(for: viewer, in: .thread).marked(record.post)),
                viewer: viewer)
        }
        guard let comment = try await comments.comment(id: id, viewer: viewer),
            let postID = Int64(comment.postId), let post = try await posts.record(id: postID, viewer: viewer)
        else { throw MastodonError.notFound }
        return try await withMentions(mapper.status(comment, on: post.post), viewer: viewer)
    }

    @Sendable func status(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        return try MastodonJSON.response(try await statusEntity(try id(context), viewer: viewer))
    }

    /// Mastodon's visibilities as audiences: `public` and `unlisted` are public, `private` is
    /// for followers; Plaza has no direct messages.
    static func audience(_ visibility: String?) throws -> PostAudience {
        switch visibility ?? "public" {
        case "public", "unlisted", "": .public
        case "private": .followers
        default: throw MastodonError.validation("Visibility \(visibility ?? "") is not supported here")
        }
    }

    @Sendable func createStatus(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let params = try await MastodonParams.read(request, context: context)
        var text = params.string("status") ?? ""
        let spoiler = params.string("spoiler_text").flatMap { $0.isEmpty ? nil : $0 }
        let mediaIDs = params.strings("media_ids")
        let created: Int64
        if let reply = try params.id("in_reply_to_id") {
            guard try Self.poll(params) == nil else { throw MastodonError.validation("A reply cannot carry a poll") }
            // Comments carry no warning of their own: it goes before the text.
            if let spoiler { text = spoiler + "\n\n" + text }
            let body = try Validate.requiredText(text, field: "status", max: PostRules.maxCommentLength)
            // A reply to a comment is a comment on the same post.
            var postID = reply
            if try await posts.record(id: reply, viewer: me.userID) == nil {
                guard let comment = try await comments.comment(id: reply, viewer: me.userID),
                    let post = Int64(comment.postId)
                else { throw MastodonError.notFound }
                postID = post
            }
            let comment = try await asMastodon {
                try await actions.posts.comment(on: postID, by: me.userID, body: body)
            }
            created = Int64(comment.id) ?? 0
        } else {
            guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !mediaIDs.isEmpty else {
                throw MastodonError.validation("Text can't be blank")
            }
            let body = CreatePostRequest(
                kind: mediaIDs.isEmpty ? .text : .photo, body: text.isEmpty ? nil : text,
                mediaIds: mediaIDs.isEmpty ? nil : mediaIDs, audience: try Self.audience(params.string("visibility")),
                contentWarning: spoiler, sensitive: params.bool("sensitive"), poll: try Self.poll(params))
            created = Int64(try await actions.posts.create(by: me.userID, try PostRules.draft(body)).id) ?? 0
        }
        return try MastodonJSON.response(try await statusEntity(created, viewer: me.userID))
    }

    @Sendable func deleteStatus(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let id = try id(context)
        var status = try await statusEntity(id, viewer: me.userID)
        if status.inReplyToId == nil {
            let post = try await asMastodon {
                try await actions.posts.delete(id, by: me.userID, logger: context.logger)
            }
            status.text = post.body ?? ""
        } else {
            try await asMastodon { try await actions.posts.deleteComment(id, by: me.userID) }
        }
        return try MastodonJSON.response(status)
    }

    /// Edits a post's text (Plaza's comments are not edited).
    @Sendable func editStatus(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let id = try id(context)
        let params = try await MastodonParams.read(request, context: context)
        var update = UpdatePostRequest()
        if let text = params.string("status") { update.body = text.isEmpty ? .clear : .set(text) }
        if let spoiler = params.string("spoiler_text") {
            update.contentWarning = spoiler.isEmpty ? .clear : .set(spoiler)
        }
        update.sensitive = params.bool("sensitive")
        if let poll = try Self.poll(params) { update.poll = .set(poll) }
        _ = try await asMastodon {
            try await actions.posts.update(id, by: me.userID) { try PostRules.changes(update, to: $0) }
        }
        return try MastodonJSON.response(try await statusEntity(id, viewer: me.userID))
    }

    /// A post's comments are its descendants; a comment's ancestor is its post, its siblings
    /// are not shown. At most the first 200 comments.
    @Sendable func context(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        let status = try await statusEntity(try id(context), viewer: viewer)
        if let postID = status.inReplyToId.flatMap({ Int64($0) }) {
            return try MastodonJSON.response(
                Mastodon.Context(ancestors: [try await statusEntity(postID, viewer: viewer)], descendants: []))
        }
        guard let record = try await posts.record(id: Int64(status.id) ?? 0, viewer: viewer) else {
            throw MastodonError.notFound
        }
        let comments = try await comments.comments(post: record.id, page: .init(limit: 200), viewer: viewer)
        let descendants = try await withMentions(
            comments.items.map { mapper.status($0, on: record.post) }, viewer: viewer)
        return try MastodonJSON.response(Mastodon.Context(ancestors: [], descendants: descendants))
    }

    /// The post `id` for a favourite or a bookmark: a comment (which has neither) is a 422 that
    /// says so, anything else the viewer cannot see a 404.
    func requirePost(_ id: Int64, viewer: Int64, action: String) async throws {
        guard try await posts.record(id: id, viewer: viewer) == nil else { return }
        _ = try await statusEntity(id, viewer: viewer)
        throw MastodonError.validation("Plaza's replies (comments) cannot be \(action)")
    }

    func favourite(_ liked: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:favourites")
        let id = try id(context)
        try await requirePost(id, viewer: me.userID, action: "favourited")
        _ = try await asMastodon { try await actions.posts.like(id, by: me.userID, liked) }
        return try MastodonJSON.response(try await statusEntity(id, viewer: me.userID))
    }

    /// Boosts a post (a comment cannot be: 422); the answer is the boost's status with the post
    /// inside, as Mastodon answers. Undoing answers the post.
    func reblog(_ boosted: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let id = try id(context)
        try await requirePost(id, viewer: me.userID, action: "boosted")
        let post = try await asMastodon { try await actions.posts.boost(id, by: me.userID, boosted) }
        let status = try await withMentions(mapper.status(post), viewer: me.userID)
        guard boosted, let boostID = try await actions.posts.boosts.boostID(post: id, user: me.userID) else {
            return try MastodonJSON.response(status)
        }
        let booster = try await people.profile(userID: me.userID, viewer: me.userID).summary
        let boost = Post.Boost(id: String(boostID), by: booster, at: MastodonMapper.timestamp(fromID: String(boostID)))
        return try MastodonJSON.response(mapper.reblog(status, boost: boost))
    }

    /// A status's `poll[options][]`, `poll[expires_in]` and `poll[multiple]` as Plaza's poll
    /// (`poll[hide_totals]` is how Plaza always shows them); nil when there are no options.
    static func poll(_ params: MastodonParams) throws -> PollInput? {
        let options = params.strings("poll[options]")
        guard !options.isEmpty else { return nil }
        guard let text = params.string("poll[expires_in]"), let seconds = Int(text) else {
            throw MastodonError.validation("poll[expires_in] must be a number of seconds")
        }
        return PollInput(options: options, multiple: params.bool("poll[multiple]"), expiresInSeconds: seconds)
    }

    /// A post's poll (its id is the post's).
    @Sendable func poll(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        let poll = try await asMastodon { try await actions.posts.poll(of: try id(context), viewer: viewer) }
        return try MastodonJSON.response(mapper.poll(poll))
    }

    /// Votes in a poll with `choices[]` (indexes); the poll with its results.
    @Sendable func vote(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let params = try await MastodonParams.read(request, context: context)
        let choices = try params.strings("choices").map { text in
            guard let index = Int(text) else { throw MastodonError.validation("choices are option indexes") }
            return index
        }
        let poll = try await asMastodon {
            try await actions.posts.vote(in: try id(context), by: me.userID, choices: choices)
        }
        return try MastodonJSON.response(mapper.poll(poll))
    }

    /// A post's versions, oldest first as Mastodon lists them (the last is the current one).
    @Sendable func statusHistory(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:statuses")
        let id = try id(context)
        guard let record = try await posts.record(id: id, viewer: viewer),
            let versions = try await posts.history.versions(of: id, viewer: viewer)
        else { throw MastodonError.notFound }
        let author = mapper.account(record.post.author)
        return try MastodonJSON.response(
            versions.reversed().map { version in
                var post = record.post
                (post.title, post.body, post.contentWarning) = (version.title, version.body, version.contentWarning)
                let status = mapper.status(post)
                return Mastodon.StatusEdit(
                    content: status.content, spoilerText: version.contentWarning ?? "",
                    sensitive: version.sensitive || version.contentWarning != nil,
                    createdAt: version.createdAt.description, account: author,
                    mediaAttachments: version.media.map(mapper.media),
                    poll: version.poll.map { .init(options: $0.options.map { .init(title: $0) }) })
            })
    }

    /// A post as its author wrote it, to edit it.
    @Sendable func statusSource(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:statuses")
        guard let record = try await posts.record(id: try id(context), viewer: me.userID) else {
            throw MastodonError.notFound
        }
        let post = record.post
        return try MastodonJSON.response(
            Mastodon.StatusSource(id: post.id, text: post.body ?? "", spoilerText: post.contentWarning ?? ""))
    }

    /// Pins a post to my profile, or unpins it (profile pins only: Mastodon has no others);
    /// answers the status with `pinned`. Another's post is a 422 as Mastodon's, so is one past the fifth.
    func pin(_ pinned: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:accounts")
        let id = try id(context)
        try await requirePost(id, viewer: me.userID, action: "pinned")
        do {
            let post = try await actions.pins.pin(id, by: me.userID, pinned)
            return try MastodonJSON.response(try await withMentions(mapper.status(post), viewer: me.userID))
        } catch let error as PlazaError where error.status == .forbidden {
            throw MastodonError.validation("Only your own posts can be pinned")
        }
    }

    @Sendable func rebloggedBy(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        let params = try await MastodonParams.read(request, context: context)
        guard let record = try await posts.record(id: try id(context), viewer: viewer) else {
            throw MastodonError.notFound
        }
        let boosters = try await actions.posts.boosts.boosters(
            post: record.id, page: .init(limit: try params.limit(default: 40, max: 80)), viewer: viewer, people: people)
        return try MastodonJSON.response(boosters.items.map { mapper.account($0) })
    }

    @Sendable func favouritedBy(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:accounts")
        let params = try await MastodonParams.read(request, context: context)
        guard let record = try await posts.record(id: try id(context), viewer: viewer) else {
            throw MastodonError.notFound
        }
        let likers = try await likes.likers(
            post: record.id, page: .init(limit: try params.limit(default: 40, max: 80)), viewer: viewer, people: people)
        return try MastodonJSON.response(likers.items.map { mapper.account($0) })
    }

    /// Bookmarks are saves into the person's "Bookmarks" collection (`CollectionActions.bookmark`).
    func bookmark(_ saved: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:bookmarks")
        let id = try id(context)
        try await requirePost(id, viewer: me.userID, action: "bookmarked")
        try await actions.collections.bookmark(id, by: me.userID, saved)
        return try MastodonJSON.response(try await statusEntity(id, viewer: me.userID))
    }
}
