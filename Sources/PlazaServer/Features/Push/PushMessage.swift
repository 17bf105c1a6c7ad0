import Foundation
import PlazaAPI

/// What a push says, made from the notification as its recipient may see it now (rendered by
/// `NotificationStore`, so blocks, audiences and suspensions since apply), kept small: a title,
/// one line of text with a short quote, and where tapping it leads.
package struct PushMessage: Sendable, Equatable {
    var title: String
    package var body: String
    /// A path of the web app, e.g. `/p/123`.
    var path: String
    var notificationID: String
    var kind: NotificationKind
    /// The recipient's unread notifications (the app icon's badge).
    var badge: Int

    static let maxQuote = 120
}

extension PushMessage {
    /// The push of `notification` in its recipient's language (`t`): the same sentence as the
    /// web app's notifications, with a short quote of the post or comment.
    init(_ notification: PlazaAPI.Notification, instanceName: String, badge: Int, t: Localizer) {
        title = instanceName
        notificationID = notification.id
        kind = notification.kind
        self.badge = badge
        body = notification.sentence(t)
        let quote: String? = (notification.comment?.body ?? notification.post.flatMap { $0.title ?? $0.body })
            .map(Self.quote)
        if let quote, !quote.isEmpty, notification.kind != .follow, notification.kind != .followRequest {
            body += t(": “{quote}”", ["quote": quote])
        }
        switch notification.kind {
        case .follow: path = "/u/\(notification.actor.username)"
        case .followRequest: path = "/follow-requests"
        case .reportResolved: path = "/notifications"
        default:
            if let post = notification.post {
                path = "/p/\(post.id)" + (notification.comment.map { "#c-\($0.id)" } ?? "")
            } else {
                path = "/notifications"
            }
        }
    }

    /// The text on one line, cut at a word near `maxQuote` characters (and at most 4 bytes
    /// each: a character of many combining marks must not make the push too big to send).
    static func quote(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let cut = prefix(line, bytes: 4 * maxQuote, characters: maxQuote)
        guard cut.count < line.count else { return line }
        let word = cut.lastIndex(of: " ").map { cut[..<$0] } ?? Substring(cut)
        return word + "…"
    }

    /// The longest prefix of whole characters within `bytes` of UTF-8 and `characters`.
    static func prefix(_ text: String, bytes: Int, characters: Int = .max) -> String {
        var end = text.startIndex
        var used = 0
        var count = 0
        for index in text.indices {
            let size = text[index...].prefix(1).utf8.count
            guard used + size <= bytes, count < characters else { break }
            used += size
            count += 1
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// The Web Push payload, decrypted by the service worker (`sw.js`).
    var webPushPayload: [UInt8] {
        Array(
            (try? JSON.encoder.encode(
                WebPayload(
                    title: title, body: body, url: path, tag: "n\(notificationID)", notification: notificationID,
                    kind: kind.rawValue, badge: badge))) ?? Data())
    }

    private struct WebPayload: Encodable {
        var title: String
        var body: String
        var url: String
        var tag: String
        var notification: String
        var kind: String
        var badge: Int
    }

    /// The APNs payload: the alert, the badge, and Plaza's fields for the app.
    var apnsPayload: [UInt8] {
        Array(
            (try? JSON.encoder.encode(
                APNsPayload(
                    aps: .init(
                        alert: .init(title: title, body: body), badge: badge, sound: "default",
                        threadID: kind.rawValue),
                    plaza: .init(notification: notificationID, kind: kind.rawValue, path: path)))) ?? Data())
    }

    private struct APNsPayload: Encodable {
        struct APS: Encodable {
            struct Alert: Encodable {
                var title: String
                var body: String
            }
            var alert: Alert
            var badge: Int
            var sound: String
            var threadID: String
            enum CodingKeys: String, CodingKey {
                case alert, badge, sound
                case threadID = "thread-id"
            }
        }
        struct Plaza: Encodable {
            var notification: String
            var kind: String
            var path: String
        }
        var aps: APS
        var plaza: Plaza
    }
}
