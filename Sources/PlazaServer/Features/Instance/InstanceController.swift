import Hummingbird
import PlazaAPI

/// What the instance says of itself, and what its admins set: the settings, the sign-ups that
/// wait for approval and the invite links. Who may do what is decided by `InstanceStore`.
struct InstanceController: FeatureRoutes {
    let instance: InstanceStore

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("about") { _, _ in try await instance.info() }
        signedIn.patch("admin/instance", use: update)
        signedIn.get("admin/registrations", use: registrations)
        signedIn.put("admin/registrations/{username}") { _, context in
            try await instance.decide(context.parameters.string("username"), approve: true, by: context.user.userID)
            return Response(status: .noContent)
        }
        signedIn.delete("admin/registrations/{username}") { _, context in
            try await instance.decide(context.parameters.string("username"), approve: false, by: context.user.userID)
            return Response(status: .noContent)
        }
        signedIn.get("admin/invites") { request, context in
            try await instance.invites(page: request.pageRequest(), viewer: context.user.userID)
        }
        signedIn.post("admin/invites") { request, context in
            try await createInvite(request, context: context, scope: .everyone)
        }
        signedIn.get("admin/overview") { _, context in try await instance.overview(viewer: context.user.userID) }
        signedIn.get("admin/users") { request, context in
            try await instance.people(
                query: request.uri.queryParameters.get("q"), page: request.pageRequest(), viewer: context.user.userID)
        }
        signedIn.put("admin/users/{username}/role") { request, context in
            let body = try await request.decode(as: RoleRequest.self, context: context)
            try await instance.setRole(
                of: context.parameters.string("username"), to: body.role, by: context.user.userID)
            return Response(status: .noContent)
        }
        signedIn.delete("admin/users/{username}/two-factor") { _, context in
            try await instance.turnOffTwoFactor(of: context.parameters.string("username"), by: context.user.userID)
            return Response(status: .noContent)
        }
        signedIn.delete("admin/invites/{code}") { _, context in
            try await instance.revokeInvite(context.parameters.string("code"), by: context.user.userID)
            return Response(status: .noContent)
        }
        // A person's own invites: admins always, members when the admins allow it.
        signedIn.get("invites") { request, context in
            try await instance.invites(page: request.pageRequest(), viewer: context.user.userID, scope: .own)
        }
        signedIn.post("invites") { request, context in try await createInvite(request, context: context, scope: .own) }
        signedIn.delete("invites/{code}") { _, context in
            try await instance.revokeInvite(context.parameters.string("code"), by: context.user.userID, scope: .own)
            return Response(status: .noContent)
        }
        return routes
    }

    @Sendable func update(_ request: Request, context: SignedInContext) async throws -> InstanceInfo {
        try await instance.update(
            try await request.decode(as: InstancePatch.self, context: context), by: context.user.userID)
    }

    @Sendable func registrations(_ request: Request, context: SignedInContext) async throws
        -> Page<RegistrationRequest>
    {
        try await instance.pendingRegistrations(page: request.pageRequest(), viewer: context.user.userID)
    }

    func createInvite(_ request: Request, context: SignedInContext, scope: InstanceStore.InviteScope) async throws
        -> EditedResponse<InstanceInvite>
    {
        // The body is optional: none or `{}` makes an invite without limits.
        let buffer = try await PlazaRequestDecoder.body(of: request, context: context)
        let body =
            buffer.readableBytes > 0
            ? try PlazaRequestDecoder.decode(CreateInviteRequest.self, from: buffer) : CreateInviteRequest()
        return EditedResponse(
            status: .created, response: try await instance.createInvite(body, by: context.user.userID, scope: scope))
    }
}
