import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

// Mastodon's entities (docs.joinmastodon.org/entities), as Plaza fills them. Swift names are
// Mastodon's in camel case; `MastodonJSON` writes them in snake case, with `null` where
// Mastodon writes null (clients such as Ice Cubes fail on a missing key, not on a null).

enum Mastodon {
    struct Emoji: Codable, Sendable, Hashable {
        var shortcode: String
        var url: String
        var staticUrl: String
        var visibleInPicker: Bool
    }

    struct Field: Codable, Sendable, Hashable {
        var name: String
        var value: String
        @Nullable var verifiedAt: String?
    }

    struct Account: Codable, Sendable, Hashable {
        struct Source: Codable, Sendable, Hashable {
            var privacy: String
            var sensitive: Bool
            @Nullable var language: String?
            var note: String
            var fields: [Field]
            var followRequestsCount: Int
            var discoverable: Bool
            var hideCollections: Bool
            var indexable: Bool
        }
        var id: String
        var username: String
        var acct: String
        var displayName: String
        var locked: Bool
        var bot: Bool
        var discoverable: Bool
        var indexable: Bool
        var group: Bool
        var createdAt: String
        var note: String
        var url: String
        var uri: String
        var avatar: String
        var avatarStatic: String
        var header: String
        var headerStatic: String
        var followersCount: Int
        var followingCount: Int
        var statusesCount: Int
        @Nullable var lastStatusAt: String?
        var hideCollections: Bool
        var noindex: Bool
        var emojis: [Emoji]
        var roles: [String]
        var fields: [Field]
        var avatarDescription = ""
        var headerDescription = ""
        var showMedia = true
        var showMediaReplies = true
        var showFeatured = true
        /// `verify_credentials` only: the person's own settings.
        var source: Source?
    }

    struct MediaAttachment: Codable, Sendable, Hashable {
        struct Size: Codable, Sendable, Hashable {
            var width: Int
            var height: Int
            var size: String
            var aspect: Double
            var duration: Double?
        }
        struct Focus: Codable, Sendable, Hashable {
            var x: Double
            var y: Double
        }
        struct Meta: Codable, Sendable, Hashable {
            var original: Size
            var small: Size
            /// The focal point: Plaza keeps none, so the middle.
            var focus = Focus(x: 0, y: 0)
            var length: String?
            var duration: Double?
        }
        var id: String
        var type: String
        var url: String?
        var previewUrl: String
        @Nullable var remoteUrl: String?
        @Nullable var previewRemoteUrl: String?
        @Nullable var textUrl: String?
        var meta: Meta
        @Nullable var description: String?
        @Nullable var blurhash: String?
    }

    struct Mention: Codable, Sendable, Hashable {
        var id: String
        var username: String
        var url: String
        var acct: String
    }

    struct Tag: Codable, Sendable, Hashable {
        var name: String
        var url: String
    }

    /// A tag as `tags/:name`, `followed_tags` and search give it: with its last week's use and
    /// whether the viewer follows it.
    struct TagDetail: Codable, Sendable, Hashable {
        struct Day: Codable, Sendable, Hashable {
            /// The day's midnight (UTC) in seconds, and the counts, all as strings.
            var day: String
            var uses: String
            var accounts: String
        }
        var id: String
        var name: String
        var url: String
        var history: [Day]
        var following: Bool
    }

    struct Application: Codable, Sendable, Hashable {
        var name: String
        @Nullable var website: String?
    }

    struct PreviewCard: Codable, Sendable, Hashable {
        var url: String
        var title: String
        var description: String
        var type: String
        var authorName: String
        var authorUrl: String
        var providerName: String
        var providerUrl: String
        var html: String
        var width: Int
        var height: Int
        @Nullable var image: String?
        @Nullable var embedUrl: String?
        @Nullable var blurhash: String?
        @Nullable var publishedAt: String?
        /// Mastodon's authors (`{name, url, account}`); Plaza's previews name none.
        var authors: [Author] = []
        var language: String?

        struct Author: Codable, Sendable, Hashable {
            var name: String
            var url: String
            @Nullable var account: Account?
        }
    }

    /// A post, or a comment (a reply to its post; comments have no poll).
    struct Status: Codable, Sendable {
        var id: String
        var uri: String
        var url: String
        var createdAt: String
        var account: Account
        var content: String
        var visibility: String
        var sensitive = false
        var spoilerText: String
        var mediaAttachments: [MediaAttachment]
        @Nullable var application: Application?
        var mentions: [Mention]
        var tags: [Tag]
        var emojis: [Emoji] = []
        var reblogsCount = 0
        var quotesCount = 0
        var favouritesCount: Int
        var repliesCount: Int
        @Nullable var inReplyToId: String?
        @Nullable var inReplyToAccountId: String?
        /// A boost: the boosted status, inside this one (whose account boosted it).
        @Nullable var reblog: Reblog?
        @Nullable var quote: String?
        @Nullable var poll: Poll?
        @Nullable var card: PreviewCard?
        @Nullable var language: String?
        /// The text as written: only in the answer to a delete (to redraft).
        var text: String?
        @Nullable var editedAt: String?
        var favourited: Bool
        var reblogged = false
        var muted = false
        var bookmarked: Bool
        var pinned = false
        /// The viewer's filters that matched it with a warning (or, on its own, hiding).
        var filtered: [FilterResult] = []
    }

    /// Filters v2: a Plaza filter, whose one keyword has its id and whose title is its phrase.
    struct Filter: Codable, Sendable {
        var id: String
        var title: String
        var context: [String]
        @Nullable var expiresAt: String?
        var filterAction: String
        var keywords: [FilterKeyword]
        var statuses: [String] = []
    }

    struct FilterKeyword: Codable, Sendable {
        var id: String
        var keyword: String
        var wholeWord: Bool
    }

    struct FilterResult: Codable, Sendable {
        var filter: Filter
        var keywordMatches: [String]
        @Nullable var statusMatches: [String]?
    }

    /// Filters v1: `irreversible` is Plaza's `hide`.
    struct FilterV1: Codable, Sendable {
        var id: String
        var phrase: String
        var context: [String]
        @Nullable var expiresAt: String?
        var irreversible: Bool
        var wholeWord: Bool
    }

    /// A version of a status (`statuses/:id/history`).
    struct StatusEdit: Codable, Sendable {
        var content: String
        var spoilerText: String
        var sensitive: Bool
        var createdAt: String
        var account: Account
        var mediaAttachments: [MediaAttachment]
        var emojis: [Emoji] = []
        /// What the version's poll asked (`options[].title` alone).
        @Nullable var poll: EditedPoll?
    }

    struct EditedPoll: Codable, Sendable {
        struct Option: Codable, Sendable { var title: String }
        var options: [Option]
    }

    /// A post's poll; its id is the post's. Counts are null until the reader may see results
    /// (they voted, wrote it, or it ended); `votes_count` is then the number of voters.
    struct Poll: Codable, Sendable {
        struct Option: Codable, Sendable {
            var title: String
            @Nullable var votesCount: Int?
        }
        var id: String
        @Nullable var expiresAt: String?
        var expired: Bool
        var multiple: Bool
        var votesCount: Int
        @Nullable var votersCount: Int?
        var options: [Option]
        var emojis: [Emoji] = []
        var voted: Bool
        var ownVotes: [Int]
    }

    /// A status as written, for editing it (`statuses/:id/source`).
    struct StatusSource: Codable, Sendable {
        var id: String
        var text: String
        var spoilerText: String
    }

    /// A status inside another (a boost's), encoded as the status itself.
    final class Reblog: Codable, Sendable {
        let status: Status
        init(_ status: Status) { self.status = status }
        init(from decoder: any Decoder) throws { status = try Status(from: decoder) }
        func encode(to encoder: any Encoder) throws { try status.encode(to: encoder) }
    }

    struct Context: Codable, Sendable {
        var ancestors: [Status]
        var descendants: [Status]
    }

    struct Relationship: Codable, Sendable, Hashable {
        var id: String
        var following: Bool
        var showingReblogs: Bool
        var notifying: Bool
        var languages: [String]?
        var followedBy: Bool
        var blocking: Bool
        var blockedBy: Bool
        var muting: Bool
        @Nullable var mutingExpiresAt: String?
        var mutingNotifications: Bool
        var requested: Bool
        var requestedBy: Bool
        var domainBlocking: Bool
        var endorsed: Bool
        var note: String
    }

    struct Notification: Codable, Sendable {
        var id: String
        var type: String
        var groupKey: String
        var createdAt: String
        var account: Account
        @Nullable var status: Status?
    }

    struct Marker: Codable, Sendable, Hashable {
        var lastReadId: String
        var version: Int
        var updatedAt: String
    }

    /// The answer of `POST /api/v1/apps` (with the secret) and of `GET /api/v1/apps/verify_credentials`.
    struct CredentialApplication: Codable, Sendable, Hashable {
        var id: String
        var name: String
        @Nullable var website: String?
        var scopes: [String]
        var redirectUri: String
        var redirectUris: [String]
        /// Mastodon's deprecated VAPID key field, kept by clients that still read it.
        var vapidKey: String?
        var clientId: String?
        var clientSecret: String?
        var clientSecretExpiresAt: Int?
    }

    struct Token: Codable, Sendable, Hashable {
        var accessToken: String
        var tokenType: String
        var scope: String
        var createdAt: Int64
    }

    struct SearchResults: Codable, Sendable {
        var accounts: [Account]
        var statuses: [Status]
        var hashtags: [TagDetail]
    }
}

/// Encodes Mastodon's JSON: snake-case keys.
enum MastodonJSON {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws
        -> Response
    {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }
}
