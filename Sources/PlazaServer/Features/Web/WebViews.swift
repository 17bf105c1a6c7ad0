import Foundation
import Mustache
import PlazaAPI

// What the templates read, as plain stored values made from the API's objects. Mustache reads
// stored properties through `Mirror` and walks up the context stack when a name is missing
// or nil, so the rules below keep every page as it was when the values were JSON:
// - a text that a template tests with `{{#name}}` is nil when empty ("" would open the section);
// - times are the API's ISO 8601 strings (scripts read `datetime=`), shown beside as the
//   reader's language writes them, in their time zone (`Localizer.dateTime`);
// - numbers print as JSON prints them (`50`, not `50.0`), except counts shown to people, which
//   are written in the reader's language (`t.number`, `t.plural`);
// - a view leaves out the names its templates look up in an outer context (`alt` inside
//   `cover` is the post's; `username` inside `viewer` is the user's).

/// A photo or a video in a post (`media-item.mustache`): a video plays in `<video>` with its
/// poster, or shows its processing (to its author, the only one who sees it then).
struct MediaView: Sendable {
    struct Video: Sendable {
        let ready: Bool
        let processing: Bool
        let failed: Bool
        let progress: Int
        /// `1:05`.
        let length: String?
    }
    let id: String
    let url: String
    let variants: Media.Variants
    let width: Int
    let height: Int
    /// Painted behind the picture while it loads (`app.js`).
    let blurhash: String?
    let video: Video?
    /// Its uploader's alt text; without one the template reads the post's `alt`.
    let alt: String?

    init(_ media: Media) {
        id = media.id
        alt = media.description
        url = media.url
        variants = media.variants
        width = media.width
        height = media.height
        blurhash = media.blurhash
        video =
            media.isVideo
            ? Video(
                ready: media.state == .ready, processing: media.state == .processing, failed: media.state == .failed,
                progress: media.progress ?? 0,
                length: media.duration.map { seconds in
                    let whole = Int(seconds.rounded())
                    return "\(whole / 60):" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)"
                }) : nil
    }
}

/// A post as cards, the post page, the photo grid and the edit form show it.
struct PostView: Sendable {
    let id: String
    /// The post's page, for links inside sections where `id` is another object's (`cover`).
    let postPath: String
    /// The kind's raw value, a CSS class.
    let kind: String
    let isPhoto: Bool
    let author: AuthorView
    let title: String?
    let body: String?
    /// The text as HTML, its links, mentions and hashtags linked (`PostTextHTML`).
    let bodyHTML: String?
    /// Shown instead of the post's text and media until opened.
    let contentWarning: String?
    /// Its photos and videos are blurred until shown.
    let sensitive: Bool
    let spaces: [SpaceSummary]
    let media: [MediaView]
    /// The first photo or video: the card's and the grid's picture.
    let cover: MediaView?
    /// More than one photo or video: the card shows them one at a time, to swipe or step through.
    let multiple: Bool
    let mediaCount: Int
    let hasMedia: Bool
    /// "3 photos and videos", the carousel's name.
    let mediaLabel: String
    let link: LinkView?
    let location: LocationView?
    let activity: ActivityView?
    let price: String?
    let createdAt: String
    let when: String
    let edited: Bool
    let counts: Post.Counts
    /// The counts as the reader's language writes them, shown beside the heart and the quote
    /// mark, and what a screen reader reads for them ("3 likes").
    let likeCount: String
    let likesLabel: String
    /// Only a public post may be boosted.
    let boostable: Bool
    let boostCount: String
    let boostsLabel: String
    /// "Ana boosted", over a home feed's item a boost brought, and the booster's page.
    let boostedBy: String?
    let boosterPath: String?
    let commentCount: String
    let commentsLabel: String
    /// A text post in a space that asks something (its title or text ends in a question mark):
    /// a course's question, shown with a badge and its comments as answers.
    let question: Bool
    let viewer: Post.Viewer
    /// Written by the viewer, who may edit and delete it.
    /// Who may read it, for the edit form, and a badge unless everyone may.
    let audience: Choice
    let audienceLabel: String?
    let mine: Bool
    /// Pinned where it is shown: to its author's profile, or in the space whose feed shows it.
    let pinned: Bool
    /// The author's initial, where there is no avatar.
    let initial: String
    /// The title or text, else "Photo by …": the photos' alt text and the saved post's name.
    let alt: String
    /// "Filtered: spoilers" when the reader's keyword filters put it behind a warning: the card
    /// shows it collapsed, to open.
    let filteredLabel: String?
    let poll: PollView?

    init(_ post: Post, viewer: Int64?, t: Localizer) {
        id = post.id
        poll = post.poll.map {
            PollView($0, mine: viewer.map { String($0) == post.author.id } ?? false, signedIn: viewer != nil, t: t)
        }
        filteredLabel =
            (post.filtered ?? []).isEmpty
            ? nil : t("Filtered: {phrase}", ["phrase": (post.filtered ?? []).map(\.phrase).joined(separator: ", ")])
        audience = Choice(post.audience)
        audienceLabel = Self.audienceLabel(post.audience, t: t)
        postPath = PublicLinks.paths.postPage(post.id)
        kind = post.kind.rawValue
        isPhoto = post.kind == .photo
        author = AuthorView(post.author, t: t)
        title = post.title.nonEmpty
        body = post.body.nonEmpty
        bodyHTML = body.map { PostTextHTML.render($0, links: .paths) }
        contentWarning = post.contentWarning.nonEmpty
        sensitive = post.sensitive
        spaces = post.spaces
        media = post.media.map(MediaView.init)
        cover = media.first
        multiple = post.media.count > 1
        mediaCount = post.media.count
        hasMedia = !post.media.isEmpty
        mediaLabel = t.plural(post.media.count, one: "{count} photo or video", other: "{count} photos and videos")
        link = post.link.map(LinkView.init)
        location = post.location.map { LocationView($0, t: t) }
        activity = post.activity.map(ActivityView.init)
        price = post.price.nonEmpty
        createdAt = post.createdAt.description
        when = t.dateTime(post.createdAt)
        edited = post.editedAt != nil
        counts = post.counts
        likeCount = t.number(post.counts.likes)
        likesLabel = t.plural(post.counts.likes, one: "{count} like", other: "{count} likes")
        boostable = post.audience == .public
        boostCount = t.number(post.counts.boosts)
        boostsLabel = t.plural(post.counts.boosts, one: "{count} boost", other: "{count} boosts")
        boostedBy = post.boost.map { t("{name} boosted", ["name": $0.by.displayName]) }
        boosterPath = post.boost.map { PublicLinks.paths.profilePage($0.by.username) }
        commentCount = t.number(post.counts.comments)
        question = Self.asks(post)
        commentsLabel =
            question
            ? t.plural(post.counts.comments, one: "{count} answer", other: "{count} answers")
            : t.plural(post.counts.comments, one: "{count} comment", other: "{count} comments")
        self.viewer = post.viewer
        mine = viewer.map { String($0) == post.author.id } ?? false
        pinned = post.pinned
        initial = Self.initial(post.author.displayName)
        let caption = [post.title, post.body].compactMap { $0 }.first { !$0.isEmpty }
        alt =
            caption
            ?? (post.kind == .photo
                ? t("Photo by {name}", ["name": post.author.displayName])
                : t("Post by {name}", ["name": post.author.displayName]))
    }

    /// A badge for who may read a post, unless everyone may.
    static func audienceLabel(_ audience: PostAudience, t: Localizer) -> String? {
        switch audience {
        case .public: nil
        case .followers: t("Followers")
        case .members: t("Members")
        }
    }

    static func asks(_ post: Post) -> Bool {
        guard post.kind == .text, !post.spaces.isEmpty,
            let last = (post.title.nonEmpty ?? post.body.nonEmpty)?.trimmingCharacters(in: .whitespacesAndNewlines).last
        else { return false }
        return "?؟？".contains(last)
    }

    /// The first letter of a name, shown where there is no photo.
    static func initial(_ name: String) -> String { name.first.map { String($0).uppercased() } ?? "?" }
}

/// A post's poll: options to choose from while the reader may vote, else its results (once
/// they voted, to its author, and once it ended) or its options alone.
struct PollView: Sendable {
    struct Option: Sendable {
        let index: Int
        let title: String
        /// "42%" and the bar's width, once results show.
        let percent: String?
        let width: Int
        let chosen: Bool
    }
    let id: String
    let options: [Option]
    /// Signed in, not its author, not voted yet, not ended: the options are a form.
    let votable: Bool
    /// Radio buttons for one choice, checkboxes for several.
    let inputType: String
    /// "12 people voted · ends 6 Dec, 14:00" or "· ended".
    let summary: String

    init(_ poll: Poll, mine: Bool, signedIn: Bool, t: Localizer) {
        id = poll.id
        votable = signedIn && !mine && !poll.viewer.voted && !poll.expired
        inputType = poll.multiple ? "checkbox" : "radio"
        // Of the voters in a multiple-choice poll (each may choose several), as Mastodon shows it.
        let total = max(poll.multiple ? poll.votersCount : poll.votesCount ?? 0, 1)
        options = poll.options.enumerated().map { index, option in
            let share = option.votes.map { Int((Double($0) * 100 / Double(total)).rounded()) }
            return Option(
                index: index, title: option.title, percent: share.map { "\(t.number($0))%" }, width: share ?? 0,
                chosen: poll.viewer.choices.contains(index))
        }
        let voters = t.plural(poll.votersCount, one: "{count} person voted", other: "{count} people voted")
        let end = poll.expired ? t("ended") : t("ends {time}", ["time": t.dateTime(poll.expiresAt)])
        summary = voters + " · " + end
    }
}

/// A post's or a comment's author.
struct AuthorView: Sendable {
    let username: String
    let displayName: String
    let avatar: Media?
    let status: UserStatus?
    /// "Safe: home by 8", shown beside the name on their cards.
    let statusLabel: String?

    init(_ author: UserSummary, t: Localizer) {
        username = author.username
        displayName = author.displayName
        avatar = author.avatar
        status = author.status
        statusLabel = author.status.map { UserView.statusLabel($0, t: t) }
    }
}

/// A link card: a post's link or a saved link, with its preview when one was fetched.
struct LinkView: Sendable {
    let url: String
    let imageURL: String?
    let description: String?
    /// The preview's title, else the URL.
    let linkTitle: String
    /// The host a post's card names, else the URL.
    let linkHost: String
    /// YouTube's or Vimeo's player, which the post page loads when asked to play.
    let embedURL: String?

    init(_ link: LinkPreview) {
        url = link.url
        embedURL = link.embedURL
        imageURL = link.imageURL.nonEmpty
        description = link.description.nonEmpty
        linkTitle = link.title ?? link.url
        linkHost = URL(string: link.url)?.host ?? link.url
    }
}

/// Where a post was made.
struct LocationView: Sendable {
    let latitude: String
    let longitude: String
    /// The name the author gave, for the edit form.
    let name: String?
    /// The name, else "Pinned place".
    let placeName: String

    init(_ location: Location, t: Localizer) {
        latitude = location.latitude.jsonText
        longitude = location.longitude.jsonText
        name = location.name
        placeName = location.name ?? t("Pinned place")
    }
}

/// An activity post's progress.
struct ActivityView: Sendable {
    let type: String
    let emoji: String?
    let color: String?
    let progress: Int
    let done: Bool

    init(_ activity: Activity) {
        type = activity.type
        emoji = activity.emoji
        color = activity.color
        progress = activity.progress
        done = activity.progress >= 100
    }
}

/// A comment under a post.
struct CommentView: Sendable {
    let id: String
    let author: AuthorView
    let body: String
    /// The text as HTML, its links, mentions and hashtags linked.
    let bodyHTML: String
    let createdAt: String
    let when: String
    /// The viewer wrote the comment or the post.
    let deletable: Bool
    /// A signed-in viewer may report someone else's comment (in the post page's report sheet).
    let reportComment: ReportFormView?
    /// Delete or report: the comment's menu.
    let hasMenu: Bool
    /// "Filtered: spoilers": the reader's keyword filters fold it behind a warning, to open.
    let filteredLabel: String?

    init(_ comment: Comment, viewer: Int64?, postAuthor: String?, t: Localizer) {
        id = comment.id
        filteredLabel =
            (comment.filtered ?? []).isEmpty
            ? nil : t("Filtered: {phrase}", ["phrase": (comment.filtered ?? []).map(\.phrase).joined(separator: ", ")])
        author = AuthorView(comment.author, t: t)
        body = comment.body
        bodyHTML = PostTextHTML.render(comment.body, links: .paths)
        createdAt = comment.createdAt.description
        when = t.dateTime(comment.createdAt)
        let mine = viewer.map { String($0) == comment.author.id } ?? false
        deletable = mine || (viewer.map { String($0) } == postAuthor && postAuthor != nil)
        reportComment = viewer != nil && !mine ? ReportFormView(.comment, id: comment.id, rules: [], t: t) : nil
        hasMenu = deletable || reportComment != nil
    }
}

/// `report-form.mustache`: a signed-in person reports a post, a comment or a person.
struct ReportFormView: Sendable {
    let targetType: String
    let targetId: String
    let label: String
    /// The instance's rules, to cite when it breaks some.
    let rules: [InstanceRule]
    let hasRules: Bool

    init(_ type: ReportTargetType, id: String, rules: [InstanceRule], t: Localizer) {
        targetType = type.rawValue
        targetId = id
        self.rules = rules
        hasRules = !rules.isEmpty
        label =
            switch type {
            case .post: t("Report this post")
            case .comment: t("Report this comment")
            case .user: t("Report this person")
            }
    }

    /// The form for a post, when `viewer` is signed in and did not write it.
    static func post(_ post: Post, viewer: Int64?, rules: [InstanceRule], t: Localizer) -> ReportFormView? {
        guard let viewer, String(viewer) != post.author.id else { return nil }
        return ReportFormView(.post, id: post.id, rules: rules, t: t)
    }
}

/// A person: a profile, a row in a list of people, the settings' profile form.
struct UserView: Sendable {
    let username: String
    let displayName: String
    let bio: String?
    let avatar: Media?
    let status: UserStatus?
    /// "Busy: planting", or the kind alone when there is no text.
    let statusLabel: String?
    let counts: User.Counts
    /// The profile's counts, "<strong>12</strong> followers" (HTML: the number in bold).
    let postsLabel: String
    let followersLabel: String
    let followingLabel: String
    /// How the viewer relates to this person; nil when signed out or for oneself.
    let viewer: User.Viewer?
    /// This is the viewer, who gets no follow or block button.
    let me: Bool
    /// Follows need this person's approval.
    let locked: Bool
    /// The follow button is pressed while I follow them or my request waits.
    let followPressed: Bool
    /// "Unfollow", "Requested" or "Follow".
    let followLabel: String
    /// The initial, where there is no avatar.
    let initial: String

    init(_ user: User, viewer: Int64?, t: Localizer) {
        username = user.username
        displayName = user.displayName
        bio = user.bio.nonEmpty
        avatar = user.avatar
        status = user.status
        statusLabel = user.status.map { Self.statusLabel($0, t: t) }
        counts = user.counts
        postsLabel = t.plural(
            user.counts.posts, one: "<strong>{count}</strong> post", other: "<strong>{count}</strong> posts")
        followersLabel = t.plural(
            user.counts.followers, one: "<strong>{count}</strong> follower", other: "<strong>{count}</strong> followers"
        )
        followingLabel = t.plural(
            user.counts.following, one: "<strong>{count}</strong> following",
            other: "<strong>{count}</strong> following")
        self.viewer = user.viewer
        me = viewer.map { String($0) == user.id } ?? false
        locked = user.locked
        let relation = user.viewer
        followPressed = relation.map { $0.following || $0.requested } ?? false
        followLabel =
            relation?.following == true ? t("Unfollow") : relation?.requested == true ? t("Requested") : t("Follow")
        initial = PostView.initial(user.displayName)
    }

    /// The kinds the settings offer in the reader's language; another kind (the API takes any) as it is written.
    static func statusLabel(_ status: UserStatus, t: Localizer) -> String {
        let kind =
            switch status.kind {
            case "safe": t("Safe")
            case "busy": t("Busy")
            case "away": t("Away")
            case "available": t("Available")
            default: status.kind.prefix(1).uppercased() + status.kind.dropFirst()
            }
        return status.text.isEmpty ? kind : t("{status}: {text}", ["status": kind, "text": status.text])
    }
}

/// Someone asking to follow me, in my inbox of follow requests.
struct FollowRequestView: Sendable {
    let username: String
    let displayName: String
    let avatar: Media?
    let initial: String
    let requestedAt: String
    let when: String

    init(_ request: JoinRequest, t: Localizer) {
        username = request.user.username
        displayName = request.user.displayName
        avatar = request.user.avatar
        initial = PostView.initial(request.user.displayName)
        requestedAt = request.requestedAt.description
        when = t.dateTime(request.requestedAt)
    }
}

/// A space in lists, on its page and in the layout's switcher.
struct SpaceView: Sendable {
    let slug: String
    let name: String
    let description: String?
    let image: Media?
    let counts: Space.Counts
    let viewer: Space.Viewer
    let visibility: Choice
    /// "Closed" or "Private", unless open.
    let visibilityLabel: String?
    /// "12 members", "3 posts".
    let membersLabel: String
    let postsLabel: String
    let moderator: Bool

    init(_ space: Space, t: Localizer) {
        visibility = Choice(space.visibility)
        visibilityLabel =
            switch space.visibility {
            case .open: nil
            case .closed: t("Closed")
            case .private: t("Private")
            }
        membersLabel = t.plural(space.counts.members, one: "{count} member", other: "{count} members")
        postsLabel = t.plural(space.counts.posts, one: "{count} post", other: "{count} posts")
        moderator = space.viewer.role == .owner || space.viewer.role == .moderator
        slug = space.slug
        name = space.name
        description = space.description.nonEmpty
        image = space.image
        counts = space.counts
        viewer = space.viewer
    }
}

/// A notification as a sentence with a link.
struct NotificationView: Sendable {
    let id: String
    let kind: String
    let read: Bool
    /// "Ana and 2 others liked your post".
    let text: String
    /// The post, else the person who acted.
    let href: String
    /// The comment, else the post's title or text.
    let excerpt: String?
    let createdAt: String
    let when: String

    init(_ n: PlazaAPI.Notification, t: Localizer) {
        id = n.id
        kind = n.kind.rawValue
        read = n.read
        text = n.sentence(t)
        href =
            switch n.kind {
            case .followRequest: "/follow-requests"
            default: n.post.map { PublicLinks.paths.postPage($0.id) } ?? PublicLinks.paths.profilePage(n.actor.username)
            }
        excerpt = n.comment?.body ?? n.post.flatMap { $0.title ?? $0.body }
        createdAt = n.createdAt.description
        when = t.dateTime(n.createdAt)
    }
}

/// A saved post or link in a collection or in search results.
struct ItemView: Sendable {
    let id: String
    let post: PostView?
    let link: LinkView?
    let state: Choice
    let note: String?
    let savedAt: String
    let when: String

    init(_ item: CollectionItem, viewer: Int64, t: Localizer) {
        id = item.id
        post = item.post.map { PostView($0, viewer: viewer, t: t) }
        link = item.link.map(LinkView.init)
        state = Choice(item.state)
        note = item.note.nonEmpty
        savedAt = item.savedAt.description
        when = t.dateTime(item.savedAt)
    }
}

/// A post in my reading history.
struct HistoryEntryView: Sendable {
    let post: PostView
    /// How many times I viewed it, as the reader's language writes the number.
    let views: String
    let viewedAt: String
    let viewed: String

    init(_ item: HistoryItem, viewer: Int64, t: Localizer) {
        post = PostView(item.post, viewer: viewer, t: t)
        views = t.number(item.views)
        viewedAt = item.viewedAt.description
        viewed = t.dateTime(item.viewedAt)
    }
}

/// One of my sessions in settings.
struct SessionView: Sendable {
    let id: String
    let userAgent: String?
    let ip: String?
    let lastUsedAt: String
    let lastUsed: String
    /// This browser's.
    let current: Bool
    /// The app let in with OAuth, and what it may do.
    let app: String?
    let scopes: String?

    init(_ session: Session, t: Localizer) {
        app = session.app
        scopes = session.scopes
        id = session.id
        userAgent = session.userAgent.nonEmpty
        ip = session.ip
        lastUsedAt = session.lastUsedAt.description
        lastUsed = t.dateTime(session.lastUsedAt)
        current = session.current
    }
}

/// The activity heatmap as cells in week columns (Sunday first), each with a level 0–4.
struct HeatmapView: Sendable {
    struct Cell: Sendable {
        /// Fills the first column up to the first day's weekday.
        let pad: Bool
        let date: String
        let level: Int
        let label: String
    }
    let cells: [Cell]
    /// "12 active days".
    let activeLabel: String
    let completed: Int
    /// Activities started in the window and not finished yet.
    let unfinished: Int
    /// "<span data-completed>3</span> completed" and "<span data-unfinished>1</span> unfinished"
    /// (HTML: the number in its own element).
    let completedLabel: String
    let unfinishedLabel: String
    /// "Streak: 3 days · longest 12 days", counted in the owner's days; nil before any.
    let streakLabel: String?

    init(_ map: ActivityHeatmap, t: Localizer) {
        var cells: [Cell] = []
        if let first = map.days.first, let offset = Self.weekday(of: first.date) {
            cells += Array(repeating: Cell(pad: true, date: "", level: 0, label: ""), count: offset)
        }
        var active = 0
        var completed = 0
        var unfinished = 0
        let dayStyle = Self.dayStyle(t)
        // A day's label with `{date}` still to fill, made once for each set of counts (most days have none).
        var labels: [[Int]: String] = [:]
        for day in map.days {
            let total = day.completed + day.posted
            if total > 0 { active += 1 }
            completed += day.completed
            let level = total == 0 ? 0 : min(4, day.completed > 0 ? 2 + day.completed : 1)
            unfinished += day.unfinished
            let counts = [day.posted, day.completed, day.unfinished]
            if labels[counts] == nil {
                labels[counts] = t(
                    "{date}: {posted}, {completed}, {unfinished}",
                    [
                        "posted": t.plural(day.posted, one: "{count} posted", other: "{count} posted"),
                        "completed": t.plural(day.completed, one: "{count} completed", other: "{count} completed"),
                        "unfinished": t.plural(day.unfinished, one: "{count} unfinished", other: "{count} unfinished"),
                    ])
            }
            let label = Localizer.fill(labels[counts] ?? "", ["date": Self.day(day.date, dayStyle)])
            cells.append(Cell(pad: false, date: day.date, level: level, label: label))
        }
        self.cells = cells
        activeLabel = t.plural(active, one: "{count} active day", other: "{count} active days")
        self.completed = completed
        self.unfinished = unfinished
        completedLabel = t.plural(
            completed, one: "<span data-completed>{count}</span> completed",
            other: "<span data-completed>{count}</span> completed")
        unfinishedLabel = t.plural(
            unfinished, one: "<span data-unfinished>{count}</span> unfinished",
            other: "<span data-unfinished>{count}</span> unfinished")
        streakLabel =
            map.streak.longest == 0
            ? nil
            : t(
                "Streak: {current} · longest {longest}",
                [
                    "current": t.plural(map.streak.current, one: "{count} day", other: "{count} days"),
                    "longest": t.plural(map.streak.longest, one: "{count} day", other: "{count} days"),
                ])
    }

    /// How the reader's language writes a day without its time (the days are calendar days, in UTC).
    static func dayStyle(_ t: Localizer) -> Date.FormatStyle {
        var style = Date.FormatStyle(
            date: .abbreviated, time: .omitted, locale: t.locale, timeZone: TimeZone(identifier: "UTC") ?? .gmt)
        style.calendar = Calendar(identifier: .gregorian)
        return style
    }

    /// `yyyy-mm-dd` in `style`; as it is when it is not such a date.
    static func day(_ date: String, _ style: Date.FormatStyle) -> String {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3,
            let day = style.calendar.date(
                from: DateComponents(
                    timeZone: style.timeZone, year: parts[0], month: parts[1], day: parts[2], hour: 12))
        else { return date }
        return day.formatted(style)
    }

    /// 0 for Sunday … 6 for Saturday, from `yyyy-mm-dd`.
    static func weekday(of date: String) -> Int? {
        let parts = date.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        var (y, m) = (parts[0], parts[1])
        if m < 3 {
            y -= 1
            m += 12
        }
        let k = y % 100
        let j = y / 100
        let h = (parts[2] + 13 * (m + 1) / 5 + k + k / 4 + j / 4 + 5 * j) % 7  // Zeller: 0 = Saturday
        return (h + 6) % 7
    }
}

/// Which one of several options is chosen, for `checked`, `selected` and `aria-current`:
/// `{{#sort.views}}` is true when the choice is `views`.
struct Choice: Sendable, MustacheParent {
    let chosen: String

    init(_ chosen: String) { self.chosen = chosen }
    init<Option: RawRepresentable>(_ option: Option) where Option.RawValue == String { chosen = option.rawValue }

    func child(named name: String) -> Any? { name == chosen }
}

extension String? {
    /// Nil for an empty text too, so `{{#bio}}…{{/bio}}` shows nothing for an empty bio.
    var nonEmpty: String? { self?.isEmpty == false ? self : nil }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}

extension Double {
    /// As the API's JSON writes it: whole numbers without a fraction (`50`, not `50.0`).
    var jsonText: String { rounded() == self && abs(self) < 9e15 ? String(Int(self)) : String(self) }
}
