import Foundation
import PlazaAPI

/// Following hashtags, decided once for every door (the JSON API, the web app, Mastodon apps).
package struct TagActions: Sendable {
    let tags: TagStore

    /// The tag a path names (without `#`, percent-encoded or not); 404 when it is no tag.
    package static func tag(named name: String) throws -> Hashtag {
        let decoded = name.contains("%") ? name.removingPercentEncoding ?? name : name
        let bare = decoded.hasPrefix("#") ? String(decoded.dropFirst()) : decoded
        guard let tag = Hashtag(bare) else { throw PlazaError.notFound("Hashtag") }
        return tag
    }

    /// `person` follows (or no longer follows) the tag `name`: its public posts come into
    /// their home feed from now on (and its latest ones at once), or leave it.
    package func follow(_ name: String, by person: Int64, _ following: Bool) async throws -> HashtagSummary {
        let tag = try Self.tag(named: name)
        if following {
            try await tags.follow(tag, by: person)
        } else {
            try await tags.unfollow(tag, by: person)
        }
        return try await tags.summary(tag, viewer: person)
    }
}
