import Foundation
import Testing

@testable import PlazaAPI

// Ice Cubes' decoding rules, written down to check Plaza's Mastodon answers against an app's own
// models (not only the documentation).
//
// Repository: https://github.com/Dimillian/IceCubesApp
// Commit:     0fc41d2ced2e3e735bd9c42d5ae6dea16e63d618 (2026-03-06)
// Files:      Packages/Models/Sources/Models/<file> as noted on each struct; the decoder's
//             settings from Packages/NetworkClient/Sources/NetworkClient/MastodonClient.swift.
//
// Each struct keeps every field the app declares, with its Swift type and optionality: a field
// that is not optional there is not optional here, and an optional one still fails on a wrong
// type. Where the app decodes by hand (`init(from:)`), what that requires is reproduced. Two
// things are stricter, on purpose: `HTMLString` (parsed with SwiftSoup there, which takes
// anything) is a `String`; and a `ServerDate` that the app's formatter cannot read throws here,
// where the app silently shows "now" — and it must be the very time written (checked against
// `Timestamp(rfc3339:)`).
enum IceCubes {
    /// `MastodonClient`: `JSONDecoder()` with `.convertFromSnakeCase`, nothing else.
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decoder().decode(T.self, from: data)
    }

    /// Alias/DateFormatterCache.swift's `createdAtDateFormatter`.
    static func dateFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.calendar = .init(identifier: .iso8601)
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX"
        formatter.timeZone = .init(abbreviation: "UTC")
        return formatter
    }

    struct DateError: Error, CustomStringConvertible {
        var description: String
    }

    /// Alias/ServerDate.swift: a string read by `createdAtDateFormatter` (the app falls back to
    /// now when it cannot; here that is an error, and so is any other time than the one written).
    struct ServerDate: Decodable, Sendable {
        let asDate: Date
        let text: String

        init(from decoder: any Decoder) throws {
            text = try decoder.singleValueContainer().decode(String.self)
            guard let date = IceCubes.dateFormatter().date(from: text) else {
                throw DateError(description: "Ice Cubes cannot read the date \(text) (it would show now)")
            }
            guard let written = Timestamp(rfc3339: text), abs(written.date.timeIntervalSince(date)) < 0.001 else {
                throw DateError(description: "Ice Cubes reads \(text) as \(date), not the time written")
            }
            asDate = date
        }
    }

    /// Status.swift's `Visibility`.
    enum Visibility: String, Decodable, Sendable {
        case pub = "public"
        case unlisted
        case priv = "private"
        case direct
    }

    /// Emoji.swift.
    struct Emoji: Decodable, Sendable {
        let shortcode: String
        let url: URL
        let staticUrl: URL
        let visibleInPicker: Bool
        let category: String?
    }

    /// Account.swift (its `init(from:)`: the same required keys as below).
    final class Account: Decodable, Sendable {
        struct Field: Decodable, Sendable {
            let name: String
            let value: String  // HTMLString
            let verifiedAt: String?
        }

        struct Source: Decodable, Sendable {
            let privacy: Visibility?
            let sensitive: Bool
            let language: String?
            let note: String
            let fields: [Field]
        }

        let id: String
        let username: String
        let displayName: String?
        let avatar: URL
        let header: URL
        let acct: String
        let note: String  // HTMLString
        let createdAt: ServerDate
        let followersCount: Int?
        let followingCount: Int?
        let statusesCount: Int?
        let lastStatusAt: String?
        let fields: [Field]
        let locked: Bool
        let emojis: [Emoji]
        let url: URL?
        let source: Source?
        let bot: Bool
        let discoverable: Bool?
        let moved: Account?
    }

    /// Tag.swift's `FeaturedTag` (its `statusesCount` a string, or a number turned into one).
    struct FeaturedTag: Decodable, Sendable {
        let id: String
        let name: String
        let url: URL
        let statusesCount: String

        private enum CodingKeys: String, CodingKey { case id, name, url, statusesCount }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            name = try container.decode(String.self, forKey: .name)
            url = try container.decode(URL.self, forKey: .url)
            do {
                statusesCount = try container.decode(String.self, forKey: .statusesCount)
            } catch DecodingError.typeMismatch {
                statusesCount = try String(container.decode(Int.self, forKey: .statusesCount))
            }
        }
    }

    /// History.swift.
    struct History: Decodable, Sendable {
        let day: String
        let accounts: String
        let uses: String
    }

    /// Tag.swift: `history` and `following` may be missing (then `[]` and `false`), not null.
    struct Tag: Decodable, Sendable {
        let name: String
        let url: String
        let following: Bool
        let history: [History]

        private enum CodingKeys: String, CodingKey { case name, url, following, history }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            url = try container.decode(String.self, forKey: .url)
            do {
                history = try container.decode([History].self, forKey: .history)
            } catch DecodingError.keyNotFound {
                history = []
            }
            do {
                following = try container.decode(Bool.self, forKey: .following)
            } catch DecodingError.keyNotFound {
                following = false
            }
        }
    }

    /// Mention.swift.
    struct Mention: Decodable, Sendable {
        let id: String
        let username: String
        let url: URL
        let acct: String
    }

    /// Application.swift: anything goes (`name` defaults to "", a bad `website` to nil).
    struct Application: Decodable, Sendable {
        let name: String
        let website: URL?

        private enum CodingKeys: String, CodingKey { case name, website }

        init(from decoder: any Decoder) throws {
            let values = try decoder.container(keyedBy: CodingKeys.self)
            name = try values.decodeIfPresent(String.self, forKey: .name) ?? ""
            website = try? values.decodeIfPresent(URL.self, forKey: .website)
        }
    }

    /// MediaAttachement.swift.
    struct MediaAttachment: Decodable, Sendable {
        struct MetaContainer: Decodable, Sendable {
            struct Meta: Decodable, Sendable {
                let width: Int?
                let height: Int?
            }
            let original: Meta?
        }
        let id: String
        let type: String
        let url: URL?
        let previewUrl: URL?
        let description: String?
        let meta: MetaContainer?
    }

    /// Card.swift.
    struct Card: Decodable, Sendable {
        struct CardAuthor: Decodable, Sendable {
            let name: String
            let url: String
            let account: Account?
        }
        let url: String
        let title: String?
        let authorName: String?
        let description: String?
        let providerName: String?
        let providerUrl: String?
        let type: String
        let image: URL?
        let width: CGFloat?
        let height: CGFloat?
        let history: [History]?
        let authors: [CardAuthor]?
    }

    /// Poll.swift. `expiresAt` is its `NullableString`: the key must be there; null is no end
    /// (the app takes any unreadable value for none; here a time must be a time).
    struct Poll: Decodable, Sendable {
        struct Option: Decodable, Sendable {
            let title: String
            let votesCount: Int?
        }
        struct NullableString: Decodable, Sendable {
            let value: ServerDate?
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                value = container.decodeNil() ? nil : try container.decode(ServerDate.self)
            }
        }
        let id: String
        let expiresAt: NullableString
        let expired: Bool
        let multiple: Bool
        let votesCount: Int
        let votersCount: Int?
        let voted: Bool?
        let ownVotes: [Int]?
        let options: [Option]
    }

    /// Filter.swift: a status's `filtered` entries.
    struct Filtered: Decodable, Sendable {
        struct Filter: Decodable, Sendable {
            enum Action: String, Decodable, Sendable { case warn, hide }
            let id: String
            let title: String
            let context: [String]
            let filterAction: Action
        }
        let filter: Filter
        let keywordMatches: [String]?
    }

    /// Quote.swift: every field `try?`, but it must be an object when present.
    struct Quote: Decodable, Sendable {
        enum State: String, Decodable, Sendable { case accepted, pending, rejected, revoked, deleted, unauthorized }
        let state: State?
        let quotedStatus: Status?
        let quotedStatusId: String?

        private enum CodingKeys: String, CodingKey { case state, quotedStatus, quotedStatusId }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            state = try? container.decode(State.self, forKey: .state)
            quotedStatusId = try? container.decode(String.self, forKey: .quotedStatusId)
            quotedStatus = try? container.decode(Status.self, forKey: .quotedStatus)
        }
    }

    /// QuoteApproval.swift.
    struct QuoteApproval: Decodable, Sendable {
        enum QuoteAppproveStatus: String, Decodable, Sendable { case automatic, manual, denied, unknown }
        let currentUser: QuoteAppproveStatus
        let automatic: [String]
        let manual: [String]
    }

    /// Status.swift's `ReblogStatus`: a `Status` without `reblog`.
    final class ReblogStatus: Decodable, Sendable {
        let id: String
        let content: String  // HTMLString
        let account: Account
        let createdAt: ServerDate
        let editedAt: ServerDate?
        let mediaAttachments: [MediaAttachment]
        let mentions: [Mention]
        let repliesCount: Int
        let reblogsCount: Int
        let quotesCount: Int?
        let favouritesCount: Int
        let card: Card?
        let favourited: Bool?
        let reblogged: Bool?
        let pinned: Bool?
        let bookmarked: Bool?
        let emojis: [Emoji]
        let url: String?
        let application: Application?
        let inReplyToId: String?
        let inReplyToAccountId: String?
        let visibility: Visibility
        let poll: Poll?
        let spoilerText: String  // HTMLString
        let filtered: [Filtered]?
        let sensitive: Bool
        let language: String?
        let tags: [Tag]
        let quote: Quote?
        let quoteApproval: QuoteApproval?
    }

    /// Status.swift's `Status` (synthesized decoding: every non-optional key required).
    final class Status: Decodable, Sendable {
        let id: String
        let content: String  // HTMLString
        let account: Account
        let createdAt: ServerDate
        let editedAt: ServerDate?
        let reblog: ReblogStatus?
        let mediaAttachments: [MediaAttachment]
        let mentions: [Mention]
        let repliesCount: Int
        let reblogsCount: Int
        let quotesCount: Int?
        let favouritesCount: Int
        let card: Card?
        let favourited: Bool?
        let reblogged: Bool?
        let pinned: Bool?
        let bookmarked: Bool?
        let emojis: [Emoji]
        let url: String?
        let application: Application?
        let inReplyToId: String?
        let inReplyToAccountId: String?
        let visibility: Visibility
        let poll: Poll?
        let spoilerText: String  // HTMLString
        let filtered: [Filtered]?
        let sensitive: Bool
        let language: String?
        let tags: [Tag]
        let quote: Quote?
        let quoteApproval: QuoteApproval?
    }

    /// StatusContext.swift.
    struct StatusContext: Decodable, Sendable {
        let ancestors: [Status]
        let descendants: [Status]
    }

    /// Notification.swift.
    struct Notification: Decodable, Sendable {
        let id: String
        let type: String
        let createdAt: ServerDate
        let account: Account
        let status: Status?
        let groupKey: String?
    }

    /// NotificationGroup.swift (`mostRecentNotificationId` a number).
    struct NotificationGroup: Decodable, Sendable {
        let groupKey: String
        let notificationsCount: Int
        let type: String
        let mostRecentNotificationId: Int
        let pageMinId: String?
        let pageMaxId: String?
        let latestPageNotificationAt: ServerDate
        let sampleAccountIds: [String]
        let statusId: String?
    }

    /// GroupedNotificationsResults.swift (`/api/v2/notifications`).
    struct GroupedNotificationsResults: Decodable, Sendable {
        let accounts: [Account]
        let statuses: [Status]
        let notificationGroups: [NotificationGroup]
    }

    /// Instance.swift (read from `/api/v2/instance`: Env/CurrentInstance.swift).
    struct Instance: Decodable, Sendable {
        struct Usage: Decodable, Sendable {
            struct Users: Decodable, Sendable { let activeMonth: Int? }
            let users: Users?
        }
        struct Configuration: Decodable, Sendable {
            struct Statuses: Decodable, Sendable {
                let maxCharacters: Int
                let maxMediaAttachments: Int
            }
            struct Polls: Decodable, Sendable {
                let maxOptions: Int
                let maxCharactersPerOption: Int
                let minExpiration: Int
                let maxExpiration: Int
            }
            let statuses: Statuses
            let polls: Polls
        }
        struct Rule: Decodable, Sendable {
            let id: String
            let text: String
        }
        struct URLs: Decodable, Sendable { let streamingApi: URL? }
        struct APIVersions: Decodable, Sendable { let mastodon: Int? }
        struct Contact: Decodable, Sendable {
            let account: Account?
            let email: String
        }
        struct Registrations: Decodable, Sendable { let enabled: Bool }
        struct Thumbnail: Decodable, Sendable { let url: URL? }
        let title: String
        let domain: String
        let description: String?
        let shortDescription: String?
        let version: String
        let apiVersions: APIVersions?
        let usage: Usage?
        let languages: [String]?
        let registrations: Registrations
        let thumbnail: Thumbnail
        let configuration: Configuration?
        let rules: [Rule]?
        let urls: URLs?
        let contact: Contact
    }

    /// Relationship.swift: every key may be missing (then false or ""), none may have another type.
    struct Relationship: Decodable, Sendable {
        let id: String
        let following: Bool
        let showingReblogs: Bool
        let followedBy: Bool
        let blocking: Bool
        let blockedBy: Bool
        let muting: Bool
        let mutingNotifications: Bool
        let requested: Bool
        let domainBlocking: Bool
        let endorsed: Bool
        let note: String
        let notifying: Bool

        private enum CodingKeys: String, CodingKey {
            case id, following, showingReblogs, followedBy, blocking, blockedBy, muting, mutingNotifications
            case requested, domainBlocking, endorsed, note, notifying
        }

        init(from decoder: any Decoder) throws {
            let values = try decoder.container(keyedBy: CodingKeys.self)
            func flag(_ key: CodingKeys) throws -> Bool { try values.decodeIfPresent(Bool.self, forKey: key) ?? false }
            id = try values.decodeIfPresent(String.self, forKey: .id) ?? ""
            following = try flag(.following)
            showingReblogs = try flag(.showingReblogs)
            followedBy = try flag(.followedBy)
            blocking = try flag(.blocking)
            blockedBy = try flag(.blockedBy)
            muting = try flag(.muting)
            mutingNotifications = try flag(.mutingNotifications)
            requested = try flag(.requested)
            domainBlocking = try flag(.domainBlocking)
            endorsed = try flag(.endorsed)
            note = try values.decodeIfPresent(String.self, forKey: .note) ?? ""
            notifying = try flag(.notifying)
        }
    }

    /// Marker.swift.
    struct Marker: Decodable, Sendable {
        struct Content: Decodable, Sendable {
            let lastReadId: String
            let version: Int
            let updatedAt: ServerDate
        }
        let notifications: Content?
        let home: Content?
    }

    /// ServerFilter.swift (filters v2).
    struct ServerFilter: Decodable, Sendable {
        struct Keyword: Decodable, Sendable {
            let id: String
            let keyword: String
            let wholeWord: Bool
        }
        enum Context: String, Decodable, Sendable { case home, notifications, `public`, thread, account }
        enum Action: String, Decodable, Sendable { case warn, hide }
        let id: String
        let title: String
        let keywords: [Keyword]
        let filterAction: Action
        let context: [Context]
        let expiresIn: Int?
        let expiresAt: ServerDate?
    }

    /// List.swift.
    struct List: Decodable, Sendable {
        enum RepliesPolicy: String, Decodable, Sendable { case followed, list, none }
        let id: String
        let title: String
        let repliesPolicy: RepliesPolicy?
        let exclusive: Bool?
    }

    /// PushSubscription.swift (`id` a number).
    struct PushSubscription: Decodable, Sendable {
        struct Alerts: Decodable, Sendable {
            let follow: Bool
            let favourite: Bool
            let reblog: Bool
            let mention: Bool
            let poll: Bool
            let status: Bool
        }
        let id: Int
        let endpoint: URL
        let serverKey: String
        let alerts: Alerts
    }

    /// IceCubesApp/App/Report/ReportView.swift's `ReportSent`: what it reads of a report.
    struct ReportSent: Decodable, Sendable {
        let id: String
    }

    /// SearchResults.swift (`/api/v2/search`).
    struct SearchResults: Decodable, Sendable {
        let accounts: [Account]
        let statuses: [Status]
        let hashtags: [Tag]
    }
}

// The official app's rules where they are stricter than Ice Cubes' (a field Ice Cubes takes as
// optional and the official app requires, or a date it reads that Ice Cubes keeps as text).
// Only those fields are written down; the rest is as above.
//
// Repository: https://github.com/mastodon/mastodon-ios
// Commit:     a9e088a9c7b88720fed5eefdd2dc1606b5f21dc8 (2024-10-23)
// Files:      MastodonSDK/Sources/MastodonSDK/Entity/Mastodon+Entity+<name>.swift as noted; the
//             decoder (dates) from MastodonSDK/Sources/MastodonSDK/API/Mastodon+API.swift.
enum MastodonIOS {
    /// `Mastodon.API.decoder`: explicit snake-case keys (here `.convertFromSnakeCase`), and a date
    /// is ISO 8601 with fractional seconds, a bare date, or seconds since 1970 (text or number).
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                let precise = ISO8601DateFormatter()
                precise.formatOptions.insert(.withFractionalSeconds)
                let day = ISO8601DateFormatter()
                day.formatOptions = [.withFullDate, .withDashSeparatorInDate]
                if let date = precise.date(from: text) ?? day.date(from: text) { return date }
                if let seconds = TimeInterval(text) { return Date(timeIntervalSince1970: seconds) }
            }
            if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSince1970: seconds) }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid date")
        }
        return try decoder.decode(T.self, from: data)
    }

    /// Field: `verified_at` a date.
    struct Field: Decodable, Sendable {
        let name: String
        let value: String
        let verifiedAt: Date?
    }

    /// Account: a display name (not null), `url`, the three counts and the dates.
    final class Account: Decodable, Sendable {
        let id: String
        let username: String
        let acct: String
        let url: String
        let displayName: String
        let note: String
        let avatar: String
        let header: String
        let locked: Bool
        let createdAt: Date
        let lastStatusAt: Date?
        let statusesCount: Int
        let followersCount: Int
        let followingCount: Int
        let moved: Account?
        let fields: [Field]?
        let muteExpiresAt: Date?
    }

    /// Card: a title and a description (Ice Cubes: optional); `published_at` a date.
    struct Card: Decodable, Sendable {
        let url: String
        let title: String
        let description: String
        let type: String
        let publishedAt: Date?
    }

    /// History: `day` a date (seconds since 1970, as text).
    struct History: Decodable, Sendable {
        let day: Date
        let uses: String
        let accounts: String
    }

    struct Tag: Decodable, Sendable {
        let name: String
        let url: String
        let history: [History]?
        let following: Bool?
    }

    /// Status: `uri`, the counts of boosts and favourites; the boosted status is a `Status`.
    final class Status: Decodable, Sendable {
        let id: String
        let uri: String
        let createdAt: Date
        let editedAt: Date?
        let account: Account
        let reblogsCount: Int
        let favouritesCount: Int
        let repliesCount: Int?
        let mentions: [IceCubes.Mention]
        let tags: [Tag]
        let emojis: [IceCubes.Emoji]
        let reblog: Status?
        let card: Card?
    }

    /// Notification: `moderation_warning` aside, as Ice Cubes (`group_key` unread).
    struct Notification: Decodable, Sendable {
        let id: String
        let type: String
        let createdAt: Date
        let account: Account
        let status: Status?
    }

    /// Suggestion.swift: `/api/v2/suggestions` (Ice Cubes reads v1's bare accounts).
    struct Suggestion: Decodable, Sendable {
        let source: String
        let account: Account
    }

    /// FeaturedTag: `statuses_count` a number and `last_status_at` a date, both required.
    struct FeaturedTag: Decodable, Sendable {
        let id: String
        let name: String
        let url: String?
        let statusesCount: Int
        let lastStatusAt: Date
    }

    // Also stricter there, not decoded here: Marker.swift requires both `home` and
    // `notifications` (the app never asks for markers); Relationship.swift requires every flag
    // (Ice Cubes defaults them); Subscription.swift takes the push id as a string or a number.
}
