import Hummingbird
import PlazaAPI

/// The devices that receive my pushes, and the key browsers subscribe with.
struct PushController: FeatureRoutes {
    let devices: PushDeviceStore
    let vapid: VAPID.Source
    /// Which Web Push endpoints are acceptable (`PLAZA_PUSH_ALLOW`).
    let policy: AddressPolicy
    let apnsConfigured: Bool

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("push/web-push-key", use: webPushKey)
        signedIn.get("me/push-devices", use: list)
        signedIn.post("me/push-devices", use: add)
        signedIn.delete("me/push-devices/{id}", use: remove)
        return routes
    }

    @Sendable func webPushKey(_ request: Request, context: PlazaContext) async throws -> WebPushKey {
        WebPushKey(publicKey: try await vapid.vapid().publicKey)
    }

    @Sendable func list(_ request: Request, context: SignedInContext) async throws -> Page<PushDevice> {
        let me = context.user
        return Page(items: try await devices.list(user: me.userID, session: me.sessionID), nextCursor: nil)
    }

    /// 201 for a device new to me, 200 for one I had registered already.
    @Sendable func add(_ request: Request, context: SignedInContext) async throws -> EditedResponse<PushDevice> {
        let me = context.user
        let body = try await request.decode(as: RegisterPushDeviceRequest.self, context: context)
        let registration = try PushDeviceRegistration(body, policy: policy, apnsConfigured: apnsConfigured)
        let (device, created) = try await devices.register(registration, user: me.userID, session: me.sessionID)
        return EditedResponse(status: created ? .created : .ok, response: device)
    }

    @Sendable func remove(_ request: Request, context: SignedInContext) async throws -> Response {
        try await devices.remove(id: context.parameters.id("id", "Push device"), user: context.user.userID)
        return Response(status: .noContent)
    }
}
