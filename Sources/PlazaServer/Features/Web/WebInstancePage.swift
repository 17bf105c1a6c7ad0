import Hummingbird
import PlazaAPI

/// `/admin/instance`, for admins: the server's name, description, rules, contact, terms and who
/// may sign up; the sign-ups waiting for approval; invite links. Every change goes through the
/// JSON API (`InstanceController`), so it is decided and audited where the API's are.
struct WebInstancePage: FeatureRoutes {
    let web: WebController
    let instance: InstanceStore

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("admin/instance", use: page)
        return routes
    }

    @Sendable func page(_ request: Request, context: SignedInContext) async throws -> Response {
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
            invites: invites.items.map { invite in
                InstancePage.InviteView(
                    code: invite.code, url: invite.url,
                    uses: invite.maxUses.map { t("{used} of {max} used", ["used": "\(invite.uses)", "max": "\($0)"]) }
                        ?? t("{used} used", ["used": "\(invite.uses)"]),
                    expires: invite.expiresAt.map { t.dateTime($0) })
            }, t: t)
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
    struct InviteView: Sendable {
        let code: String
        let url: String
        let uses: String
        let expires: String?
    }
    let name: String
    let description: String
    let contact: String
    let terms: String
    let rules: String
    let modes: [Mode]
    let waiting: [Waiting]
    let invites: [InviteView]

    init(about: InstanceInfo, waiting: [Waiting], invites: [InviteView], t: Localizer) {
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
        self.waiting = waiting
        self.invites = invites
    }
}
