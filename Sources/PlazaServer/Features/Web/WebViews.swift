import Foundation
import Mustache
import PlazaAPI

// What the templates read, as plain stored values made from the API's objects. Mustache reads
// stored properties through `Mirror` and walks up the context stack when a name is missing
// or nil, so the rules below keep every page as it was when the values were JSON:
// - a text that a template tests with `{{#name}}` is nil when empty ("" would open the section);
// - times are the API's ISO 8601 strings (scripts read `datetime=`), shown readable beside;
// - numbers print as JSON prints them (`50`, not `50.0`);
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

    init(_ media: Media) {
        id = media.id
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
    let spaces: [SpaceSummary]
    let media: [MediaView]
    /// The first photo or video: the card's and the grid's picture.
    let cover: MediaView?
    /// More than one photo: the post page shows a gallery.
    let multiple: Bool
    let link: LinkView?
    let location: LocationView?
    let activity: ActivityView?
    let price: String?
    let createdAt: String
    let when: String
    let edited: Bool
    let counts: Post.Counts
    let viewer: Post.Viewer
    /// Written by the viewer, who may edit and delete it.
    /// Who may read it, for the edit form, and a badge unless everyone may.
    let audience: Choice
    let audienceLabel: String?
    let mine: Bool
    /// The author's initial, where there is no avatar.
    let initial: String
    /// The title or text, else "Photo by …": the photos' alt text and the saved post's name.
    let alt: String

    init(_ post: Post, viewer: Int64?) {
        id = post.id
        audience = Choice(post.audience)
        audienceLabel =
            switch post.audience {
            case .public: nil
            case .followers: "Followers"
            case .members: "Members"
            }
        postPath = "/p/\(post.id)"
        kind = post.kind.rawValue
        isPhoto = post.kind == .photo
        author = AuthorView(post.author)
        title = post.title.nonEmpty
        body = post.body.nonEmpty
        spaces = post.spaces
        media = post.media.map(MediaView.init)
        cover = media.first
        multiple = post.media.count > 1
        link = post.link.map(LinkView.init)
        location = post.location.map(LocationView.init)
        activity = post.activity.map(ActivityView.init)
        price = post.price.nonEmpty
        createdAt = post.createdAt.description
        when = post.createdAt.readable
        edited = post.editedAt != nil
        counts = post.counts
        self.viewer = post.viewer
        mine = viewer.map { String($0) == post.author.id } ?? false
        initial = Self.initial(post.author.displayName)
        let caption = [post.title, post.body].compactMap { $0 }.first { !$0.isEmpty }
        alt = caption ?? "\(post.kind == .photo ? "Photo" : "Post") by \(post.author.displayName)"
    }

    /// The first letter of a name, shown where there is no photo.
    static func initial(_ name: String) -> String { name.first.map { String($0).uppercased() } ?? "?" }
}

/// A post's or a comment's author.
struct AuthorView: Sendable {
    let username: String
    let displayName: String
    let avatar: Media?
    let status: UserStatus?
    /// "Safe: home by 8", shown beside the name on their cards.
    let statusLabel: String?

    init(_ author: UserSummary) {
        username = author.username
        displayName = author.displayName
        avatar = author.avatar
        status = author.status
        statusLabel = author.status.map(UserView.statusLabel)
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

    init(_ location: Location) {
        latitude = location.latitude.jsonText
        longitude = location.longitude.jsonText
        name = location.name
        placeName = location.name ?? "Pinned place"
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
    let createdAt: String
    let when: String
    /// The viewer wrote the comment or the post.
    let deletable: Bool
    /// A signed-in viewer may report someone else's comment.
    let reportComment: ReportFormView?

    init(_ comment: Comment, viewer: Int64?, postAuthor: String?) {
        id = comment.id
        author = AuthorView(comment.author)
        body = comment.body
        createdAt = comment.createdAt.description
        when = comment.createdAt.readable
        let mine = viewer.map { String($0) == comment.author.id } ?? false
        deletable = mine || (viewer.map { String($0) } == postAuthor && postAuthor != nil)
        reportComment = viewer != nil && !mine ? ReportFormView(.comment, id: comment.id) : nil
    }
}

/// `report-form.mustache`: a signed-in person reports a post, a comment or a person.
struct ReportFormView: Sendable {
    let targetType: String
    let targetId: String
    let label: String

    init(_ type: ReportTargetType, id: String) {
        targetType = type.rawValue
        targetId = id
        label = "Report this \(type == .user ? "person" : type.rawValue)"
    }

    /// The form for a post, when `viewer` is signed in and did not write it.
    static func post(_ post: Post, viewer: Int64?) -> ReportFormView? {
        guard let viewer, String(viewer) != post.author.id else { return nil }
        return ReportFormView(.post, id: post.id)
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

    init(_ user: User, viewer: Int64?) {
        username = user.username
        displayName = user.displayName
        bio = user.bio.nonEmpty
        avatar = user.avatar
        status = user.status
        statusLabel = user.status.map(Self.statusLabel)
        counts = user.counts
        self.viewer = user.viewer
        me = viewer.map { String($0) == user.id } ?? false
        locked = user.locked
        let relation = user.viewer
        followPressed = relation.map { $0.following || $0.requested } ?? false
        followLabel = relation?.following == true ? "Unfollow" : relation?.requested == true ? "Requested" : "Follow"
        initial = PostView.initial(user.displayName)
    }

    static func statusLabel(_ status: UserStatus) -> String {
        let kind = status.kind.prefix(1).uppercased() + status.kind.dropFirst()
        return status.text.isEmpty ? kind : "\(kind): \(status.text)"
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

    init(_ request: JoinRequest) {
        username = request.user.username
        displayName = request.user.displayName
        avatar = request.user.avatar
        initial = PostView.initial(request.user.displayName)
        requestedAt = request.requestedAt.description
        when = request.requestedAt.readable
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
    let moderator: Bool

    init(_ space: Space) {
        visibility = Choice(space.visibility)
        visibilityLabel = space.visibility == .open ? nil : space.visibility.rawValue.capitalized
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

    init(_ n: PlazaAPI.Notification) {
        id = n.id
        kind = n.kind.rawValue
        read = n.read
        let others = n.actorCount - 1
        let name = n.actor.displayName
        let who = others > 0 ? "\(name) and \(others) \(others == 1 ? "other" : "others")" : name
        let what =
            switch n.kind {
            case .like: "liked your post"
            case .comment: "commented on your post"
            case .reply: "replied in a thread you are in"
            case .follow: "followed you"
            case .mention: "mentioned you"
            case .followRequest: "asked to follow you"
            case .reportResolved: "resolved your report"
            case .recommendation: "recommended a post to you"
            }
        text = "\(who) \(what)"
        href =
            switch n.kind {
            case .followRequest: "/follow-requests"
            default: n.post.map { "/p/\($0.id)" } ?? "/u/\(n.actor.username)"
            }
        excerpt = n.comment?.body ?? n.post.flatMap { $0.title ?? $0.body }
        createdAt = n.createdAt.description
        when = n.createdAt.readable
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

    init(_ item: CollectionItem, viewer: Int64) {
        id = item.id
        post = item.post.map { PostView($0, viewer: viewer) }
        link = item.link.map(LinkView.init)
        state = Choice(item.state)
        note = item.note.nonEmpty
        savedAt = item.savedAt.description
        when = item.savedAt.readable
    }
}

/// A post in my reading history.
struct HistoryEntryView: Sendable {
    let post: PostView
    let views: Int
    let viewedAt: String
    let viewed: String

    init(_ item: HistoryItem, viewer: Int64) {
        post = PostView(item.post, viewer: viewer)
        views = item.views
        viewedAt = item.viewedAt.description
        viewed = item.viewedAt.readable
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

    init(_ session: Session) {
        app = session.app
        scopes = session.scopes
        id = session.id
        userAgent = session.userAgent.nonEmpty
        ip = session.ip
        lastUsedAt = session.lastUsedAt.description
        lastUsed = session.lastUsedAt.readable
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

    init(_ map: ActivityHeatmap) {
        var cells: [Cell] = []
        if let first = map.days.first, let offset = Self.weekday(of: first.date) {
            cells += Array(repeating: Cell(pad: true, date: "", level: 0, label: ""), count: offset)
        }
        var active = 0
        var completed = 0
        var unfinished = 0
        for day in map.days {
            let total = day.completed + day.posted
            if total > 0 { active += 1 }
            completed += day.completed
            let level = total == 0 ? 0 : min(4, day.completed > 0 ? 2 + day.completed : 1)
            unfinished += day.unfinished
            let label =
                "\(day.date): \(day.posted) posted, \(day.completed) completed, \(day.unfinished) unfinished"
            cells.append(Cell(pad: false, date: day.date, level: level, label: label))
        }
        self.cells = cells
        activeLabel = active == 1 ? "1 active day" : "\(active) active days"
        self.completed = completed
        self.unfinished = unfinished
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

extension Timestamp {
    /// `2026-11-21 09:30 UTC` (scripts show it relative, in local time).
    var readable: String {
        let iso = description
        return iso.prefix(10) + " " + iso.dropFirst(11).prefix(5) + " UTC"
    }
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
