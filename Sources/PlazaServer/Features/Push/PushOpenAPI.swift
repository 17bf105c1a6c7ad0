import OpenAPIKit

extension OpenAPIDocument {
    /// Push devices and the Web Push key.
    static var pushOperations: [(String, Operation)] {
        [
            (
                "\(v1)/push/web-push-key",
                Operation(
                    method: .get, summary: "The server's VAPID public key, for a browser's push subscription",
                    auth: .none, response: ref("WebPushKey"))
            ),
            (
                "\(v1)/me/push-devices",
                Operation(
                    method: .get, summary: "The devices that receive my pushes", auth: .required,
                    response: pageOf("PushDevice"))
            ),
            (
                "\(v1)/me/push-devices",
                Operation(
                    method: .post,
                    summary: """
                        Register an APNs device token or a Web Push subscription for pushes: 201, or 200 when \
                        it is mine already; a device someone else registered becomes mine. It goes when this \
                        session signs out. 422 `push_unavailable` for APNs on a server without APNs settings
                        """,
                    auth: .required, body: "RegisterPushDeviceRequest", status: 201, alsoStatus: [200],
                    response: ref("PushDevice"))
            ),
            (
                "\(v1)/me/push-devices/{id}",
                Operation(method: .delete, summary: "Stop pushes to one of my devices", auth: .required, status: 204)
            ),
        ]
    }
}
