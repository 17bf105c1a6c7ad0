import Hummingbird
import PlazaAPI

/// The admins' pages of the instance. Every change on them goes through the JSON API
/// (`InstanceController`), so it is decided and audited where the API's are.
/// - `/admin/instance`: the server's name, description, rules, contact, terms and who may sign
///   up; the sign-ups waiting for approval; invite links.
/// - `/admin/dashboard`: how the instance is doing (`GET /admin/overview`) and its people, with
///   what only admins change (role, suspension, two-factor).
struct WebInstancePages: FeatureRoutes {
    let web: WebController
    let instance: InstanceStore

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("admin/instance", use: settings)
        signedIn.get("admin/dashboard", use: dashboard)
        signedIn.get("invites", use: ownInvites)
        return routes
    }

    /// `/invites`: a person's own invite links, and a form to make one when they may.
    @Sendable func ownInvites(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user.userID
        let invites = try await instance.invites(page: .init(limit: 50), viewer: me, scope: .own)
        let isAdmin = try await instance.isAdmin(me)
        let body = OwnInvitesPage(
            inviteLinks: InviteLinks(
                invites.items, member: !isAdmin, mayInvite: try await instance.mayInvite(me), t: t))
        return try await web.page(
            "invites", title: t("Invite people"), nav: .settings, body, request: request, context: context.base)
    }

    @Sendable func settings(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user.userID
        // 403 for anyone but an admin, from the stores' own checks.
        let waiting = try await instance.pendingRegistrations(page: .init(limit: 50), viewer: me)
        let invites = try await instance.invites(page: .init(limit: 50), viewer: me)
        let body = InstancePage(
            about: try await instance.info(),
            waiting: waiting.items.map {
                .init(username: $0.username, email: $0.email, reason: $0.reason, when: t.dateTime($0.createdAt))
            },
            inviteLinks: InviteLinks(invites.items, member: false, mayInvite: true, t: t), t: t)
        return try await web.page(
            "admin-instance", title: t("This server"), nav: .admin, body, request: request, context: context.base)
    }
}

/// `admin-instance.mustache`.
struct InstancePage: Sendable {
    struct Mode: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }
    struct Waiting: Sendable {
        let username: String
        let email: String
        let reason: String
        let when: String
    }
    let name: String
    let description: String
    let contact: String
    let terms: String
    let rules: String
    let modes: [Mode]
    let membersMayInvite: Bool
    let waiting: [Waiting]
    let inviteLinks: InviteLinks

    init(about: InstanceInfo, waiting: [Waiting], inviteLinks: InviteLinks, t: Localizer) {
        name = about.name
        description = about.description
        contact = about.contact
        terms = about.terms
        rules = about.rules.map(\.text).joined(separator: "\n")
        modes = RegistrationMode.allCases.map { mode in
            let label =
                switch mode {
                case .open: t("Open: anyone can sign up")
                case .approval: t("Approval: an admin approves each sign-up")
                case .invite: t("Invite only: with an invite link")
                case .closed: t("Closed: nobody can sign up")
                }
            return Mode(value: mode.rawValue, label: label, selected: mode == about.registrations)
        }
        membersMayInvite = about.membersMayInvite
        self.waiting = waiting
        self.inviteLinks = inviteLinks
    }
}

/// `invite-links.mustache`: invite links and the form that makes one, on the admins' page
/// (every invite, no limits) and on a person's own (`/invites`, with the members' limits).
struct InviteLinks: Sendable {
    struct Item: Sendable {
        let code: String
        let url: String
        let uses: String
        let expires: String?
    }
    let api: String
    let member: Bool
    let mayInvite: Bool
    let maxUses: Int
    let maxDays: Int
    let defaultUses: String
    let defaultDays: String
    let items: [Item]

    init(_ invites: [InstanceInvite], member: Bool, mayInvite: Bool, t: Localizer) {
        api = member ? "invites" : "admin/invites"
        self.member = member
        self.mayInvite = mayInvite
        maxUses = member ? InstanceStore.maxMemberInviteUses : InstanceStore.maxInviteUses
        maxDays = member ? InstanceStore.maxMemberInviteDays : 365
        defaultUses = member ? "10" : ""
        defaultDays = member ? "7" : ""
        items = invites.map { invite in
            Item(
                code: invite.code, url: invite.url,
                uses: invite.maxUses.map { t("{used} of {max} used", ["used": "\(invite.uses)", "max": "\($0)"]) }
                    ?? t("{used} used", ["used": "\(invite.uses)"]),
                expires: invite.expiresAt.map { t.dateTime($0) })
        }
    }
}

/// `invites.mustache`.
struct OwnInvitesPage: Sendable {
    let inviteLinks: InviteLinks
}

extension WebInstancePages {
    @Sendable func dashboard(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user.userID
        let overview = try await instance.overview(viewer: me)
        let query = String((request.uri.queryParameters.get("q") ?? "").prefix(30))
        let people = try await instance.people(query: query, page: try request.pageRequest(), viewer: me)
        let body = DashboardPage(
            overview: overview, query: query,
            people: people.items.map { DashboardPage.Person($0, isMe: $0.user.id == String(me), t: t) },
            next: WebPages.next(request, cursor: people.nextCursor), t: t)
        return try await web.page(
            "admin-dashboard", title: t("Dashboard"), nav: .admin, body, request: request, context: context.base)
    }
}

/// `admin-dashboard.mustache`.
struct DashboardPage: Sendable {
    struct Figure: Sendable {
        let label: String
        let value: String
        let link: String?
    }
    struct Person: Sendable {
        let username: String
        let displayName: String
        let email: String
        let state: String?
        let storage: String
        let isAdmin: Bool
        let isModerator: Bool
        let suspended: Bool
        let twoFactor: Bool
        let isMe: Bool

        init(_ person: AdminUser, isMe: Bool, t: Localizer) {
            username = person.user.username
            displayName = person.user.displayName
            email = person.email
            isAdmin = person.role == InstanceRole.admin.rawValue
            isModerator = person.role == InstanceRole.moderator.rawValue
            suspended = person.suspended
            twoFactor = person.twoFactor
            self.isMe = isMe
            state =
                [
                    isAdmin ? t("admin") : nil, isModerator ? t("moderator") : nil,
                    person.pending ? t("waiting for approval") : nil,
                    person.suspended ? t("suspended") : nil, person.twoFactor ? t("two-factor") : nil,
                ].compactMap { $0 }.joined(separator: " · ").nonEmpty
            storage = DashboardPage.bytes(person.storageBytes)
        }
    }
    let figures: [Figure]
    let top: [Figure]
    let query: String
    let people: [Person]
    let next: String?

    static func bytes(_ value: Int64) -> String {
        value.formatted(.byteCount(style: .file, spellsOutZero: false))
    }

    init(overview: AdminOverview, query: String, people: [Person], next: String?, t: Localizer) {
        let bytes = Self.bytes
        func queue(_ queue: AdminOverview.Queue) -> String {
            t("{pending} waiting, {failed} failed", ["pending": "\(queue.pending)", "failed": "\(queue.failed)"])
        }
        let counts = overview.people
        figures = [
            Figure(label: t("Version"), value: overview.version, link: nil),
            Figure(label: t("Running since"), value: t.dateTime(overview.startedAt), link: nil),
            Figure(
                label: t("Database"),
                value: "\(overview.database == "sqlite" ? "SQLite" : "PostgreSQL"), \(bytes(overview.databaseBytes))",
                link: nil),
            Figure(
                label: t("People"),
                value: t(
                    "{total}: {admins} admins, {pending} waiting, {suspended} suspended",
                    [
                        "total": "\(counts.total)", "admins": "\(counts.admins)", "pending": "\(counts.pending)",
                        "suspended": "\(counts.suspended)",
                    ]), link: counts.pending > 0 ? "/admin/instance#registrations" : nil),
            Figure(label: t("Media stored"), value: bytes(overview.storageBytes), link: nil),
            Figure(label: t("Mail"), value: queue(overview.mail), link: nil),
            Figure(label: t("Push notifications"), value: queue(overview.push), link: nil),
            Figure(label: t("Videos"), value: queue(overview.videos), link: nil),
            Figure(label: t("Open reports"), value: "\(overview.openReports)", link: "/admin"),
        ]
        top = overview.topStorage.map {
            Figure(label: "@\($0.user.username)", value: bytes($0.bytes), link: "/u/\($0.user.username)")
        }
        self.query = query
        self.people = people
        self.next = next
    }
}
