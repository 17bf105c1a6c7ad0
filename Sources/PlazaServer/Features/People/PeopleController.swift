import Hummingbird
import PlazaAPI

/// Profiles, follows and follow requests, friends, blocks and mutes.
struct PeopleController: FeatureRoutes {
    let people: PeopleStore
    let actions: PeopleActions
    var suggestions: SuggestionStore { SuggestionStore(people: people) }

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("users/{username}", use: profile)
        routes.get("users/{username}/followers", use: followers)
        routes.get("users/{username}/following", use: following)
        routes.get("users/{username}/activity", use: activity)
        routes.get("users/{username}/friends", use: friends)
        signedIn.put("users/{username}/follow", use: follow)
        signedIn.delete("users/{username}/follow", use: unfollow)
        signedIn.put("users/{username}/block", use: block)
        signedIn.delete("users/{username}/block", use: unblock)
        signedIn.put("users/{username}/mute", use: mute)
        signedIn.delete("users/{username}/mute", use: unmute)
        signedIn.get("me/follow-requests", use: followRequests)
        signedIn.put("me/follow-requests/{username}", use: approveRequest)
        signedIn.delete("me/follow-requests/{username}", use: denyRequest)
        signedIn.get("me/suggestions", use: suggest)
        return routes
    }

    /// People and spaces to follow, for a new person's empty home.
    @Sendable func suggest(_ request: Request, context: SignedInContext) async throws -> Suggestions {
        try await suggestions.suggestions(for: context.user.userID)
    }

    /// The user in the path; 404 when a block hides them from the viewer (`hiding`).
    private func target(
        _ context: some RequestContext, viewer: Int64?, hiding: Visibility.ProfileHiding = .eitherWay
    ) async throws -> Int64 {
        try await people.userID(username: context.parameters.string("username"), viewer: viewer, hiding: hiding)
    }

    @Sendable func profile(_ request: Request, context: PlazaContext) async throws -> User {
        try await people.profile(userID: target(context, viewer: context.viewerID), viewer: context.viewerID)
    }

    /// The signed-in person's change to the person in the path (`PeopleActions.relate`).
    private func relate(_ change: PeopleActions.Change, _ context: SignedInContext) async throws -> User {
        try await actions.relate(context.user.userID, change, username: context.parameters.string("username"))
    }

    @Sendable func follow(_ request: Request, context: SignedInContext) async throws -> User {
        try await relate(.follow, context)
    }

    @Sendable func unfollow(_ request: Request, context: SignedInContext) async throws -> User {
        try await relate(.unfollow, context)
    }

    @Sendable func block(_ request: Request, context: SignedInContext) async throws -> User {
        try await relate(.block, context)
    }

    @Sendable func unblock(_ request: Request, context: SignedInContext) async throws -> User {
        try await relate(.unblock, context)
    }

    @Sendable func mute(_ request: Request, context: SignedInContext) async throws -> Response {
        _ = try await relate(.mute, context)
        return Response(status: .noContent)
    }

    @Sendable func unmute(_ request: Request, context: SignedInContext) async throws -> Response {
        _ = try await relate(.unmute, context)
        return Response(status: .noContent)
    }

    /// The people asking to follow me, newest first.
    @Sendable func followRequests(_ request: Request, context: SignedInContext) async throws -> Page<JoinRequest> {
        try await people.followRequests(to: context.user.userID, page: request.pageRequest())
    }

    /// Approves the request of the person in the path: 404 when they did not ask.
    @Sendable func approveRequest(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        try await actions.answerRequest(from: target(context, viewer: me), to: me, approve: true)
        return Response(status: .noContent)
    }

    @Sendable func denyRequest(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user.userID
        try await actions.answerRequest(from: target(context, viewer: me), to: me, approve: false)
        return Response(status: .noContent)
    }

    @Sendable func friends(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        try await people.follows(
            .friends, of: target(context, viewer: context.viewerID), page: request.pageRequest(),
            viewer: context.viewerID)
    }

    @Sendable func followers(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        try await people.follows(
            .followers, of: target(context, viewer: context.viewerID), page: request.pageRequest(),
            viewer: context.viewerID)
    }

    @Sendable func following(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        try await people.follows(
            .following, of: target(context, viewer: context.viewerID), page: request.pageRequest(),
            viewer: context.viewerID)
    }

    /// The activity heatmap: `?days=` from 1 to 366, 365 by default; `?tz=` an IANA time zone
    /// to count days in instead of the owner's.
    @Sendable func activity(_ request: Request, context: PlazaContext) async throws -> ActivityHeatmap {
        var days = 365
        if let text = request.uri.queryParameters.get("days") {
            guard let value = Int(text), (1...366).contains(value) else {
                throw PlazaError.invalid("days", "days must be an integer from 1 to 366.")
            }
            days = value
        }
        let zone: String? = request.uri.queryParameters.get("tz").map { String($0) }
        if let zone, Validate.timeZone(zone) == nil {
            throw PlazaError.invalid("tz", "tz must be an IANA time zone name, such as America/Los_Angeles.")
        }
        return try await people.activity(
            of: target(context, viewer: context.viewerID), days: days, viewer: context.viewerID, timeZone: zone)
    }
}
