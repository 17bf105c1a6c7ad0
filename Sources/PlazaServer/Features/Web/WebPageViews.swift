import Foundation
import Mustache
import PlazaAPI

/// What `layout.mustache` shows around every page: the title, the current navigation entry,
/// the assets' version, the forms' CSRF token, and who is signed in with their spaces.
struct Layout: Sendable {
    /// The entries of the main navigation, as the layout names them (`{{#nav.home}}`).
    enum Nav: String, Sendable {
        case home, explore, spaces, compose, search, notifications, collections, history, activities, profile, settings
        case admin
        /// Signed out.
        case login, signup
    }

    let pageTitle: String
    let nav: Choice
    /// The assets' version, appended to their URLs.
    let v: String
    /// Empty on the error page, which has no forms.
    let csrf: String
    let me: SignedIn?
    /// The spaces I joined, for the switcher and the composer.
    let mySpaces: [SpaceView]
    /// An admin or a space's moderator: the navigation links to `/admin`.
    let moderates: Bool
    let hasSpaces: Bool
    /// The space the switcher reopens (my `lastSpace` preference), shown when it is set at all.
    let lastSpace: String?
    /// "Continue with …" on the sign-in and sign-up pages.
    var signInProviders: [ProviderButton] = []
    /// `<html lang dir>`.
    let lang: String
    let dir: String
    /// The scripts' translated texts, as JSON (`app.js` reads them).
    var scriptMessages = "{}"
    /// The instance's name as its admins set it: the brand and the end of every title.
    var siteName = "Plaza"
    /// The reader opens every content warning and sensitive photo at once (preference `expandWarnings`).
    let expandWarnings: Bool
    /// `<link rel="alternate">`s in the head: the feeds of the page's person or space.
    var alternates: [Alternate] = []

    /// A feed of the page, for browsers and feed readers to discover.
    struct Alternate: Sendable {
        let type: String
        let title: String
        let href: String

        /// The RSS and Atom feeds at `address` (a path, `/@ana` or `/s/ramen`) of `name`.
        static func feeds(_ address: String, of name: String, t: Localizer) -> [Alternate] {
            [
                Alternate(
                    type: "application/rss+xml", title: t("RSS feed of {name}", ["name": name]), href: address + ".rss"),
                Alternate(
                    type: "application/atom+xml", title: t("Atom feed of {name}", ["name": name]),
                    href: address + ".atom"),
            ]
        }
    }

    struct ProviderButton: Sendable {
        let id: String
        let name: String
    }

    /// The signed-in person as the layout shows them: a link to their profile and the unread badge.
    struct SignedIn: Sendable {
        let username: String
        let unread: Int
        let hasUnread: Bool
        /// Shown in the banner that asks to confirm it, until it is confirmed.
        let unverifiedEmail: String?
    }

    init(
        title: String, nav: Nav?, assetVersion: String, csrf: String, t: Localizer, me: Me? = nil,
        mySpaces: [Space] = [], moderates: Bool = false
    ) {
        self.moderates = moderates
        lang = t.language.rawValue
        dir = t.language.isRightToLeft ? "rtl" : "ltr"
        pageTitle = title
        self.nav = Choice(nav?.rawValue ?? "")
        v = assetVersion
        self.csrf = csrf
        self.me = me.map {
            SignedIn(
                username: $0.user.username, unread: $0.unreadNotifications, hasUnread: $0.unreadNotifications > 0,
                unverifiedEmail: $0.emailVerified || $0.email.isEmpty ? nil : $0.email)
        }
        self.mySpaces = mySpaces.map { SpaceView($0, t: t) }
        hasSpaces = !mySpaces.isEmpty
        lastSpace = me?.preferences["lastSpace"]?.stringValue
        expandWarnings = me?.preferences["expandWarnings"] == .bool(true)
    }
}

/// A page's own view inside the layout. Mustache looks a name up in the layout's values, then
/// in the page's (a view's stored properties, as Mustache itself reads them).
struct WebPage<Body: Sendable>: Sendable, MustacheParent {
    let layout: Layout
    let body: Body

    func child(named name: String) -> Any? {
        Self.value(named: name, in: layout) ?? Self.value(named: name, in: body)
    }

    /// The stored property `name` of `object`, unwrapped; nil when there is none or it is nil.
    static func value(named name: String, in object: Any) -> Any? {
        guard let value = Mirror(reflecting: object).children.first(where: { $0.label == name })?.value else {
            return nil
        }
        let optional = Mirror(reflecting: value)
        guard optional.displayStyle == .optional else { return value }
        return optional.children.first?.value
    }
}

// MARK: the pages, one per template

/// `post-list.mustache`: cards and the link to older ones; a fragment for infinite scroll too.
struct PostList: Sendable {
    let posts: [PostView]
    let next: String?
}

/// `feed.mustache`: home and explore.
struct FeedPage: Sendable {
    let heading: String
    /// The live stream the page listens to for new posts.
    let live: String
    let posts: [PostView]
    let next: String?
    /// Explore's tabs: everything, or photos and videos only as a grid (`photos`).
    var tabs = false
    var photos = false
    /// An empty home: people and spaces to follow, and Explore's newest posts meanwhile.
    var welcome: WelcomeView?
    /// Beside the feed on wide screens.
    var side: SideView?

    init(heading: String, live: String, _ list: PostList, tabs: Bool = false, photos: Bool = false) {
        self.heading = heading
        self.live = live
        self.tabs = tabs
        self.photos = photos
        posts = list.posts
        next = list.next
    }
}

/// `post-history.mustache`: a post's versions, newest first.
struct PostHistoryPage: Sendable {
    struct Version: Sendable {
        let createdAt: String
        let when: String
        let current: Bool
        let first: Bool
        let title: String?
        let contentWarning: String?
        let bodyHTML: String?

        init(_ version: PostVersion, t: Localizer, current: Bool, first: Bool) {
            createdAt = version.createdAt.description
            when = t.dateTime(version.createdAt)
            self.current = current
            self.first = first
            title = version.title.nonEmpty
            contentWarning = version.contentWarning.nonEmpty
            bodyHTML = version.body.nonEmpty.map { PostTextHTML.render($0, links: .paths) }
        }
    }
    let back: String
    let versions: [Version]
}

/// `tag.mustache`: a hashtag's public posts.
struct TagPage: Sendable {
    let tag: HashtagSummary
    /// "5 posts this week".
    let usage: String
    let followLabel: String
    let posts: [PostView]
    let next: String?

    init(tag: HashtagSummary, usage: String, followLabel: String, _ list: PostList) {
        self.tag = tag
        self.usage = usage
        self.followLabel = followLabel
        posts = list.posts
        next = list.next
    }
}

/// `space.mustache`.
struct SpacePage: Sendable {
    let space: SpaceView
    let live: String
    let posts: [PostView]
    let next: String?
    /// The announcements its moderators pinned, above its feed (on its first page).
    var pinned: PinnedView?

    init(_ space: Space, _ list: PostList, t: Localizer) {
        self.space = SpaceView(space, t: t)
        live = "space:\(space.slug)"
        posts = list.posts
        next = list.next
    }
}

/// `spaces.mustache`.
struct SpacesPage: Sendable {
    let spaces: [SpaceView]
    let next: String?
    let q: String
    /// What was searched for, when something was.
    let searched: String?
}

/// `compose.mustache`.
struct ComposePage: Sendable {
    let kind: Choice
    /// The space to tick, from `?space=`.
    let space: String
    /// A poll's first option fields ("Option 1" …; the page adds more, up to the most a poll has).
    let pollOptions: [Label]
    let pollDurations: [Duration]
    let maxPollOptions = PollRules.optionCount.upperBound

    struct Label: Sendable { let label: String }
    struct Duration: Sendable {
        let seconds: Int
        let label: String
        let selected: Bool
    }

    init(kind: PostKind, space: String, t: Localizer) {
        self.kind = Choice(kind)
        self.space = space
        pollOptions = (1...4).map { Label(label: t("Option {number}", ["number": t.number($0)])) }
        let hour = 3600
        let day = 86_400
        pollDurations = [
            (300, t("5 minutes")), (1800, t("30 minutes")), (hour, t("1 hour")), (6 * hour, t("6 hours")),
            (day, t("1 day")), (3 * day, t("3 days")), (7 * day, t("7 days")),
        ].map { Duration(seconds: $0.0, label: $0.1, selected: $0.0 == day) }
    }
}

/// `post.mustache`.
struct PostPage: Sendable {
    let post: PostView
    let comments: [CommentView]
    let moreComments: String?
    /// The last comment's cursor: where live updates go on from.
    let after: String
    /// Where the signed-in viewer can save the post.
    let myCollections: [SavedCollection]
    let hasCollections: Bool
    let reportPost: ReportFormView?
    /// The sheet every comment's Report opens, its comment filled in by the script.
    let reportComments: ReportFormView?
    /// `save-form.mustache` saves this post (and not a link). Stored: templates read stored
    /// properties only.
    let savePostId: String
    /// The post's place on a map, when it has one.
    let map: MapView?
    /// Tells `post-card.mustache` it is the page's post: its menu has the page's actions.
    let postPage = true
}

/// `edit.mustache`.
struct EditPage: Sendable {
    let post: PostView
}

/// `comment-list.mustache`: the comments a post page appends.
struct CommentList: Sendable {
    let comments: [CommentView]
}

/// `profile.mustache`.
struct ProfilePage: Sendable {
    let user: UserView
    /// nil for someone else who tracks no activity.
    let heatmap: HeatmapView?
    /// `?kind=photo`: the photos as a grid.
    let grid: Bool
    let posts: [PostView]
    let next: String?
    /// The posts pinned to the profile, above its posts (on their first page).
    var pinned: PinnedView?
    /// A signed-in viewer may report someone else.
    let reportUser: ReportFormView?

    init(user: UserView, heatmap: HeatmapView?, grid: Bool, _ list: PostList, reportUser: ReportFormView? = nil) {
        self.user = user
        self.heatmap = heatmap
        self.grid = grid
        posts = list.posts
        next = list.next
        self.reportUser = reportUser
    }
}

/// `people.mustache`: followers, following, friends, likers.
struct PeoplePage: Sendable {
    let heading: String
    let back: String
    let users: [UserView]
    let next: String?
}

/// `follow-requests.mustache`: the people asking to follow me.
struct FollowRequestsPage: Sendable {
    let requests: [FollowRequestView]
    let next: String?
}

/// `collections.mustache`.
struct CollectionsPage: Sendable {
    /// A collection in the list, with how many items it holds.
    struct Row: Sendable {
        let id: String
        let name: String
        /// "3 items".
        let itemsLabel: String
    }
    let collections: [Row]
    let next: String?
    /// For `save-form.mustache`, which saves a pasted link into one of them or a new one
    /// (stored: templates read stored properties only).
    let myCollections: [SavedCollection]
    let hasCollections: Bool

    init(collections: [SavedCollection], next: String?, t: Localizer) {
        self.collections = collections.map {
            Row(id: $0.id, name: $0.name, itemsLabel: CollectionPage.itemsLabel($0.counts.items, t: t))
        }
        self.next = next
        myCollections = collections
        hasCollections = !collections.isEmpty
    }
}

/// `collection.mustache`.
struct CollectionPage: Sendable {
    let collection: SavedCollection
    /// "3 items".
    let itemsLabel: String
    let items: [ItemView]
    /// The collections its items can move to.
    let others: [SavedCollection]
    let hasOthers: Bool
    /// Items show move and remove buttons (not in search results).
    let movable = true
    let next: String?

    init(
        collection: SavedCollection, items: [ItemView], others: [SavedCollection], hasOthers: Bool, next: String?,
        t: Localizer
    ) {
        self.collection = collection
        itemsLabel = Self.itemsLabel(collection.counts.items, t: t)
        self.items = items
        self.others = others
        self.hasOthers = hasOthers
        self.next = next
    }

    static func itemsLabel(_ count: Int, t: Localizer) -> String {
        t.plural(count, one: "{count} item", other: "{count} items")
    }
}

/// `search.mustache`: the form, and the results once something is asked.
struct SearchPage: Sendable {
    let q: String
    /// `q` for the tabs' links.
    let qParam: String
    /// What is searched: `posts`, `accounts` or `saved`.
    let tab: Choice
    /// The posts' field (`?in=`).
    let searchIn: Choice
    /// The posts' kind filter; `anyKind` when there is none.
    let kind: Choice
    let anyKind: Bool
    let near: String?
    /// Only people I follow (`followed=true`).
    let followed: Bool
    /// The results around the `near` point.
    var map: MapView?
    var posts: [PostView] = []
    var users: [UserView] = []
    var items: [ItemView] = []
    var next: String?
    /// Asked, and nothing found.
    var empty = false
}

/// `history.mustache`: my history, or my recommendations.
struct HistoryPage: Sendable {
    let entries: [HistoryEntryView]
    let next: String?
    let sort: Choice
    /// Which field the filter searches (`in=`).
    let searchIn: Choice
    let q: String
    let recommended: Bool
}

/// `activities.mustache`: my activity posts, by type and progress.
struct ActivitiesPage: Sendable {
    struct Filter: Sendable {
        let label: String
        let href: String
        let current: Bool
    }
    let posts: [PostView]
    let next: String?
    let types: [Filter]
    let progress: [Filter]

    init(_ list: PostList, types names: [String], type: String?, progress chosen: String?, t: Localizer) {
        posts = list.posts
        next = list.next
        func href(_ type: String?, _ progress: String?) -> String {
            var components = URLComponents()
            components.path = "/activities"
            let items = [
                type.map { URLQueryItem(name: "activity", value: $0) },
                progress.map { URLQueryItem(name: "progress", value: $0) },
            ].compactMap { $0 }
            components.queryItems = items.isEmpty ? nil : items
            return components.string ?? "/activities"
        }
        // The types are what people wrote in their posts, shown as they are.
        types =
            [Filter(label: t("All types"), href: href(nil, chosen), current: type == nil)]
            + names.map { Filter(label: $0, href: href($0, chosen), current: $0 == type) }
        progress = [(t("All"), nil), (t("In progress"), "ongoing"), (t("Done"), "done")].map { label, value in
            Filter(label: label, href: href(type, value), current: value == chosen)
        }
    }
}

/// What an empty home shows a new person (`feed.mustache`).
struct WelcomeView: Sendable {
    let people: [UserView]
    let hasPeople: Bool
    let spaces: [SpaceView]
    let hasSpaces: Bool
    let newest: [PostView]
    let hasNewest: Bool

    init(_ suggestions: Suggestions, newest: [PostView], viewer: Int64?, t: Localizer) {
        people = suggestions.people.map { UserView($0, viewer: viewer, t: t) }
        hasPeople = !people.isEmpty
        spaces = suggestions.spaces.map { SpaceView($0, t: t) }
        hasSpaces = !spaces.isEmpty
        self.newest = newest
        hasNewest = !newest.isEmpty
    }
}

/// The column beside a feed on wide screens (`side.mustache`): the spaces I joined (the
/// layout's), whom to follow and which spaces to join, and the newest photos; a visitor reads
/// what Plaza is and sees its spaces instead.
struct SideView: Sendable {
    let people: [UserView]
    let hasPeople: Bool
    let joinSpaces: [SpaceView]
    let hasJoinSpaces: Bool
    let newPhotos: [PostView]
    let hasNewPhotos: Bool
    /// The tags trending here.
    var trending: [HashtagSummary] = []
    var hasTrending = false

    init(people: [UserView], spaces: [SpaceView], photos: [PostView]) {
        self.people = people
        hasPeople = !people.isEmpty
        joinSpaces = spaces
        hasJoinSpaces = !spaces.isEmpty
        newPhotos = photos
        hasNewPhotos = !photos.isEmpty
    }
}

/// `landing.mustache`: `/` for a visitor, the community at a glance and what Plaza is.
struct LandingPage: Sendable {
    let posts: [PostView]
    /// Not `spaces`: the layout's names come first (`hasSpaces` is the visitor's, false).
    let communitySpaces: [SpaceView]
    let hasCommunitySpaces: Bool
    let photos: [PostView]
    let hasPhotos: Bool
}

/// `notifications.mustache`.
struct NotificationsPage: Sendable {
    let notifications: [NotificationView]
    let next: String?
    let unreadOnly: Bool
}

/// `settings.mustache`.
struct SettingsPage: Sendable {
    let user: UserView
    let email: String
    let emailVerified: Bool
    let pendingEmail: String?
    /// Sign-in methods: a password or not, linked providers (removable unless the last way in),
    /// and the configured providers not linked yet.
    let hasPassword: Bool
    let identities: [IdentityView]
    let linkable: [Layout.ProviderButton]

    struct IdentityView: Sendable {
        let provider: String
        let name: String
        let email: String?
        let removable: Bool
    }
    /// My status's kind, `none` without one.
    let statusKind: Choice
    let sessions: [SessionView]
    let twoFactor: TwoFactorStatus
    /// "10 recovery codes left".
    let recoveryCodesLabel: String
    let push: PushView
    /// The language menu: automatic (the browser's) unless I chose one of the web app's.
    let automaticLanguage: Bool
    let languages: [LanguageOption]
    /// Every time zone, mine chosen; UTC, and the browser's in `settings.js`, while I have none.
    let timeZoneSet: Bool
    let timeZones: [TimeZoneOption]
    /// Whether I may make invite links (`/invites`).
    var mayInvite = false

    struct LanguageOption: Sendable {
        let code: String
        /// In the language itself, whatever the page's.
        let name: String
        let selected: Bool
    }

    struct TimeZoneOption: Sendable {
        let id: String
        let selected: Bool
    }

    /// The zones the server accepts (`Validate.timeZone`), sorted.
    static let timeZoneIdentifiers: [String] = {
        var names = TimeZone.knownTimeZoneIdentifiers
        if !names.contains("UTC") { names.append("UTC") }
        return names.sorted()
    }()

    init(
        user: UserView, email: String, emailVerified: Bool, pendingEmail: String?, hasPassword: Bool,
        identities: [IdentityView], linkable: [Layout.ProviderButton], statusKind: Choice, sessions: [SessionView],
        twoFactor: TwoFactorStatus, push: PushView, preferences: JSONValue, t: Localizer
    ) {
        self.user = user
        self.email = email
        self.emailVerified = emailVerified
        self.pendingEmail = pendingEmail
        self.hasPassword = hasPassword
        self.identities = identities
        self.linkable = linkable
        self.statusKind = statusKind
        self.sessions = sessions
        self.twoFactor = twoFactor
        recoveryCodesLabel = t.plural(
            twoFactor.recoveryCodesLeft, one: "{count} recovery code left", other: "{count} recovery codes left")
        self.push = push
        let language = preferences["language"]?.stringValue.flatMap(Language.init(tag:))
        automaticLanguage = language == nil
        languages = Language.allCases.map {
            LanguageOption(code: $0.rawValue, name: $0.name, selected: $0 == language)
        }
        let zone = preferences["timeZone"]?.stringValue.flatMap { Validate.timeZone($0) != nil ? $0 : nil }
        timeZoneSet = zone != nil
        // A zone set through the API may be a name the menu does not list (`Etc/UTC`): it is added.
        let names =
            zone.map {
                Self.timeZoneIdentifiers.contains($0) ? Self.timeZoneIdentifiers : ([$0] + Self.timeZoneIdentifiers)
            } ?? Self.timeZoneIdentifiers
        timeZones = names.map { TimeZoneOption(id: $0, selected: $0 == (zone ?? "UTC")) }
    }

    /// Which notifications are pushed, and to which devices.
    struct PushView: Sendable {
        struct Kind: Sendable {
            let kind: String
            let label: String
            let on: Bool
        }
        struct Device: Sendable {
            let id: String
            let kind: String
            let label: String
            let thisSession: Bool
        }
        let kinds: [Kind]
        let devices: [Device]
        /// Stored: templates read stored properties only.
        let hasDevices: Bool

        /// The kinds in the order the settings list them.
        static let order: [NotificationKind] = [
            .like, .boost, .comment, .reply, .mention, .edited, .poll, .follow, .followRequest, .reportResolved,
            .recommendation,
        ]

        static func label(_ kind: NotificationKind, t: Localizer) -> String {
            switch kind {
            case .like: t("Likes of my posts")
            case .boost: t("Boosts of my posts")
            case .edited: t("Edits of posts I boosted or commented on")
            case .poll: t("Polls I made or voted in, when they end")
            case .comment: t("Comments on my posts")
            case .reply: t("Replies in threads I am in")
            case .mention: t("Mentions of me")
            case .follow: t("New followers")
            case .followRequest: t("Requests to follow me")
            case .reportResolved: t("Reports I made, once resolved")
            case .recommendation: t("Posts recommended to me")
            }
        }

        init(preferences: JSONValue, devices: [PushDevice], t: Localizer) {
            let settings = PushPreferences(value: preferences)
            kinds = Self.order.map { Kind(kind: $0.rawValue, label: Self.label($0, t: t), on: settings.wants($0)) }
            self.devices = devices.map {
                Device(
                    id: $0.id, kind: $0.platform == .apns ? t("iPhone or iPad app") : t("Browser"), label: $0.label,
                    thisSession: $0.thisSession)
            }
            hasDevices = !devices.isEmpty
        }
    }
}

/// `forgot-password.mustache`: the address form, then (`sent`) the same answer for every address.
struct ForgotPasswordPage: Sendable {
    var error: String?
    var email = ""
    var sent = false
}

/// `reset-password.mustache`: a new password for the token in the mailed link.
struct ResetPasswordPage: Sendable {
    var error: String?
    let token: String
}

/// `verify-email.mustache`: the button that confirms (a mail scanner following the link changes
/// nothing), then the outcome.
struct VerifyEmailPage: Sendable {
    var error: String?
    let token: String
    var verified = false
}

/// `login.mustache`.
struct LoginPage: Sendable {
    var error: String?
    /// Said after the person asked to delete their account (`?deleting=1`).
    var deleting = false
    /// What was typed, kept after an error.
    var login = ""
    /// Where to go once signed in.
    let next: String
    /// `next` percent-encoded, for the providers' links.
    let nextQuery: String
    /// The password was right and two-factor sign-in is on: the code form, for this challenge.
    var challenge: String?

    init(error: String? = nil, login: String = "", next: String, challenge: String? = nil) {
        self.error = error
        self.login = login
        self.next = next
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        nextQuery = next.addingPercentEncoding(withAllowedCharacters: allowed) ?? "%2F"
        self.challenge = challenge
    }
}

/// `signup.mustache`; after an error, what was typed.
struct SignupPage: Sendable {
    var error: String?
    var username = ""
    var email = ""
    var displayName = ""
    var invite = ""
    var reason = ""
    /// Who may sign up, and the rules they agree to.
    let closed: Bool
    let needsInvite: Bool
    let needsApproval: Bool
    let rules: [InstanceRule]
    let hasRules: Bool
    /// Set once a sign-up waits for approval: where the decision will be mailed.
    var pendingEmail: String?

    init(about: InstanceInfo) {
        closed = about.registrations == .closed
        needsInvite = about.registrations == .invite
        needsApproval = about.registrations == .approval
        rules = about.rules
        hasRules = !about.rules.isEmpty
    }
}

/// `error.mustache`.
struct ErrorPage: Sendable {
    let status: Int
    let message: String
}

/// `admin.mustache`: the moderation queue, and for admins the audit log.
struct AdminPage: Sendable {
    let reports: [ReportView]
    let next: String?
    /// Showing resolved reports rather than the open queue.
    let resolved: Bool
    /// Runs the instance: links to its dashboard and settings.
    let isAdmin: Bool
    /// Moderates the whole instance (an admin or a moderator): the audit log.
    let moderatesAll: Bool
    let audit: [AuditView]
}

/// One report in the queue, with its actions.
struct ReportView: Sendable {
    let id: String
    let targetType: String
    /// "post", "comment" or "user", in the reader's language.
    let targetLabel: String
    /// "Remove the post" or "Remove the comment" (a person is not removed).
    let removeLabel: String
    /// Where the reported content is, when it can be linked.
    let targetLink: String?
    let snapshot: String?
    let reason: String
    /// The rules it breaks, as they read when it was reported.
    let rules: [String]
    let hasRules: Bool
    let note: String?
    let reporter: String?
    let person: AuthorView?
    let spaces: [String]
    let createdAt: String
    let when: String
    let open: Bool
    let outcome: String?
    /// A person is not removed, only suspended.
    let removable: Bool
    let canSuspend: Bool
    /// Resolved by a suspension, for an admin: the person's username, to lift it.
    let liftable: String?
    /// The person's latest posts and comments (admins only).
    let recent: [RecentView]
    let hasRecent: Bool

    init(_ report: Report, link: String?, isAdmin: Bool, recent: [RecentView], t: Localizer) {
        id = report.id
        targetType = report.targetType.rawValue
        targetLabel = Self.label(of: report.targetType, t: t)
        removeLabel =
            switch report.targetType {
            case .post: t("Remove the post")
            case .comment: t("Remove the comment")
            case .user: ""
            }
        targetLink = link
        snapshot = report.snapshot.nonEmpty
        reason =
            switch report.reason {
            case .spam: t("spam")
            case .abuse: t("abuse")
            case .illegal: t("illegal")
            case .rules: t("breaks the rules")
            case .other: t("other")
            }
        rules = report.rules.map(\.text)
        hasRules = !rules.isEmpty
        note = report.note.nonEmpty
        reporter = report.reporter?.username
        person = report.targetUser.map { AuthorView($0, t: t) }
        spaces = report.spaces
        createdAt = report.createdAt.description
        when = t.dateTime(report.createdAt)
        open = report.state == .open
        outcome = report.action.map { action in
            let done =
                switch action {
                case .dismiss: t("dismiss")
                case .remove: t("remove")
                case .suspend: t("suspend")
                }
            let by = report.resolvedBy.map { t("{action} by @{username}", ["action": done, "username": $0.username]) }
            return (by ?? done) + (report.resolutionNote.map { ": \($0)" } ?? "")
        }
        removable = report.targetType != .user
        canSuspend = isAdmin && report.targetUser != nil
        liftable = isAdmin && report.action == .suspend ? report.targetUser?.username : nil
        self.recent = recent
        hasRecent = !recent.isEmpty
    }

    /// What was reported, as the queue names it.
    static func label(of type: ReportTargetType, t: Localizer) -> String {
        switch type {
        case .post: t("post")
        case .comment: t("comment")
        case .user: t("user")
        }
    }
}

/// A post or comment in a reported person's recent content.
struct RecentView: Sendable {
    let kind: String
    let link: String
    let text: String
    let when: String

    init(_ item: ModerationStore.RecentItem, t: Localizer) {
        kind = ReportView.label(of: item.kind, t: t)
        link =
            item.kind == .post
            ? PublicLinks.paths.postPage(String(item.post))
            : PublicLinks.paths.commentPage(String(item.id), postID: String(item.post))
        text = String(item.text.prefix(200))
        when = t.dateTime(item.createdAt)
    }
}

/// A line of the audit log.
struct AuditView: Sendable {
    let actor: String
    let action: String
    let target: String
    let space: String?
    let note: String?
    let when: String
    let createdAt: String

    /// `action` and an unnamed `target` are the log's own codes (`report.dismiss`, `post 12`).
    init(_ entry: AuditEntry, t: Localizer) {
        actor = entry.actor.map { "@\($0.username)" } ?? t("(deleted account)")
        action = entry.action
        target = entry.targetUser.map { "@\($0.username)" } ?? "\(entry.targetType) \(entry.targetId)"
        space = entry.space
        note = entry.note.nonEmpty
        when = t.dateTime(entry.createdAt)
        createdAt = entry.createdAt.description
    }
}

/// The pinned posts above a profile's or a space's posts; nil where there are none.
struct PinnedView: Sendable {
    let posts: [PostView]

    init?(_ posts: [Post], viewer: Int64?, t: Localizer) {
        guard !posts.isEmpty else { return nil }
        self.posts = posts.map { PostView($0, viewer: viewer, t: t) }
    }
}
