import OpenAPIKit

extension OpenAPIDocument {
    /// Notifications.
    static var notificationOperations: [(String, Operation)] {
        [
            (
                "\(v1)/me/notifications",
                Operation(
                    method: .get, summary: "My notifications, most recent activity first; unread=true for unread only",
                    auth: .required, query: Params.page + [Params.unread], response: pageOf("Notification"))
            ),
            (
                "\(v1)/me/notifications/read",
                Operation(
                    method: .post, summary: "Mark the given notifications read, or all of them without ids",
                    auth: .required, body: "MarkNotificationsReadRequest", bodyRequired: false, status: 204)
            ),
        ]
    }
}
