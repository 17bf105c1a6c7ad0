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

    var missingAvatar: String { links.asset("avatar-missing.png") }
    var missingHeader: String { links.asset("header-missing.png") }

    func absolute(_ url: String) -> String { links.absolute(url) }

    /// A hashtag, linked to the web app's search for it.
    func tag(_ name: String) -> Mastodon.Tag { Mastodon.Tag(name: name, url: links.tag(name)) }

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
            createdAt: Self.midnight(created), note: Self.html(note), url: links.person(user.username),
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

    func media(_ media: Media) -> Mastodon.MediaAttachment {
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
            id: media.id, type: media.state == .failed ? "unknown" : type, url: ready ? absolute(media.url) : nil,
            previewUrl: absolute(media.variants.medium), remoteUrl: nil, previewRemoteUrl: nil, textUrl: nil,
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
        var paragraphs: [String] = []
        if let title = post.title { paragraphs.append("<strong>\(Self.escape(title))</strong>") }
        if let activity = post.activity {
            let done = activity.completedAt != nil ? " ✓" : ""
            paragraphs.append(
                Self.escape("\(activity.emoji.map { $0 + " " } ?? "")\(activity.type) \(activity.progress)%\(done)"))
        }
        var html = paragraphs.map { "<p>\($0)</p>" }.joined()
        html += Self.html(post.body ?? "")
        if let price = post.price { html += "<p>\(Self.escape(price))</p>" }
        if let place = post.location?.name { html += "<p>📍 \(Self.escape(place))</p>" }
        if let link = post.link, !(post.body ?? "").contains(link.url) {
            html += "<p>\(Self.linkify(Self.escape(link.url)))</p>"
        }
        let url = links.post(id: post.id, author: post.author.username)
        return Mastodon.Status(
            id: post.id, uri: url, url: url, createdAt: post.createdAt.description, account: account(post.author),
            content: html, visibility: Self.visibility(post.audience), spoilerText: "",
            mediaAttachments: post.media.map(media), application: nil, mentions: [],
            tags: Self.hashtags(in: post.body ?? "").map(tag),
            favouritesCount: post.counts.likes, repliesCount: post.counts.comments, inReplyToId: nil,
            inReplyToAccountId: nil, card: post.link.map(card), language: nil, text: nil,
            editedAt: post.editedAt?.description, favourited: post.viewer.liked, bookmarked: post.viewer.saved,
            filtered: (post.filtered ?? []).map(filterResult))
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
            account: account(comment.author), content: Self.html(comment.body),
            visibility: Self.visibility(post.audience), spoilerText: "", mediaAttachments: [], application: nil,
            mentions: [],
            tags: Self.hashtags(in: comment.body).map(tag),
            favouritesCount: 0, repliesCount: 0, inReplyToId: post.id, inReplyToAccountId: post.author.id, card: nil,
            language: nil, text: nil, editedAt: nil, favourited: false, bookmarked: false)
    }

    // MARK: text to HTML

    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// Plain text as Mastodon's HTML: paragraphs at blank lines, `<br>` at line breaks, links.
    static func html(_ text: String) -> String {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        return
            normalized.components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .newlines) }.filter { !$0.isEmpty }
            .map { "<p>" + linkify(escape($0)).replacingOccurrences(of: "\n", with: "<br>") + "</p>" }
            .joined()
    }

    /// `http(s)://…` in escaped text as links (up to a space or `&lt;`, trailing punctuation left out).
    static func linkify(_ escaped: String) -> String {
        var out = ""
        var rest = Substring(escaped)
        while let start = rest.range(of: "https://") ?? rest.range(of: "http://") {
            out += rest[..<start.lowerBound]
            var end =
                rest[start.lowerBound...].firstIndex(where: { $0 == " " || $0 == "\n" || $0 == "\t" })
                ?? rest.endIndex
            if let lt = rest[start.lowerBound..<end].range(of: "&lt;") { end = lt.lowerBound }
            var url = rest[start.lowerBound..<end]
            while let last = url.last, ".,;:!?)".contains(last) { url = url.dropLast() }
            if url.count <= rest.distance(from: start.lowerBound, to: start.upperBound) {
                out += url
            } else {
                out += "<a href=\"\(url)\" rel=\"nofollow noopener\" target=\"_blank\">\(url)</a>"
            }
            rest = rest[url.endIndex...]
        }
        return out + rest
    }

    /// `#tag`s in text, lower-cased, each once.
    static func hashtags(in text: String) -> [String] {
        var tags: [String] = []
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count, tags.count < 20 {
            defer { i += 1 }
            guard scalars[i] == "#", i == 0 || !isTagScalar(scalars[i - 1]) else { continue }
            var end = i + 1
            while end < scalars.count, isTagScalar(scalars[end]) { end += 1 }
            guard end - i - 1 >= 1, end - i - 1 <= 60 else { continue }
            let tag = String(String.UnicodeScalarView(scalars[(i + 1)..<end])).lowercased()
            if !tags.contains(tag), tag.unicodeScalars.contains(where: { !("0"..."9").contains($0) }) {
                tags.append(tag)
            }
            i = end - 1
        }
        return tags
    }

    private static func isTagScalar(_ s: Unicode.Scalar) -> Bool {
        s == "_" || s.properties.isAlphabetic || ("0"..."9").contains(s)
    }
}
