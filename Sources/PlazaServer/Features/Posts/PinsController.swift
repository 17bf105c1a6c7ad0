import Hummingbird
import PlazaAPI

/// Pins: to my profile, or with `?space=slug` (a moderator) to a space's top; the pinned lists
/// of a profile and of a space. Decisions are `PinActions`'.
struct PinsController: FeatureRoutes {
    let actions: PinActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("users/{username}/pinned") { request, context in
            Page(
                items: try await actions.profilePins(
                    username: context.parameters.string("username"), viewer: context.viewerID),
                nextCursor: nil)
        }
        routes.get("spaces/{slug}/pinned") { request, context in
            Page(
                items: try await actions.spacePins(
                    slug: context.parameters.string("slug"), viewer: context.viewerID),
                nextCursor: nil)
        }
        signedIn.put("posts/{id}/pin") { request, context in try await pin(request, context, true) }
        signedIn.delete("posts/{id}/pin") { request, context in try await pin(request, context, false) }
        return routes
    }

    private func pin(_ request: Request, _ context: SignedInContext, _ pinned: Bool) async throws -> Post {
        try await actions.pin(
            try context.parameters.id("id", "Post"), by: context.user.userID, inSpace: request.query("space"), pinned)
    }
}
