import Hummingbird
import PlazaAPI

/// The signed-in person's notifications.
struct NotificationsController: FeatureRoutes {
    let notifications: NotificationStore
    static let maxIDs = 100

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("me/notifications", use: list)
        signedIn.post("me/notifications/read", use: markRead)
        return routes
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<PlazaAPI.Notification> {
        let me = context.user
        return try await notifications.list(
            recipient: me.userID, unreadOnly: try request.boolParameter("unread"), page: try request.pageRequest())
    }

    /// `{"ids": [...]}` marks those; an empty body or `{}` marks all. Unknown ids, and other
    /// people's, are ignored: the result is the same as if they were already read.
    @Sendable func markRead(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let buffer = try await PlazaRequestDecoder.body(of: request, context: context)
        var ids: [Int64]?
        if buffer.readableBytes > 0 {
            if let texts = try PlazaRequestDecoder.decode(MarkNotificationsReadRequest.self, from: buffer).ids {
                guard texts.count <= Self.maxIDs else {
                    throw PlazaError.invalid("ids", "Mark at most \(Self.maxIDs) notifications at once.")
                }
                ids = try texts.map { text in
                    guard let id = parseID(text) else {
                        throw PlazaError.invalid("ids", "\(text) is not a notification id.")
                    }
                    return id
                }
            }
        }
        try await notifications.markRead(recipient: me.userID, ids: ids)
        return Response(status: .noContent)
    }
}
