import Hummingbird
import PlazaAPI

/// A space's moderators' page (join requests, invite links, members and their roles) and the
/// page an invite link opens.
extension WebPages {
    @Sendable func manageSpace(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let me = context.user.userID
        let key = try await stores.spaces.key(slug: context.parameters.string("slug"), viewer: me)
        guard key.isModerator else {
            throw PlazaError(.forbidden, "not_moderator", "Only the space's moderators manage it.")
        }
        let space = try await stores.spaces.space(id: key.id, viewer: me)
        let requests = try await stores.members.requests(of: key, viewer: me, page: PageRequest(limit: 100))
        let members = try await stores.members.members(of: key, viewer: me, page: request.pageRequest())
        let body = SpaceManagePage(
            space: SpaceView(space, t: t),
            requests: requests.items.map { RequestView($0, slug: space.slug, t: t) },
            members: members.items.map { MemberView($0, slug: space.slug, managedBy: key.role, t: t) },
            moreMembers: Self.next(request, cursor: members.nextCursor))
        return try await web.page(
            "space-manage", title: t("Manage {name}", ["name": space.name]), nav: .spaces, body, request: request,
            context: context.base)
    }

    @Sendable func invitation(_ request: Request, context: SignedInContext) async throws -> Response {
        let code = context.parameters.string("code")
        // The code goes into the page's button: only one of our shape does.
        guard SpaceMembersStore.isInviteCodeShaped(code) else { throw PlazaError.notFound("Invite") }
        let t = web.localizer(context.base)
        return try await web.page(
            "join", title: t("Join a space"), nav: .spaces, JoinPage(code: code), request: request,
            context: context.base)
    }
}

/// `space-manage.mustache`.
struct SpaceManagePage: Sendable {
    let space: SpaceView
    let requests: [RequestView]
    let members: [MemberView]
    let moreMembers: String?
}

/// `join.mustache`: the invite code, to send with the button.
struct JoinPage: Sendable {
    let code: String
}

/// Someone asking to join, with the space's slug for the buttons' paths.
struct RequestView: Sendable {
    let slug: String
    let username: String
    let displayName: String
    let requestedAt: String
    let when: String

    init(_ request: JoinRequest, slug: String, t: Localizer) {
        self.slug = slug
        username = request.user.username
        displayName = request.user.displayName
        requestedAt = request.requestedAt.description
        when = t.dateTime(request.requestedAt)
    }
}

/// A member and what the viewing moderator may do to them: the owner promotes, demotes and
/// removes anyone but themselves; a moderator removes members.
struct MemberView: Sendable {
    let slug: String
    let username: String
    let displayName: String
    let role: String
    let canPromote: Bool
    let canDemote: Bool
    let canRemove: Bool

    init(_ member: SpaceMember, slug: String, managedBy viewer: SpaceRole?, t: Localizer) {
        self.slug = slug
        username = member.user.username
        displayName = member.user.displayName
        role =
            switch member.role {
            case .owner: t("owner")
            case .moderator: t("moderator")
            case .member: t("member")
            }
        let owner = viewer == .owner
        canPromote = owner && member.role == .member
        canDemote = owner && member.role == .moderator
        canRemove = member.role == .member || (owner && member.role == .moderator)
    }
}
