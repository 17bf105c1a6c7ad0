import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

extension MastodonController {
    // MARK: media

    @Sendable func uploadMedia(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:media")
        let limits = config.uploads
        let upload = try await actions.media.upload(by: me.userID, logger: context.logger) { path in
            try await MultipartUpload.receive(request, into: path, limits: limits)
        }.media
        // Mastodon answers 202 (and no `url`) while a video is processed.
        return try MastodonJSON.response(mapper.media(upload), status: upload.state == .processing ? .accepted : .ok)
    }

    /// One of my uploads: 206 while it is processed, as Mastodon answers. `PUT` sets its
    /// `description` (the alt text, on the post that shows it too); a focal point is not kept.
    @Sendable func showMedia(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser(request.method == .get ? "read:statuses" : "write:media")
        let params = request.method == .put ? try await MastodonParams.read(request, context: context) : nil
        let item: Media
        do {
            if let params, let description = params.string("description") {
                item = try await actions.media.describe(try id(context), by: me.userID, as: description).media
            } else {
                item = try await media.upload(id: try id(context), owner: me.userID)
            }
        } catch let error as PlazaError where error.status == .notFound {
            throw MastodonError.notFound
        }
        return try MastodonJSON.response(mapper.media(item), status: item.state == .processing ? .partialContent : .ok)
    }

    // MARK: notifications

    /// Plaza's kinds as Mastodon's types: a like is a favourite, a comment or reply a mention
    /// (the comment is the status), a recommendation a `status` notification. A resolved report
    /// has no Mastodon counterpart and is left out.
    static func type(of kind: NotificationKind) -> String? {
        switch kind {
        case .like: "favourite"
        case .boost: "reblog"
        case .edited: "update"
        case .poll: "poll"
        case .comment, .reply, .mention: "mention"
        case .follow: "follow"
        case .followRequest: "follow_request"
        case .recommendation: "status"
        case .reportResolved: nil
        }
    }

    func notificationEntity(_ notification: PlazaAPI.Notification) -> Mastodon.Notification? {
        Self.notificationEntity(notification, mapper: mapper)
    }

    static func notificationEntity(_ notification: PlazaAPI.Notification, mapper: MastodonMapper)
        -> Mastodon.Notification?
    {
        guard let type = Self.type(of: notification.kind) else { return nil }
        var status: Mastodon.Status?
        if let post = notification.post {
            status = notification.comment.map { mapper.status($0, on: post) } ?? mapper.status(post)
        }
        return Mastodon.Notification(
            id: notification.id, type: type, groupKey: "ungrouped-\(notification.id)",
            createdAt: notification.createdAt.description, account: mapper.account(notification.actor),
            status: status)
    }

    /// A page of the person's notifications as Mastodon's paging asks: `max_id` (older than),
    /// `since_id` (the newest above), `min_id` (the page just above), `limit`, and `account_id`
    /// (only those that account took part in); whether an older page follows.
    func notificationPage(_ me: Identity, _ params: MastodonParams) async throws -> (
        items: [PlazaAPI.Notification], hasMore: Bool
    ) {
        let paging = try MastodonPaging(params, defaultLimit: 40, maxLimit: 80)
        var page = PageRequest(limit: paging.limit)
        if let maxID = paging.maxID {
            page.cursor = Cursor(
                time: 0, id: try await notifications.sortID(of: maxID, recipient: me.userID) ?? maxID)
        }
        var filter = NotificationStore.Filter(actor: try params.id("account_id"))
        let minID = try params.id("min_id")
        let sinceID = try params.id("since_id")
        if let newer = minID ?? sinceID {
            filter.newerThan = try await notifications.sortID(of: newer, recipient: me.userID) ?? newer
            filter.closestFirst = minID != nil
        }
        let list = try await notifications.list(recipient: me.userID, unreadOnly: false, page: page, filter: filter)
        // Read upwards from `min_id`, older ones always follow (the one named, at least).
        return (list.items, filter.closestFirst ? !list.items.isEmpty : list.nextCursor != nil)
    }

    /// Mastodon's `types[]` and `exclude_types[]`.
    static func typeFilter(_ params: MastodonParams) -> @Sendable (String) -> Bool {
        let types = Set(params.strings("types"))
        let excluded = Set(params.strings("exclude_types"))
        return { (types.isEmpty || types.contains($0)) && !excluded.contains($0) }
    }

    @Sendable func listNotifications(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:notifications")
        let params = try await MastodonParams.read(request, context: context)
        let (items, hasMore) = try await notificationPage(me, params)
        let wanted = Self.typeFilter(params)
        let entities = items.compactMap(notificationEntity).filter { wanted($0.type) }
        return try MastodonJSON.response(
            try await withMentions(notifications: entities, viewer: me.userID),
            headers: MastodonPaging.link(request, baseURL: config.baseURL, ids: items.map(\.id), hasMore: hasMore))
    }

    /// Mastodon's grouped notifications (`/api/v2/notifications`): Plaza's own groups (likes of a
    /// post, follows, while unread) with up to three sample accounts each; accounts and statuses
    /// once, beside the groups. A group's key is `plaza-<id>` of the notification it is, and
    /// stays (`GET /api/v2/notifications/{group_key}`).
    @Sendable func groupedNotifications(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:notifications")
        let params = try await MastodonParams.read(request, context: context)
        let (items, hasMore) = try await notificationPage(me, params)
        var results = groups(items, wanted: Self.typeFilter(params))
        results.statuses = try await withMentions(results.statuses, viewer: me.userID)
        return try MastodonJSON.response(
            results,
            headers: MastodonPaging.link(request, baseURL: config.baseURL, ids: items.map(\.id), hasMore: hasMore))
    }

    /// One group, by its key.
    @Sendable func notificationGroup(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:notifications")
        let key = try context.parameters.require("group_key")
        guard let id = Self.groupID(key),
            let found = try await notifications.notifications(ids: [id], recipient: me.userID)[id]
        else { throw MastodonError.notFound }
        var results = groups([found], wanted: { _ in true })
        guard !results.notificationGroups.isEmpty else { throw MastodonError.notFound }
        results.statuses = try await withMentions(results.statuses, viewer: me.userID)
        return try MastodonJSON.response(results)
    }

    /// The notification a group key names: `plaza-<id>` (v2's) or `ungrouped-<id>` (v1's).
    static func groupID(_ key: String) -> Int64? {
        for prefix in ["plaza-", "ungrouped-"] where key.hasPrefix(prefix) {
            let digits = key.dropFirst(prefix.count)
            guard digits.count <= 19, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(digits), id > 0
            else { return nil }
            return id
        }
        return nil
    }

    struct GroupedNotifications: Encodable {
        struct Group: Encodable {
            var groupKey: String
            var notificationsCount: Int
            var type: String
            var mostRecentNotificationId: Int64
            var pageMinId: String
            var pageMaxId: String
            var latestPageNotificationAt: String
            var sampleAccountIds: [String]
            @Nullable var statusId: String?
        }
        var accounts: [Mastodon.Account]
        var statuses: [Mastodon.Status]
        var notificationGroups: [Group]
    }

    /// Notifications as Mastodon's groups, with their accounts and statuses once each.
    func groups(_ items: [PlazaAPI.Notification], wanted: (String) -> Bool) -> GroupedNotifications {
        var results = GroupedNotifications(accounts: [], statuses: [], notificationGroups: [])
        var seenAccounts = Set<String>()
        var seenStatuses = Set<String>()
        for notification in items {
            guard let entity = notificationEntity(notification), wanted(entity.type) else { continue }
            let samples = notification.actors.isEmpty ? [notification.actor.summary] : notification.actors
            for (index, actor) in samples.enumerated() where seenAccounts.insert(actor.id).inserted {
                results.accounts.append(index == 0 ? mapper.account(notification.actor) : mapper.account(actor))
            }
            if let status = entity.status, seenStatuses.insert(status.id).inserted { results.statuses.append(status) }
            results.notificationGroups.append(
                .init(
                    groupKey: "plaza-\(notification.id)", notificationsCount: notification.actorCount,
                    type: entity.type, mostRecentNotificationId: Int64(notification.id) ?? 0,
                    pageMinId: notification.id, pageMaxId: notification.id,
                    latestPageNotificationAt: notification.createdAt.description,
                    sampleAccountIds: samples.map(\.id), statusId: entity.status?.id))
        }
        return results
    }

    @Sendable func notification(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:notifications")
        let id = try id(context)
        guard let found = try await notifications.notifications(ids: [id], recipient: me.userID)[id],
            let entity = notificationEntity(found)
        else { throw MastodonError.notFound }
        return try MastodonJSON.response(try await withMentions(notifications: [entity], viewer: me.userID)[0])
    }

    @Sendable func clearNotifications(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:notifications")
        try await notifications.dismiss(recipient: me.userID, ids: nil)
        return try MastodonJSON.response([String: String]())
    }

    @Sendable func dismissNotification(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:notifications")
        // Someone else's notification, like a missing one, is "Record not found".
        guard try await notifications.dismiss(recipient: me.userID, ids: [try id(context)]) > 0 else {
            throw MastodonError.notFound
        }
        return try MastodonJSON.response([String: String]())
    }

    // MARK: search

    @Sendable func searchAll(_ request: Request, context: PlazaContext) async throws -> Response {
        let viewer = try context.mastodonViewer("read:search")
        let params = try await MastodonParams.read(request, context: context)
        let q = (params.string("q") ?? "").trimmingCharacters(in: .whitespaces)
        let limit = try params.limit(default: 20, max: 40)
        let offset = min(max(Int(params.string("offset") ?? "0") ?? 0, 0), 200)
        let type = params.string("type")
        var results = Mastodon.SearchResults(accounts: [], statuses: [], hashtags: [])
        // A link to a post here is that post.
        if let id = mapper.links.postID(in: q) {
            if let status = try? await statusEntity(id, viewer: viewer) { results.statuses = [status] }
            return try MastodonJSON.response(results)
        }
        guard let text = SearchText(String(q.prefix(200))) else { return try MastodonJSON.response(results) }
        let page = PageRequest(limit: min(limit + offset, 240))
        if type == nil || type == "accounts" {
            var query = text
            if q.hasPrefix("@"), let plain = SearchText(String(q.dropFirst().prefix(200))) { query = plain }
            let users = try await search.users(query, page: page, viewer: viewer)
            results.accounts = users.items.dropFirst(offset).map { mapper.account($0) }
        }
        if type == nil || type == "statuses" {
            let found = try await search.posts(.init(text: text, page: page), viewer: viewer)
            results.statuses = try await withMentions(found.items.dropFirst(offset).map(mapper.status), viewer: viewer)
        }
        if type == nil || type == "hashtags" {
            // Apps ask for tags without their `#`.
            let prefix = q.hasPrefix("#") ? String(q.dropFirst()) : q
            let found = try await tags.complete(String(prefix.prefix(100)), viewer: viewer, limit: limit + offset)
            results.hashtags = found.dropFirst(offset).map { mapper.tag($0) }
        }
        return try MastodonJSON.response(results)
    }

    // MARK: markers and preferences

    /// Markers are kept in the person's preferences (`mastodonMarkers`).
    @Sendable func markers(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:statuses")
        let params = try await MastodonParams.read(request, context: context)
        let stored = try await accounts.me(userID: me.userID).preferences["mastodonMarkers"]
        var result: [String: Mastodon.Marker] = [:]
        for timeline in params.strings("timeline") where ["home", "notifications"].contains(timeline) {
            if let marker = stored?[timeline], let id = marker["lastReadId"]?.stringValue,
                let updated = marker["updatedAt"]?.stringValue, case .number(let version)? = marker["version"]
            {
                result[timeline] = .init(lastReadId: id, version: Self.markerVersion(version), updatedAt: updated)
            }
        }
        return try MastodonJSON.response(result)
    }

    /// A marker's version as kept in the preferences, which the person may write anything into
    /// (`PUT /me/preferences`): a whole number from 0 to a billion, else 0.
    static func markerVersion(_ value: Double) -> Int {
        guard let version = Int(exactly: value.rounded(.down)), (0...1_000_000_000).contains(version) else { return 0 }
        return version
    }

    @Sendable func saveMarkers(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:statuses")
        let params = try await MastodonParams.read(request, context: context)
        var stored = try await accounts.me(userID: me.userID).preferences["mastodonMarkers"] ?? .object([:])
        var result: [String: Mastodon.Marker] = [:]
        for timeline in ["home", "notifications"] {
            guard let id = params.string("\(timeline)[last_read_id]") else { continue }
            guard let value = Int64(id), value > 0 else { throw MastodonError.validation("last_read_id is not an id") }
            var version = 0
            if case .number(let old)? = stored[timeline]?["version"] { version = Self.markerVersion(old) }
            let marker = Mastodon.Marker(
                lastReadId: String(value), version: version + 1, updatedAt: Timestamp.now.description)
            result[timeline] = marker
            if case .object(var object) = stored {
                object[timeline] = .object([
                    "lastReadId": .string(marker.lastReadId), "version": .number(Double(marker.version)),
                    "updatedAt": .string(marker.updatedAt),
                ])
                stored = .object(object)
            }
        }
        try await accounts.setPreference("mastodonMarkers", to: stored, userID: me.userID)
        return try MastodonJSON.response(result)
    }

    @Sendable func preferences(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:accounts")
        // The web app's "always open content warnings and sensitive photos" (`expandWarnings`).
        let expand = try await accounts.me(userID: me.userID).preferences["expandWarnings"] == .bool(true)
        let preferences: [String: JSONValue] = [
            "posting:default:visibility": .string("public"), "posting:default:sensitive": .bool(false),
            "posting:default:language": .null, "reading:expand:media": .string(expand ? "show_all" : "default"),
            "reading:expand:spoilers": .bool(expand),
        ]
        return try MastodonJSON.response(preferences)
    }
}
