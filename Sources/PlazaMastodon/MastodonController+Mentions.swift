import PlazaAPI
import PlazaServer

/// A status's `mentions`: the mapper reads the names from the text; these fill in the people's
/// ids for a whole answer in one read, as the apps open a tapped mention by id. A name nobody
/// here has, or whom the reader may not see, is left out (its text stays a link to the name).
extension MastodonController {
    func withMentions(_ statuses: [Mastodon.Status], viewer: Int64?) async throws -> [Mastodon.Status] {
        var names: Set<String> = []
        for status in statuses {
            for mention in status.mentions + (status.reblog?.status.mentions ?? []) { names.insert(mention.username) }
        }
        guard !names.isEmpty else { return statuses }
        let ids = try await people.userIDs(usernames: names, viewer: viewer)
        return statuses.map { Self.filled($0, ids: ids) }
    }

    func withMentions(_ status: Mastodon.Status, viewer: Int64?) async throws -> Mastodon.Status {
        try await withMentions([status], viewer: viewer)[0]
    }

    func withMentions(notifications: [Mastodon.Notification], viewer: Int64?) async throws -> [Mastodon.Notification] {
        var statuses = try await withMentions(notifications.compactMap(\.status), viewer: viewer).makeIterator()
        return notifications.map { notification in
            var notification = notification
            if notification.status != nil { notification.status = statuses.next() }
            return notification
        }
    }

    /// The same status as a stream sends it: encoded once for every reader, so with no
    /// mentions (the apps read them when they open the status).
    static func withoutMentions(_ status: Mastodon.Status) -> Mastodon.Status {
        var status = status
        status.mentions = []
        if let inner = status.reblog?.status { status.reblog = Mastodon.Reblog(withoutMentions(inner)) }
        return status
    }

    private static func filled(_ status: Mastodon.Status, ids: [String: Int64]) -> Mastodon.Status {
        var status = status
        status.mentions = status.mentions.compactMap { mention in
            ids[mention.username.lowercased()].map {
                Mastodon.Mention(id: String($0), username: mention.username, url: mention.url, acct: mention.acct)
            }
        }
        if let inner = status.reblog?.status { status.reblog = Mastodon.Reblog(filled(inner, ids: ids)) }
        return status
    }
}
