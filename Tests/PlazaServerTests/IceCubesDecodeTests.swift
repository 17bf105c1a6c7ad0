import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// A small world as an Ice Cubes user sees it: Ana follows Bea and Cat. Bea posts a link (its card
/// previewed from the fixture server) and a poll behind a content warning; Dan, whom Ana does not
/// follow, a photo with a hashtag, which Cat boosts (so it reaches Ana's home as the boost). Ana posts, which Bea likes and comments on; Bea follows Ana.
/// Ana follows the photo's tag, keeps a filter and markers.
struct IceCubesWorld: Sendable {
    let ana: Account
    let bea: Account
    let cat: Account
    let anaToken: String
    let beaToken: String
    let catToken: String
    /// Dan's photo, Bea's link and poll.
    let photo: String
    let link: String
    let poll: String
    /// Cat's boost of the photo.
    let boost: String
    /// Ana's status, and Bea's comment on it.
    let anaStatus: String
    let comment: String
    /// When the world began to be made: the times it answers with fall between then and now.
    let began: Date

    /// Whether `date` is a time during the world's making or the test since (to the second,
    /// Mastodon's times are to the millisecond).
    func isItsTime(_ date: Date) -> Bool {
        date >= began.addingTimeInterval(-1) && date <= Date().addingTimeInterval(1)
    }

    /// Whether `midnight` starts a day the world's making or the test ran in.
    func isItsDay(_ midnight: Date) -> Bool {
        midnight <= Date() && midnight > began.addingTimeInterval(-86_401)
    }

    static func configure(_ config: inout PlazaConfig) {
        LinkPreviewTests.configure(&config)
        config.push.allowed = AddressPolicy(allowing: [IPBlock("127.0.0.1")!])
    }

    /// Runs `body` with the world in a fresh app, its links previewed from the fixture server.
    static func with(_ body: @escaping @Sendable (TestAPI, IceCubesWorld) async throws -> Void) async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(configure) { api async throws in
                try await body(api, try await make(api, linkBase: base))
            }
        }
    }

    static func make(_ api: TestAPI, linkBase: String) async throws -> IceCubesWorld {
        let began = Date()
        let (ana, bea, cat, dan) = try await api.register("ana", "bea", "cat", "dan")
        let (anaToken, beaToken, catToken) = (
            try await api.mastodonToken(ana), try await api.mastodonToken(bea), try await api.mastodonToken(cat)
        )
        for person in [bea, cat] {
            try await IceCubesDecodeTests.must(
                api, .post, "/api/v1/accounts/\(person.id)/follow", token: anaToken, as: IceCubes.Relationship.self)
        }
        let photo = try await IceCubesDecodeTests.photoStatus(api, token: try await api.mastodonToken(dan))
        let linked = try await api.post(
            bea, CreatePostRequest(kind: .link, link: LinkInput(url: "\(linkBase)/page/youtube")))
        let poll = try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/statuses", token: beaToken,
            form: [
                ("status", "Lunch?"), ("spoiler_text", "Food talk"), ("poll[options][]", "ramen"),
                ("poll[options][]", "udon"), ("poll[expires_in]", "3600"),
            ], as: IceCubes.Status.self)
        let boost = try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/statuses/\(photo)/reblog", token: catToken, as: IceCubes.Status.self)
        let mine = try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/statuses", token: anaToken, form: [("status", "Hello @bea, #noodles tonight?")],
            as: IceCubes.Status.self)
        try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/statuses/\(mine.id)/favourite", token: beaToken, as: IceCubes.Status.self)
        let comment = try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/statuses", token: beaToken,
            form: [("status", "Yes please"), ("in_reply_to_id", mine.id)], as: IceCubes.Status.self)
        try await IceCubesDecodeTests.must(
            api, .post, "/api/v1/accounts/\(ana.id)/follow", token: beaToken, as: IceCubes.Relationship.self)
        try await IceCubesDecodeTests.waitForCard(api, status: linked.id, token: anaToken)
        return IceCubesWorld(
            ana: ana, bea: bea, cat: cat, anaToken: anaToken, beaToken: beaToken, catToken: catToken, photo: photo,
            link: linked.id, poll: poll.id, boost: boost.id, anaStatus: mine.id, comment: comment.id, began: began)
    }
}

/// Plaza's Mastodon answers, screen by screen, decoded with Ice Cubes' own models
/// (`IceCubesModels.swift`): a field the app requires that Plaza leaves out, or sends with another
/// type, fails here.
@Suite("Ice Cubes decodes Plaza's answers")
struct IceCubesDecodeTests {
    /// `path`'s answer, which must be a success, decoded as Ice Cubes does (the JSON in the failure).
    @discardableResult
    static func must<T: Decodable>(
        _ api: TestAPI, _ path: String, token: String?, as type: T.Type = T.self, official: Bool = false
    ) async throws -> T {
        try await must(api, .get, path, token: token, as: type, official: official)
    }

    @discardableResult
    static func must<T: Decodable>(
        _ api: TestAPI, _ method: HTTPRequest.Method, _ path: String, token: String?,
        form: [(String, String)]? = nil, as type: T.Type = T.self, official: Bool = false
    ) async throws -> T {
        let response = try await api.mastodon(method, path, token: token, form: form)
        #expect(response.status == .ok, "\(method) \(path): \(response.text)")
        let data = Data(response.body.readableBytesView)
        do {
            return official ? try MastodonIOS.decode(T.self, from: data) : try IceCubes.decode(T.self, from: data)
        } catch {
            let app = official ? "The official app" : "Ice Cubes"
            Issue.record("\(app) cannot decode \(path) as \(T.self): \(error)\n\(response.text)")
            throw error
        }
    }

    /// A photo, with its alt text and a hashtag: the status's id.
    static func photoStatus(_ api: TestAPI, token: String) async throws -> String {
        let form = MediaFixtures.multipart(
            try MediaFixtures.sample(.jpeg), filename: "p.jpg", contentType: "image/jpeg",
            fields: ["description": "A bowl of ramen"])
        let uploaded = try await api.client.execute(
            uri: "/api/v2/media", method: .post,
            headers: [.authorization: "Bearer \(token)", .contentType: form.contentType], body: form.body)
        #expect(uploaded.status == .ok, "\(String(buffer: uploaded.body))")
        let media = try IceCubes.decode(IceCubes.MediaAttachment.self, from: Data(uploaded.body.readableBytesView))
        #expect(media.meta?.original?.width == 64 && media.meta?.original?.height == 48)
        let status = try await must(
            api, .post, "/api/v1/statuses", token: token,
            form: [("status", "Ramen at last #noodles"), ("media_ids[]", media.id)], as: IceCubes.Status.self)
        return status.id
    }

    /// Waits until the link's preview is fetched, its image too (the title comes first; the
    /// image is fetched and made into variants after it). The wait is long only as a guard:
    /// with both cores busy the previews' worker takes its time.
    static func waitForCard(_ api: TestAPI, status: String, token: String) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            let card = try await must(api, "/api/v1/statuses/\(status)", token: token, as: IceCubes.Status.self).card
            if card?.title == "Building Plaza in Swift", card?.image != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the link's preview never came")
    }

    // MARK: launch

    @Test func launch() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let instance = try await Self.must(api, "/api/v2/instance", token: token, as: IceCubes.Instance.self)
            #expect(instance.configuration?.polls.maxOptions ?? 0 >= 2)
            let me = try await Self.must(
                api, "/api/v1/accounts/verify_credentials", token: token, as: IceCubes.Account.self)
            #expect(me.id == world.ana.id && me.source != nil)
            try await Self.must(
                api, .post, "/api/v1/markers", token: token,
                form: [("home[last_read_id]", world.photo), ("notifications[last_read_id]", "12")],
                as: IceCubes.Marker.self)
            let markers = try await Self.must(
                api, "/api/v1/markers?timeline[]=home&timeline[]=notifications", token: token,
                as: IceCubes.Marker.self)
            #expect(markers.home?.lastReadId == world.photo)
            let marked = try #require(markers.home?.updatedAt.asDate)
            #expect(world.isItsTime(marked), "the time of the marker, not another")
            try await Self.must(
                api, .post, "/api/v2/filters", token: token,
                form: [
                    ("title", "Sport"), ("context[]", "home"), ("context[]", "account"), ("filter_action", "warn"),
                    ("expires_in", "3600"), ("keywords_attributes[][keyword]", "football"),
                ], as: IceCubes.ServerFilter.self)
            let filters = try await Self.must(
                api, "/api/v2/filters", token: token, as: [IceCubes.ServerFilter].self)
            let filter = try #require(filters.first)
            #expect(filter.keywords.first?.keyword == "football" && filter.context == [.home, .account])
            let expiry = try #require(filter.expiresAt?.asDate)
            #expect(world.isItsTime(expiry.addingTimeInterval(-3600)), "an hour after it was set")
            try await Self.must(api, "/api/v1/lists", token: token, as: [IceCubes.List].self)
            try await Self.must(api, .post, "/api/v1/tags/noodles/follow", token: token, as: IceCubes.Tag.self)
            let followed = try await Self.must(api, "/api/v1/followed_tags", token: token, as: [IceCubes.Tag].self)
            #expect(followed.map(\.name) == ["noodles"] && followed.first?.following == true)
            try await Self.must(api, "/api/v1/custom_emojis", token: nil, as: [IceCubes.Emoji].self)
        }
    }

    // MARK: timelines and statuses

    @Test func homeTimelineAndAStatus() async throws {
        try await IceCubesWorld.with { api, world in
            let home = try await Self.must(
                api, "/api/v1/timelines/home", token: world.anaToken, as: [IceCubes.Status].self)
            let byID = Dictionary(home.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let boost = try #require(byID[world.boost])
            #expect(boost.reblog?.id == world.photo && boost.account.id == world.cat.id)
            let photo = try #require(boost.reblog)
            #expect(photo.mediaAttachments.first?.description == "A bowl of ramen")
            #expect(photo.mediaAttachments.first?.url != nil && photo.mediaAttachments.first?.previewUrl != nil)
            #expect(photo.tags.map(\.name) == ["noodles"])
            let card = try #require(byID[world.link]?.card)
            #expect(card.title == "Building Plaza in Swift" && card.image != nil)
            let poll = try #require(byID[world.poll])
            #expect(poll.spoilerText == "Food talk" && poll.sensitive)
            let options = try #require(poll.poll).options.map(\.title)
            #expect(options == ["ramen", "udon"])
            let ends = try #require(poll.poll?.expiresAt.value?.asDate)
            #expect(abs(ends.timeIntervalSince(poll.createdAt.asDate) - 3600) < 2)
            #expect(poll.visibility == .pub)
            // The time written is the post's.
            let post = try await api.get("/posts/\(world.poll)", as: world.ana).decode(Post.self)
            #expect(abs(poll.createdAt.asDate.timeIntervalSince(post.createdAt.date)) < 0.001)

            for path in ["/api/v1/timelines/public", "/api/v1/timelines/tag/noodles"] {
                let statuses = try await Self.must(api, path, token: world.anaToken, as: [IceCubes.Status].self)
                #expect(!statuses.isEmpty, "\(path)")
            }
            let status = try await Self.must(
                api, "/api/v1/statuses/\(world.anaStatus)", token: world.anaToken, as: IceCubes.Status.self)
            #expect(status.favouritesCount == 1 && status.repliesCount == 1)
            let context = try await Self.must(
                api, "/api/v1/statuses/\(world.anaStatus)/context", token: world.anaToken,
                as: IceCubes.StatusContext.self)
            #expect(context.descendants.map(\.id) == [world.comment])
            #expect(context.descendants.first?.inReplyToId == world.anaStatus)
            let reply = try await Self.must(
                api, "/api/v1/statuses/\(world.comment)/context", token: world.anaToken,
                as: IceCubes.StatusContext.self)
            #expect(reply.ancestors.map(\.id) == [world.anaStatus])
        }
    }

    // MARK: profile

    @Test func profile() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let bea = try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)", token: token, as: IceCubes.Account.self)
            #expect(bea.username == "bea" && bea.statusesCount ?? 0 >= 2 && bea.followersCount == 1)
            // Mastodon gives the day one joined, at midnight.
            #expect(world.isItsDay(bea.createdAt.asDate))
            let statuses = try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)/statuses", token: token, as: [IceCubes.Status].self)
            #expect(Set(statuses.map(\.id)).isSuperset(of: [world.link, world.poll]))
            try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)/statuses?pinned=true", token: token, as: [IceCubes.Status].self)
            let relationships = try await Self.must(
                api, "/api/v1/accounts/relationships?id[]=\(world.bea.id)", token: token,
                as: [IceCubes.Relationship].self)
            #expect(relationships.first?.following == true && relationships.first?.followedBy == true)
            let followers = try await Self.must(
                api, "/api/v1/accounts/\(world.ana.id)/followers", token: token, as: [IceCubes.Account].self)
            #expect(followers.map(\.id) == [world.bea.id])
            try await Self.must(
                api, "/api/v1/accounts/\(world.ana.id)/following", token: token, as: [IceCubes.Account].self)
        }
    }

    /// Plaza has no featured tags: the profile's tab gets an empty list both apps decode.
    @Test
    func featuredTags() async throws {
        try await IceCubesWorld.with { api, world in
            let featured = try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)/featured_tags", token: world.anaToken,
                as: [IceCubes.FeaturedTag].self)
            #expect(featured.isEmpty)
            try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)/featured_tags", token: world.anaToken,
                as: [MastodonIOS.FeaturedTag].self, official: true)
        }
    }

    // MARK: notifications

    @Test func notifications() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let all = try await Self.must(
                api, "/api/v1/notifications", token: token, as: [IceCubes.Notification].self)
            #expect(Set(all.map(\.type)) == ["favourite", "follow", "mention"], "\(all.map(\.type))")
            for notification in all {
                #expect(world.isItsTime(notification.createdAt.asDate))
            }
            #expect(all.first { $0.type == "mention" }?.status?.id == world.comment)
            let grouped = try await Self.must(
                api,
                "/api/v2/notifications?grouped_types[]=favourite&grouped_types[]=follow&grouped_types[]=reblog"
                    + "&expand_accounts=full",
                token: token, as: IceCubes.GroupedNotificationsResults.self)
            #expect(Set(grouped.notificationGroups.map(\.type)) == ["favourite", "follow", "mention"])
            let accounts = Set(grouped.accounts.map(\.id))
            let statuses = Set(grouped.statuses.map(\.id))
            for group in grouped.notificationGroups {
                #expect(Set(group.sampleAccountIds).isSubset(of: accounts), "every sample account is given")
                #expect(group.statusId.map(statuses.contains) ?? true, "the group's status is given")
                #expect(world.isItsTime(group.latestPageNotificationAt.asDate))
            }
            let one = try #require(all.first)
            try await Self.must(api, "/api/v1/notifications/\(one.id)", token: token, as: IceCubes.Notification.self)
        }
    }

    // MARK: explore, tags and search

    @Test func exploreTagsAndSearch() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let tags = try await Self.must(api, "/api/v1/trends/tags", token: token, as: [IceCubes.Tag].self)
            let noodles = try #require(tags.first { $0.name == "noodles" })
            #expect(noodles.history.count == 7 && noodles.history.first?.accounts == "2")
            let trending = try await Self.must(
                api, "/api/v1/trends/statuses", token: token, as: [IceCubes.Status].self)
            #expect(trending.map(\.id).contains(world.photo))
            let links = try await Self.must(api, "/api/v1/trends/links", token: token, as: [IceCubes.Card].self)
            #expect(links.first?.title == "Building Plaza in Swift")
            try await Self.must(api, "/api/v1/suggestions", token: token, as: [IceCubes.Account].self)
            let tag = try await Self.must(api, "/api/v1/tags/noodles", token: token, as: IceCubes.Tag.self)
            #expect(tag.name == "noodles" && tag.history.count == 7)
            let search = try await Self.must(
                api, "/api/v2/search?q=nood&resolve=true", token: token, as: IceCubes.SearchResults.self)
            #expect(search.hashtags.map(\.name) == ["noodles"])
            let people = try await Self.must(
                api, "/api/v2/search?q=bea&type=accounts", token: token, as: IceCubes.SearchResults.self)
            #expect(people.accounts.map(\.id).contains(world.bea.id))
            let posts = try await Self.must(
                api, "/api/v2/search?q=ramen&type=statuses", token: token, as: IceCubes.SearchResults.self)
            #expect(posts.statuses.map(\.id).contains(world.photo))
        }
    }

    /// The models fail as the app would: on a status without a field the app requires, with a
    /// field of another type, or with a time the app's formatter cannot read (it would show now).
    @Test func theModelsRefuseWhatTheAppRefuses() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let made = try await api.mastodon(.post, "/api/v1/statuses", token: token, form: [("status", "Hi #tea")])
            let data = Data(made.body.readableBytesView)
            _ = try IceCubes.decode(IceCubes.Status.self, from: data)
            guard case .object(let status) = try made.json() else {
                throw DecodingError.typeMismatch(Int.self, .init(codingPath: [], debugDescription: ""))
            }
            for (key, value) in [
                ("tags", nil), ("sensitive", nil), ("visibility", JSONValue.string("limited")),
                ("replies_count", .string("1")), ("created_at", .string("2026-12-06T10:00:00Z")),
            ] as [(String, JSONValue?)] {
                var changed = status
                changed[key] = value
                let bytes = try JSONEncoder().encode(JSONValue.object(changed))
                #expect(throws: (any Error).self, "\(key)") { try IceCubes.decode(IceCubes.Status.self, from: bytes) }
            }
        }
    }

    // MARK: the official app

    /// Where the official app requires more than Ice Cubes (`MastodonIOS`).
    @Test func theOfficialAppsStricterFields() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let me = try await Self.must(
                api, "/api/v1/accounts/verify_credentials", token: token, as: MastodonIOS.Account.self, official: true)
            #expect(me.statusesCount == 1 && me.followingCount == 2 && me.followersCount == 1)
            try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)", token: token, as: MastodonIOS.Account.self, official: true)
            let home = try await Self.must(
                api, "/api/v1/timelines/home", token: token, as: [MastodonIOS.Status].self, official: true)
            #expect(home.contains { $0.reblog?.id == world.photo } && home.contains { $0.card != nil })
            try await Self.must(
                api, "/api/v1/notifications", token: token, as: [MastodonIOS.Notification].self, official: true)
            let tags = try await Self.must(
                api, "/api/v1/trends/tags", token: token, as: [MastodonIOS.Tag].self, official: true)
            let today = try #require(tags.first?.history?.first?.day)
            #expect(world.isItsDay(today), "today's midnight: \(today)")
            let links = try await Self.must(
                api, "/api/v1/trends/links", token: token, as: [MastodonIOS.Card].self, official: true)
            #expect(links.first?.title == "Building Plaza in Swift")
            try await Self.must(
                api, "/api/v2/suggestions", token: token, as: [MastodonIOS.Suggestion].self, official: true)
        }
    }

    // MARK: settings and reports

    /// Ice Cubes' `base64UrlEncodedString()`: URL-safe base64 without padding.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test
    func pushSubscription() async throws {
        try await withApp(IceCubesWorld.configure) { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
            let made = try await Self.must(
                api, .post, "/api/v1/push/subscription", token: token,
                form: [
                    ("subscription[endpoint]", "http://127.0.0.1:9/push"),
                    ("subscription[keys][p256dh]", Self.base64URL(key)),
                    ("subscription[keys][auth]", Self.base64URL(Data(repeating: 7, count: 16))),
                    ("data[alerts][mention]", "true"), ("data[alerts][follow]", "true"), ("policy", "all"),
                ], as: IceCubes.PushSubscription.self)
            #expect(made.alerts.mention && made.alerts.follow && !made.alerts.poll)
            let shown = try await Self.must(
                api, "/api/v1/push/subscription", token: token, as: IceCubes.PushSubscription.self)
            #expect(shown.id == made.id && !shown.serverKey.isEmpty)
        }
    }

    @Test
    func report() async throws {
        try await IceCubesWorld.with { api, world in
            try await Self.must(
                api, .post, "/api/v1/reports", token: world.anaToken,
                form: [("account_id", world.bea.id), ("status_ids[]", world.link), ("comment", "Spam")],
                as: IceCubes.ReportSent.self)
        }
    }

    @Test
    func lists() async throws {
        try await IceCubesWorld.with { api, world in
            let token = world.anaToken
            let made = try await Self.must(
                api, .post, "/api/v1/lists", token: token,
                form: [("title", "Friends"), ("replies_policy", "list"), ("exclusive", "false")],
                as: IceCubes.List.self)
            #expect(made.title == "Friends" && made.repliesPolicy == .list && made.exclusive == false)
            let lists = try await Self.must(api, "/api/v1/lists", token: token, as: [IceCubes.List].self)
            #expect(lists.map(\.id) == [made.id])
            try await Self.must(api, "/api/v1/lists/\(made.id)", token: token, as: IceCubes.List.self)
            try await Self.must(
                api, .post, "/api/v1/lists/\(made.id)/accounts", token: token, form: [("account_ids[]", world.bea.id)],
                as: [String: String].self)
            let members = try await Self.must(
                api, "/api/v1/lists/\(made.id)/accounts", token: token, as: [IceCubes.Account].self)
            #expect(members.map(\.id) == [world.bea.id])
            let timeline = try await Self.must(
                api, "/api/v1/timelines/list/\(made.id)", token: token, as: [IceCubes.Status].self)
            #expect(timeline.map(\.id).contains(world.link) && !timeline.map(\.id).contains(world.photo))
            try await Self.must(
                api, "/api/v1/accounts/\(world.bea.id)/lists", token: token, as: [IceCubes.List].self)
        }
    }
}
