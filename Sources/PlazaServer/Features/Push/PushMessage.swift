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
    init(_ notification: PlazaAPI.Notification, instanceName: String, badge: Int) {
        title = instanceName
        notificationID = notification.id
        kind = notification.kind
        self.badge = badge
        let who = Self.actors(notification)
        let quote: String? = (notification.comment?.body ?? notification.post.flatMap { $0.title ?? $0.body })
            .map(Self.quote)
        switch notification.kind {
        case .like: body = "\(who) liked your post"
        case .comment: body = "\(who) commented on your post"
        case .reply: body = "\(who) replied in a thread you are in"
        case .follow: body = "\(who) followed you"
        case .mention: body = "\(who) mentioned you"
        case .followRequest: body = "\(who) asked to follow you"
        case .reportResolved: body = "A moderator resolved your report"
        case .recommendation: body = "\(who) recommended a post to you"
        }
        if let quote, !quote.isEmpty, notification.kind != .follow, notification.kind != .followRequest {
            body += ": “\(quote)”"
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

    /// "Ana", "Ana and Ben", "Ana and 49 others".
    static func actors(_ notification: PlazaAPI.Notification) -> String {
        let first = name(notification.actor.displayName, notification.actor.username)
        switch notification.actorCount {
        case ...1: return first
        case 2:
            let other = notification.actors.first { $0.username != notification.actor.username }
            return other.map { "\(first) and \(name($0.displayName, $0.username))" } ?? "\(first) and 1 other"
        default: return "\(first) and \(notification.actorCount - 1) others"
        }
    }

    private static func name(_ displayName: String, _ username: String) -> String {
        let trimmed = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? username : prefix(trimmed, bytes: 120)
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
