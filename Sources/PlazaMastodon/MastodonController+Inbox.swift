import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

/// Notification counts and policy, suggestions, and the instance's smaller endpoints.
extension MastodonController {
    func registerInbox(v1: RouterGroup<PlazaContext>, v2: RouterGroup<PlazaContext>) {
        v1.get("notifications/unread_count", use: unreadCount)
        v2.get("notifications/unread_count", use: unreadCount)
        v2.get("notifications/policy") { _, context in try await notificationPolicy(v2: true, nil, context) }
        v2.patch("notifications/policy") { request, context in try await notificationPolicy(v2: true, request, context)
        }
        v1.get("notifications/policy") { _, context in try await notificationPolicy(v2: false, nil, context) }
        v1.patch("notifications/policy") { request, context in try await notificationPolicy(v2: false, request, context)
        }
        v1.get("notifications/requests") { _, context in
            _ = try context.mastodonUser("read:notifications")
            return try MastodonJSON.response([String]())
        }
        v2.get("notifications/{group_key}", use: notificationGroup)
        v1.get("suggestions") { request, context in try await suggestions(v2: false, request, context) }
        v2.get("suggestions") { request, context in try await suggestions(v2: true, request, context) }
        v1.get("instance/peers") { _, _ in try MastodonJSON.response([String]()) }
        v1.get("instance/activity") { _, _ in try MastodonJSON.response([String]()) }
        v1.get("instance/domain_blocks") { _, _ in try MastodonJSON.response([String]()) }
        v1.get("instance/translation_languages") { _, _ in try MastodonJSON.response([String: [String]]()) }
        v1.get("instance/extended_description", use: extendedDescription)
        v1.get("instance/languages") { _, _ in
            try MastodonJSON.response(MastodonLanguages.all.map { ["code": $0.code, "name": $0.name] })
        }
    }

    /// How many notifications are unread: Plaza's own count (a group of likes is one), capped at
    /// `limit` (100 unless asked, at most 1000) as Mastodon caps it.
    @Sendable func unreadCount(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:notifications")
        let params = try await MastodonParams.read(request, context: context)
        let limit = try params.limit(default: 100, max: 1000)
        let count = try await notifications.unreadCount(recipient: me.userID)
        return try MastodonJSON.response(["count": min(max(count, 0), limit)])
    }

    /// Plaza filters no one's notifications: every category is accepted, nothing is held back.
    /// A change that asks for the same is answered; any other is refused.
    func notificationPolicy(v2: Bool, _ request: Request?, _ context: PlazaContext) async throws -> Response {
        _ = try context.mastodonUser(request == nil ? "read:notifications" : "write:notifications")
        let categories = [
            "for_not_following", "for_not_followers", "for_new_accounts", "for_private_mentions",
            "for_limited_accounts",
        ]
        if let request {
            let params = try await MastodonParams.read(request, context: context)
            for name in categories {
                let key = v2 ? name : name.replacingOccurrences(of: "for_", with: "filter_")
                guard let value = params.string(key) else { continue }
                guard v2 ? value == "accept" : params.bool(key) == false else {
                    throw MastodonError.validation("Plaza does not filter notifications")
                }
            }
        }
        var policy: [String: JSONValue] = [
            "summary": .object(["pending_requests_count": .number(0), "pending_notifications_count": .number(0)])
        ]
        for name in categories where v2 || name != "for_limited_accounts" {
            let key = v2 ? name : name.replacingOccurrences(of: "for_", with: "filter_")
            policy[key] = v2 ? .string("accept") : .bool(false)
        }
        return try MastodonJSON.response(policy)
    }

    /// Plaza's own people to follow (`GET /me/suggestions`'s people). v2 says why, in Mastodon's
    /// words: followed by people I follow is `friends_of_friends`; posting lately, in my spaces or
    /// in public, `most_interactions`. Plaza's suggestions cannot be dismissed.
    func suggestions(v2: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read")
        let params = try await MastodonParams.read(request, context: context)
        let limit = try params.limit(default: 40, max: 80)
        let found = try await SuggestionStore(people: people).people(for: me.userID).prefix(limit)
        guard v2 else { return try MastodonJSON.response(found.map { mapper.account($0.user) }) }
        struct Suggestion: Encodable {
            var source: String
            var sources: [String]
            var account: Mastodon.Account
        }
        return try MastodonJSON.response(
            found.map { person in
                let fof = person.reason == .followedByMyFollows
                return Suggestion(
                    source: fof ? "past_interactions" : "global",
                    sources: [fof ? "friends_of_friends" : "most_interactions"], account: mapper.account(person.user))
            })
    }

    /// The instance's description as its admins wrote it, each paragraph escaped. Plaza keeps
    /// no date of its change: `updated_at` is the time of asking.
    @Sendable func extendedDescription(_ request: Request, context: PlazaContext) async throws -> Response {
        let about = try await instance.info()
        let text = about.description.isEmpty ? "A Plaza community." : about.description
        let paragraphs = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            .map { "<p>" + HTMLText.escape($0).replacingOccurrences(of: "\n", with: "<br>") + "</p>" }
        return try MastodonJSON.response(
            ["updated_at": Timestamp.now.description, "content": paragraphs.joined()])
    }
}
