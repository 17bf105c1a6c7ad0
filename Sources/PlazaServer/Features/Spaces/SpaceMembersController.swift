import Hummingbird
import PlazaAPI

/// Members, roles, join requests, invites and bans of a space (its moderators' tools).
struct SpaceMembersController: FeatureRoutes {
    let spaces: SpaceStore
    let members: SpaceMembersStore
    let people: PeopleStore
    /// Invite links: at the public URL, or bare paths when none is configured.
    let links: PublicLinks

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("spaces/{slug}/members", use: list)
        signedIn.patch("spaces/{slug}/members/{username}", use: setRole)
        signedIn.delete("spaces/{slug}/members/{username}", use: remove)
        signedIn.put("spaces/{slug}/bans/{username}", use: ban)
        signedIn.delete("spaces/{slug}/bans/{username}", use: unban)
        signedIn.delete("spaces/{slug}/posts/{id}", use: removePost)
        signedIn.post("spaces/{slug}/requests", use: request)
        signedIn.get("spaces/{slug}/requests", use: requests)
        signedIn.put("spaces/{slug}/requests/{username}", use: approve)
        signedIn.delete("spaces/{slug}/requests/{username}", use: deny)
        signedIn.post("spaces/{slug}/invites", use: invite)
        signedIn.post("spaces/join/{code}", use: join)
        return routes
    }

    private func space(_ context: some RequestContext, viewer: Int64?) async throws -> SpaceStore.Key {
        try await spaces.key(slug: context.parameters.string("slug"), viewer: viewer)
    }

    /// The person named in the path; anyone the viewer could reach by name.
    private func person(_ context: SignedInContext) async throws -> Int64 {
        try await people.userID(username: context.parameters.string("username"), viewer: context.user.userID)
    }

    @Sendable func list(_ request: Request, context: PlazaContext) async throws -> Page<SpaceMember> {
        let space = try await space(context, viewer: context.viewerID)
        return try await members.members(of: space, viewer: context.viewerID, page: request.pageRequest())
    }

    @Sendable func setRole(_ request: Request, context: SignedInContext) async throws -> SpaceMember {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        let body = try await request.decode(as: UpdateMemberRequest.self, context: context)
        let member = try await person(context)
        try await members.setRole(body.role, of: member, in: space.id, by: me)
        let page = try await members.members(
            of: space, viewer: me, page: PageRequest(limit: 1, cursor: nil), only: member)
        guard let updated = page.items.first else { throw PlazaError.notFound("Member") }
        return updated
    }

    @Sendable func remove(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        try await members.remove(try await person(context), from: space.id, by: me, ban: false)
        return Response(status: .noContent)
    }

    @Sendable func ban(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        try await members.remove(try await person(context), from: space.id, by: me, ban: true)
        return Response(status: .noContent)
    }

    @Sendable func unban(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        try await members.unban(try await person(context), from: space.id, by: me)
        return Response(status: .noContent)
    }

    @Sendable func removePost(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        try await members.removePost(try context.parameters.id("id", "Post"), from: space.id, by: me)
        return Response(status: .noContent)
    }

    @Sendable func request(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        try await members.request(try await space(context, viewer: me), by: me)
        return Response(status: .accepted)
    }

    @Sendable func requests(_ request: Request, context: SignedInContext) async throws -> Page<JoinRequest> {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        return try await members.requests(of: space, viewer: me, page: request.pageRequest())
    }

    @Sendable func approve(_ request: Request, context: SignedInContext) async throws -> Response {
        try await answer(context, approve: true)
    }

    @Sendable func deny(_ request: Request, context: SignedInContext) async throws -> Response {
        try await answer(context, approve: false)
    }

    private func answer(_ context: SignedInContext, approve: Bool) async throws -> Response {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        try await members.answer(requestOf: try await person(context), to: space.id, approve: approve, by: me)
        return Response(status: .noContent)
    }

    @Sendable func invite(_ request: Request, context: SignedInContext) async throws -> EditedResponse<SpaceInvite> {
        let me = context.user.userID
        let space = try await space(context, viewer: me)
        let body = try await request.decode(as: CreateInviteRequest.self, context: context)
        if let uses = body.maxUses, !(1...100_000).contains(uses) {
            throw PlazaError.invalid("maxUses", "maxUses must be between 1 and 100000.")
        }
        if let expires = body.expiresAt, expires <= .now {
            throw PlazaError.invalid("expiresAt", "expiresAt must be in the future.")
        }
        let code = try await members.invite(to: space.id, by: me, maxUses: body.maxUses, expiresAt: body.expiresAt)
        return EditedResponse(
            status: .created,
            response: SpaceInvite(
                code: code, url: links.invite(code),
                expiresAt: body.expiresAt, maxUses: body.maxUses))
    }

    @Sendable func join(_ request: Request, context: SignedInContext) async throws -> Space {
        let me = context.user.userID
        let code = context.parameters.string("code")
        guard SpaceMembersStore.isInviteCodeShaped(code) else { throw PlazaError.notFound("Invite") }
        let space = try await members.join(code: code, user: me)
        return try await spaces.space(id: space, viewer: me)
    }
}
