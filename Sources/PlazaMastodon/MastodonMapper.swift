import PlazaAPI
import PlazaServer

/// Plaza's objects as Mastodon's entities. Posts are statuses; a comment is a status replying
/// to its post. Audiences map to visibilities: `public` is `public`, `followers` and `members`
/// (a space's members) are `private`.
struct MastodonMapper: Sendable {
    /// Every `url` and `uri`: absolute, at the public URL.
    let links: PublicLinks

    /// `baseURL`: the public URL.
    init(baseURL: String) { links = PublicLinks(base: baseURL) }

    var missingAvatar: String { links.asset("avatars/missing.png") }
    var missingHeader: String { links.asset("headers/missing.png") }

    func absolute(_ url: String) -> String { links.absolute(url) }

    /// A hashtag, linked to its page.
    func tag(_ name: String) -> Mastodon.Tag { Mastodon.Tag(name: name, url: links.tag(name)) }

    func tag(_ tag: HashtagSummary, history: [TagStore.DayOfUse] = []) -> Mastodon.TagDetail {
        Mastodon.TagDetail(
            id: tag.key, name: tag.name, url: links.tag(tag.name),
            history: history.map {
                .init(day: String($0.day * 86_400), uses: String($0.posts), accounts: String($0.people))
            }, following: tag.following)
    }

    func account(_ user: User, source: Mastodon.Account.Source? = nil) -> Mastodon.Account {
        var account = self.account(user.summary, createdAt: user.createdAt, locked: user.locked, note: user.bio)
        account.followersCount = user.counts.followers
        account.followingCount = user.counts.following
        account.statusesCount = user.counts.posts
        account.source = source
        return account
    }

    /// An author as posts and comments carry them: without counts (0), which `accounts/:id` has.
    func account(
        _ user: UserSummary, createdAt: Timestamp? = nil, locked: Bool = false, note: String = ""
    ) -> Mastodon.Account {
        let avatar = user.avatar.map { absolute($0.variants.medium) } ?? missingAvatar
        let created = createdAt ?? Self.timestamp(fromID: user.id)
        return Mastodon.Account(
            id: user.id, username: user.username, acct: user.username, displayName: user.displayName, locked: locked,
            bot: false, discoverable: true, indexable: true, group: false,
            createdAt: Self.midnight(created), note: html(note), url: links.person(user.username),
            uri: links.person(user.username), avatar: avatar, avatarStatic: avatar, header: missingHeader,
            headerStatic: missingHeader, followersCount: 0, followingCount: 0, statusesCount: 0, lastStatusAt: nil,
            hideCollections: false, noindex: false, emojis: [], roles: [],
            fields: user.status.map { [Mastodon.Field(name: $0.kind, value: Self.escape($0.text), verifiedAt: nil)] }
                ?? [], source: nil)
    }

    /// Mastodon gives an account's creation as the day, at midnight UTC.
    static func midnight(_ time: Timestamp) -> String { time.day + "T00:00:00.000Z" }

    /// The time a Plaza id was made (ids are time-ordered: `IDGenerator`).
    static func timestamp(fromID id: String) -> Timestamp {
        Timestamp(milliseconds: (Int64(id).map { $0 >> 22 } ?? 0) + IDGenerator.epoch)
    }

    static func visibility(_ audience: PostAudience) -> String {
        switch audience {
        case .public: "public"
        case .followers, .members: "private"
        }
    }

    /// Signs the media URLs of the reader a request is answered for (`MastodonMediaReader`); nil
    /// outside a signed-in request. A task-local value rather than a parameter, so that every
    /// entity a handler maps, now and in handlers to come, carries the reader's URLs.
    @TaskLocal static var mediaSigner: MediaURLSigner?

    /// An upload, or media whose post is not public: its URLs are the reader's capability URLs,
    /// which image loaders that send no credentials can fetch (`MediaCapabilities`).
    func media(_ media: Media) -> Mastodon.MediaAttachment { self.media(media, isPublic: false) }

    /// Media of a public post keep their plain URLs, which caches keep for good.
    func media(_ media: Media, isPublic: Bool) -> Mastodon.MediaAttachment {
        let urls = isPublic ? media : Self.mediaSigner?.sign(media) ?? media
        func size(_ width: Int, _ height: Int) -> Mastodon.MediaAttachment.Size {
            .init(
                width: width, height: height, size: "\(width)x\(height)",
                aspect: height > 0 ? Double(width) / Double(height) : 1, duration: media.duration)
        }
        let small =
            media.width >= media.height
            ? size(min(400, media.width), media.width > 0 ? min(400, media.width) * media.height / media.width : 0)
            : size(media.height > 0 ? min(400, media.height) * media.width / media.height : 0, min(400, media.height))
        let type = media.isVideo ? "video" : media.contentType == "image/gif" ? "gifv" : "image"
        let ready = media.state == .ready
        return Mastodon.MediaAttachment(
            id: media.id, type: media.state == .failed ? "unknown" : type, url: ready ? absolute(urls.url) : nil,
            previewUrl: absolute(urls.variants.medium), remoteUrl: nil, previewRemoteUrl: nil, textUrl: nil,
            meta: .init(
                original: size(media.width, media.height), small: small,
                length: media.duration.map(Self.clock), duration: media.duration),
            description: media.description, blurhash: media.blurhash)
    }

    /// 75.5 seconds as `0:01:15.50`.
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, (0..<1e9).contains(seconds) else { return "0:00:00.00" }
        let whole = Int(seconds)
        let hundredths = Int((seconds - Double(whole)) * 100)
        return "\(whole / 3600):\(pad(whole / 60 % 60)):\(pad(whole % 60)).\(pad(hundredths))"
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    func card(_ link: LinkPreview) -> Mastodon.PreviewCard {
        let host = link.url.split(separator: "/", maxSplits: 3).dropFirst().first.map(String.init) ?? ""
        return Mastodon.PreviewCard(
            url: link.url, title: link.title ?? link.url, description: link.description ?? "",
            type: link.embedURL == nil ? "link" : "video", authorName: "", authorUrl: "",
            providerName: link.siteName ?? host, providerUrl: "", html: "", width: 0, height: 0,
            image: link.imageURL.map(absolute), embedUrl: link.embedURL, blurhash: nil, publishedAt: nil)
    }

    func status(_ post: Post) -> Mastodon.Status {
        let url = links.post(id: post.id, author: post.author.username)
        var status = Mastodon.Status(
            id: post.id, uri: url, url: url, createdAt: post.createdAt.description, account: account(post.author),
            content: HTMLText.post(post, links: links), visibility: Self.visibility(post.audience),
            sensitive: post.sensitive || post.contentWarning != nil,
            spoilerText: post.contentWarning ?? "",
            mediaAttachments: post.media.map { media($0, isPublic: post.audience == .public) }, application: nil,
            mentions: mentions(in: post.title, post.body),
            tags: Hashtag.tags(in: post.title, post.body).map { tag($0.name) },
            reblogsCount: post.counts.boosts, favouritesCount: post.counts.likes, repliesCount: post.counts.comments,
            inReplyToId: nil,
            inReplyToAccountId: nil, card: post.link.map(card), language: nil, text: nil,
            editedAt: post.editedAt?.description, favourited: post.viewer.liked, reblogged: post.viewer.boosted,
            bookmarked: post.viewer.saved, filtered: (post.filtered ?? []).map(filterResult))
        status.pinned = post.pinned
        status.poll = post.poll.map(poll)
        return status
    }

    /// A poll as Mastodon shows it: its author counts as having voted (they see the results).
    func poll(_ poll: PlazaAPI.Poll) -> Mastodon.Poll {
        let shown = poll.votesCount != nil
        return Mastodon.Poll(
            id: poll.id, expiresAt: poll.expiresAt.description, expired: poll.expired, multiple: poll.multiple,
            votesCount: poll.votesCount ?? poll.votersCount, votersCount: poll.votersCount,
            options: poll.options.map { Mastodon.Poll.Option(title: $0.title, votesCount: $0.votes) },
            voted: poll.viewer.voted || (shown && !poll.expired), ownVotes: poll.viewer.choices)
    }

    /// A post as a timeline shows it: a boost is a status of its booster's (its id the boost's)
    /// with the post inside.
    func timelineStatus(_ post: Post) -> Mastodon.Status {
        let status = self.status(post)
        guard let boost = post.boost else { return status }
        return reblog(status, boost: boost)
    }

    /// The status of a boost: its booster's, with the boosted status inside.
    func reblog(_ status: Mastodon.Status, boost: Post.Boost) -> Mastodon.Status {
        let url = links.person(boost.by.username) + "/\(boost.id)"
        return Mastodon.Status(
            id: boost.id, uri: url, url: url, createdAt: boost.at.description, account: account(boost.by), content: "",
            visibility: status.visibility, spoilerText: "", mediaAttachments: [], application: nil, mentions: [],
            tags: [], favouritesCount: 0, repliesCount: 0, inReplyToId: nil, inReplyToAccountId: nil,
            reblog: Mastodon.Reblog(status), card: nil, language: nil, text: nil, editedAt: nil,
            favourited: false, reblogged: status.reblogged, bookmarked: false)

    }

    // MARK: filters

    static func context(_ context: FilterContext) -> String { context == .profile ? "account" : context.rawValue }

    func filter(_ filter: KeywordFilter) -> Mastodon.Filter {
        Mastodon.Filter(
            id: filter.id, title: filter.phrase, context: filter.contexts.map(Self.context),
            expiresAt: filter.expiresAt?.description, filterAction: filter.action.rawValue, keywords: [keyword(filter)])
    }

    func keyword(_ filter: KeywordFilter) -> Mastodon.FilterKeyword {
        Mastodon.FilterKeyword(id: filter.id, keyword: filter.phrase, wholeWord: filter.wholeWord)
    }

    func filterV1(_ filter: KeywordFilter) -> Mastodon.FilterV1 {
        Mastodon.FilterV1(
            id: filter.id, phrase: filter.phrase, context: filter.contexts.map(Self.context),
            expiresAt: filter.expiresAt?.description, irreversible: filter.action == .hide,
            wholeWord: filter.wholeWord)
    }

    /// A match on a status. The server applied the filter only where it applies, so its
    /// `context` names every context, for clients that check theirs against it.
    func filterResult(_ match: FilterMatch) -> Mastodon.FilterResult {
        let filter = Mastodon.Filter(
            id: match.id, title: match.phrase, context: FilterContext.allCases.map(Self.context), expiresAt: nil,
            filterAction: match.action.rawValue,
            keywords: [Mastodon.FilterKeyword(id: match.id, keyword: match.phrase, wholeWord: true)])
        return Mastodon.FilterResult(filter: filter, keywordMatches: [match.phrase], statusMatches: nil)
    }

    /// A comment as a reply to its post, whose author and audience it takes.
    func status(_ comment: Comment, on post: Post) -> Mastodon.Status {
        let url = links.comment(id: comment.id, postID: post.id, postAuthor: post.author.username)
        return Mastodon.Status(
            id: comment.id, uri: url, url: url, createdAt: comment.createdAt.description,
            account: account(comment.author), content: html(comment.body),
            visibility: Self.visibility(post.audience), spoilerText: "", mediaAttachments: [], application: nil,
            mentions: mentions(in: comment.body),
            tags: Hashtag.tags(in: comment.body).map { tag($0.name) },
            favouritesCount: 0, repliesCount: 0, inReplyToId: post.id, inReplyToAccountId: post.author.id, card: nil,
            language: nil, text: nil, editedAt: nil, favourited: false, bookmarked: false,
            filtered: (comment.filtered ?? []).map(filterResult))
    }

    /// The people a text mentions, by name, their ids still empty: `MastodonController.withMentions`
    /// fills them in (and drops names nobody here has) for a whole answer in one read.
    func mentions(in texts: String?...) -> [Mastodon.Mention] {
        var names: [String] = []
        for text in texts {
            for name in PostText.mentions(in: text) where !names.contains(name) && names.count < Self.maxMentions {
                names.append(name)
            }
        }
        return names.map { Mastodon.Mention(id: "", username: $0, url: links.person($0), acct: $0) }
    }

    /// The most mentions a status lists, as many as notify (`Mentions.limit`).
    static let maxMentions = 10

    // MARK: text to HTML

    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// Plain text as Mastodon's HTML, with its links, mentions and hashtags.
    func html(_ text: String) -> String { PostTextHTML.render(text, links: links) }
}
