import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// Mastodon's notification paging, counts, groups and policy; its push payload's token; the
/// instance's smaller endpoints and suggestions, as Ice Cubes and the official app call them.
@Suite("Mastodon: notifications, push, instance and suggestions")
struct MastodonNotificationsAndInstanceTests {
    /// The ids of a page of v1 notifications, or of v2 groups' notifications.
    static func ids(_ response: TestResponse, v2: Bool = false) throws -> [String] {
        let json = try response.json()
        if v2 {
            return json["notification_groups"]?.array.compactMap { $0["page_max_id"]?.stringValue } ?? []
        }
        return json.array.compactMap { $0["id"]?.stringValue }
    }

    /// A `Link` target's query parameter.
    static func parameter(_ name: String, in url: String?) -> String? {
        url.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == name }?.value }
    }

    /// Five like notifications for ana, from bob, carl, bob, dave, carl (oldest first).
    static func fiveLikes(_ api: TestAPI) async throws -> (
        ana: Account, token: String, likers: [Account], ids: [String]
    ) {
        let (ana, bob, carl, dave) = try await api.register("ana", "bob", "carl", "dave")
        let token = try await api.mastodonToken(ana)
        let likers = [bob, carl, bob, dave, carl]
        for (index, liker) in likers.enumerated() {
            let post = try await api.textPost(ana, "post \(index)")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: liker).status == .ok)
        }
        let all = try Self.ids(try await api.mastodon(.get, "/api/v1/notifications", token: token))
        #expect(all.count == 5)
        return (ana, token, likers, Array(all.reversed()))
    }

    @Test func v2PagesOlderNewerAndJustAboveWithNumericLinks() async throws {
        try await withApp { api async throws in
            let (_, token, _, n) = try await Self.fiveLikes(api)
            let path = "/api/v2/notifications"
            let first = try await api.mastodon(.get, "\(path)?limit=2", token: token)
            #expect(first.status == .ok)
            #expect(try Self.ids(first, v2: true) == [n[4], n[3]])
            let next = try #require(Self.parameter("max_id", in: first.link("next")))
            let prev = try #require(Self.parameter("min_id", in: first.link("prev")))
            #expect(next == n[3] && prev == n[4])
            for id in [next, prev] { #expect(!id.isEmpty && id.allSatisfy(\.isNumber), "\(id)") }
            let older = try await api.mastodon(.get, "\(path)?limit=2&max_id=\(next)", token: token)
            #expect(try Self.ids(older, v2: true) == [n[2], n[1]])
            // since_id: the newest above it; min_id: the page just above it; both newest first.
            let since = try await api.mastodon(.get, "\(path)?limit=2&since_id=\(n[0])", token: token)
            #expect(try Self.ids(since, v2: true) == [n[4], n[3]])
            let above = try await api.mastodon(.get, "\(path)?limit=2&min_id=\(n[0])", token: token)
            #expect(try Self.ids(above, v2: true) == [n[2], n[1]])
            #expect(Self.parameter("min_id", in: above.link("prev")) == n[2])
            #expect(Self.parameter("max_id", in: above.link("next")) == n[1])
            let top = try await api.mastodon(.get, "\(path)?min_id=\(n[4])", token: token)
            #expect(try Self.ids(top, v2: true).isEmpty && top.headers[HTTPField.Name("Link")!] == nil)
            // v1 the same way.
            let v1 = try await api.mastodon(.get, "/api/v1/notifications?limit=2&min_id=\(n[1])", token: token)
            #expect(try Self.ids(v1) == [n[3], n[2]])
            for bad in ["max_id=abc", "since_id=-3", "min_id=1.5", "limit=many", "account_id=x"] {
                let refused = try await api.mastodon(.get, "\(path)?\(bad)", token: token)
                #expect(refused.status == .unprocessableContent, "\(bad)")
                #expect(try refused.json()["error"]?.stringValue?.hasPrefix("Validation failed") == true)
            }
        }
    }

    @Test func v1FiltersByAccount() async throws {
        try await withApp { api async throws in
            let (ana, token, likers, n) = try await Self.fiveLikes(api)
            let bob = likers[0]
            let carl = likers[1]
            let bobs = try await api.mastodon(.get, "/api/v1/notifications?account_id=\(bob.id)", token: token)
            #expect(try Self.ids(bobs) == [n[2], n[0]])
            #expect(try bobs.json().array.allSatisfy { $0["account"]?["id"]?.stringValue == bob.id })
            let carls = try await api.mastodon(
                .get, "/api/v1/notifications?account_id=\(carl.id)&limit=1", token: token)
            #expect(try Self.ids(carls) == [n[4]])
            #expect(Self.parameter("account_id", in: carls.link("next")) == carl.id)
            let more = try await api.mastodon(
                .get, "/api/v1/notifications?account_id=\(carl.id)&max_id=\(n[4])", token: token)
            #expect(try Self.ids(more) == [n[1]])
            // Someone who did nothing, or no one: nothing.
            let own = try await api.mastodon(.get, "/api/v1/notifications?account_id=\(ana.id)", token: token)
            #expect(try Self.ids(own).isEmpty)
            let nobody = try await api.mastodon(.get, "/api/v1/notifications?account_id=999999", token: token)
            #expect(try nobody.status == .ok && (Self.ids(nobody)).isEmpty)
        }
    }

    @Test func unreadCountsGroupsPolicyAndRequests() async throws {
        try await withApp { api async throws in
            let (_, token, likers, n) = try await Self.fiveLikes(api)
            let bob = likers[0]
            let bobToken = try await api.mastodonToken(bob)
            for version in ["v1", "v2"] {
                let path = "/api/\(version)/notifications/unread_count"
                #expect(try await api.mastodon(.get, path, token: token).json()["count"]?.number == 5)
                #expect(try await api.mastodon(.get, "\(path)?limit=3", token: token).json()["count"]?.number == 3)
                #expect(try await api.mastodon(.get, path, token: bobToken).json()["count"]?.number == 0)
                #expect(try await api.mastodon(.get, path).status == .unauthorized)
            }
            // One group by its key; someone else's, or a key of another shape, is not found.
            let group = try await api.mastodon(.get, "/api/v2/notifications/plaza-\(n[2])", token: token)
            #expect(group.status == .ok, "\(group.text)")
            let groups = try group.json()["notification_groups"]?.array ?? []
            #expect(groups.count == 1 && groups.first?["group_key"]?.stringValue == "plaza-\(n[2])")
            #expect(groups.first?["type"]?.stringValue == "favourite")
            #expect(try group.json()["accounts"]?.array.count == 1 && group.json()["statuses"]?.array.count == 1)
            for key in ["plaza-\(n[2])", "plaza-x", "plaza-", "ungrouped-99999999999999999999", "other"] {
                let tok = key == "plaza-\(n[2])" ? bobToken : token
                #expect(try await api.mastodon(.get, "/api/v2/notifications/\(key)", token: tok).status == .notFound)
            }
            #expect(
                try await api.mastodon(.get, "/api/v2/notifications/ungrouped-\(n[2])", token: token).status == .ok)
            // The policy: everything accepted, nothing held back.
            let v2 = try await api.mastodon(.get, "/api/v2/notifications/policy", token: token).json()
            for name in [
                "for_not_following", "for_not_followers", "for_new_accounts", "for_private_mentions",
                "for_limited_accounts",
            ] {
                #expect(v2[name]?.stringValue == "accept", "\(name)")
            }
            #expect(v2["summary"]?["pending_requests_count"]?.number == 0)
            #expect(v2["summary"]?["pending_notifications_count"]?.number == 0)
            let v1 = try await api.mastodon(.get, "/api/v1/notifications/policy", token: token).json()
            #expect(v1["filter_not_following"]?.bool == false && v1["filter_private_mentions"]?.bool == false)
            #expect(v1["for_not_following"] == nil && v1["summary"]?["pending_requests_count"]?.number == 0)
            let kept = try await api.mastodon(
                .patch, "/api/v2/notifications/policy", token: token, form: [("for_not_following", "accept")])
            #expect(try kept.status == .ok && (kept.json()["for_not_following"]?.stringValue) == "accept")
            for (version, field, value) in [
                ("v2", "for_new_accounts", "filter"), ("v2", "for_private_mentions", "drop"),
                ("v1", "filter_not_followers", "true"),
            ] {
                let refused = try await api.mastodon(
                    .patch, "/api/\(version)/notifications/policy", token: token, form: [(field, value)])
                #expect(refused.status == .unprocessableContent)
                #expect(
                    try refused.json()["error"]?.stringValue
                        == "Validation failed: Plaza does not filter notifications")
            }
            #expect(
                try await api.mastodon(
                    .patch, "/api/v1/notifications/policy", token: token, form: [("filter_not_following", "false")]
                ).status == .ok)
            let requests = try await api.mastodon(.get, "/api/v1/notifications/requests", token: token)
            #expect(requests.status == .ok && requests.text == "[]")
            // Cleared: nothing unread.
            #expect(try await api.mastodon(.post, "/api/v1/notifications/clear", token: token).status == .ok)
            #expect(
                try await api.mastodon(.get, "/api/v1/notifications/unread_count", token: token).json()["count"]?
                    .number == 0)
        }
    }

    @Test func theInstancesSmallerEndpoints() async throws {
        try await withApp { api async throws in
            let admin = try await api.register("admin")
            _ = try await api.withDatabase { db in
                try await db.write("UPDATE users SET is_admin = TRUE WHERE id = \(bind: Int64(admin.id) ?? 0)")
            }
            let description = "Welcome to <Plaza> & friends.\nBe kind.\n\nSecond paragraph."
            let set = try await api.call(
                .patch, "/admin/instance", as: admin, json: InstancePatch(description: description))
            #expect(set.status == .ok, "\(set.text)")
            for (path, body) in [
                ("instance/peers", "[]"), ("instance/activity", "[]"), ("instance/domain_blocks", "[]"),
                ("instance/translation_languages", "{}"),
            ] {
                let answer = try await api.mastodon(.get, "/api/v1/\(path)")
                #expect(answer.status == .ok && answer.text == body, "\(path): \(answer.text)")
            }
            let extended = try await api.mastodon(.get, "/api/v1/instance/extended_description").json()
            #expect(
                extended["content"]?.stringValue
                    == "<p>Welcome to &lt;Plaza&gt; &amp; friends.<br>Be kind.</p><p>Second paragraph.</p>")
            let updated = try #require(extended["updated_at"]?.stringValue)
            #expect(updated.hasSuffix("Z") && updated.contains("T"), "\(updated)")
            let languages = try await api.mastodon(.get, "/api/v1/instance/languages").json().array
            #expect(languages.count == 183)
            #expect(languages.contains { $0["code"]?.stringValue == "en" && $0["name"]?.stringValue == "English" })
            #expect(Set(languages.compactMap { $0["code"]?.stringValue }).count == 183)
            #expect(languages.allSatisfy { ($0["code"]?.stringValue?.count ?? 0) == 2 })
        }
    }

    @Test func suggestionsArePlazasOwn() async throws {
        try await withApp { api async throws in
            let (ana, bob, carl) = try await api.register("ana", "bob", "carl")
            try await api.follow(ana, "bob")
            try await api.follow(bob, "carl")
            let token = try await api.mastodonToken(ana)
            let v1 = try await api.mastodon(.get, "/api/v1/suggestions", token: token)
            #expect(v1.status == .ok)
            let accounts = try v1.json().array.compactMap { $0["id"]?.stringValue }
            #expect(accounts.contains(carl.id) && !accounts.contains(bob.id) && !accounts.contains(ana.id))
            let v2 = try await api.mastodon(.get, "/api/v2/suggestions", token: token).json().array
            let carls = try #require(v2.first { $0["account"]?["id"]?.stringValue == carl.id })
            #expect(carls["source"]?.stringValue == "past_interactions")
            #expect(carls["sources"]?.array == [.string("friends_of_friends")])
            #expect(try await api.mastodon(.get, "/api/v2/suggestions").status == .unauthorized)
            #expect(try await api.mastodon(.get, "/api/v1/suggestions?limit=x", token: token).status.code == 422)
            // A person whose public posts make them suggested, to someone with no follows.
            _ = try await api.textPost(carl, "hello world")
            let dave = try await api.register("dave")
            let daves = try await api.mastodon(.get, "/api/v2/suggestions", token: try await api.mastodonToken(dave))
            let fromPosts = try #require(try daves.json().array.first { $0["account"]?["id"]?.stringValue == carl.id })
            #expect(fromPosts["source"]?.stringValue == "global")
        }
    }

    @Test func trendsTagsAndStatusToolsAnswerRealData() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let token = try await api.mastodonToken(ana)
            let post = try await api.textPost(bob, "learning #swiftlang today")
            try await api.follow(ana, "bob")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: ana).status == .ok)
            let trends = try await api.mastodon(.get, "/api/v1/trends/tags", token: token).json().array
            let tag = try #require(trends.first { $0["name"]?.stringValue == "swiftlang" }, "\(trends)")
            let day = try #require(tag["history"]?.array.first)
            #expect(
                day["day"]?.stringValue != nil && day["uses"]?.stringValue != nil && day["accounts"]?.stringValue != nil
            )
            #expect(tag["url"]?.stringValue != nil)
            let shown = try await api.mastodon(.get, "/api/v1/tags/swiftlang", token: token)
            #expect(try shown.status == .ok && (shown.json()["following"]?.bool) == false)
            #expect(try await api.mastodon(.post, "/api/v1/tags/swiftlang/follow", token: token).status == .ok)
            let followed = try await api.mastodon(.get, "/api/v1/followed_tags", token: token).json().array
            #expect(followed.map { $0["name"]?.stringValue } == ["swiftlang"])
            let statuses = try await api.mastodon(.get, "/api/v1/trends/statuses", token: token)
            #expect(statuses.status == .ok)
            #expect(try await api.mastodon(.get, "/api/v1/trends/links", token: token).status == .ok)
            // Status tools on ana's own post.
            let mine = try await api.textPost(ana, "first words")
            let history = try await api.mastodon(.get, "/api/v1/statuses/\(mine.id)/history", token: token).json()
            #expect(history.array.count == 1)
            let source = try await api.mastodon(.get, "/api/v1/statuses/\(mine.id)/source", token: token).json()
            #expect(source["text"]?.stringValue == "first words" && source["id"]?.stringValue == mine.id)
            let pinned = try await api.mastodon(.post, "/api/v1/statuses/\(mine.id)/pin", token: token)
            #expect(try pinned.status == .ok && (pinned.json()["pinned"]?.bool) == true)
            let unpinned = try await api.mastodon(.post, "/api/v1/statuses/\(mine.id)/unpin", token: token)
            #expect(try unpinned.status == .ok && (unpinned.json()["pinned"]?.bool) == false)
        }
    }

    // MARK: push

    /// A Mastodon subscription by `token` to `endpoint`, in the standard encoding, for favourites.
    static func subscribe(_ api: TestAPI, token: String, endpoint: String, browser: TestBrowser) async throws
        -> TestResponse
    {
        try await api.mastodon(
            .post, "/api/v1/push/subscription", token: token,
            form: [
                ("subscription[endpoint]", endpoint),
                ("subscription[keys][p256dh]", ByteText.base64url(browser.key.publicKey.x963Representation)),
                ("subscription[keys][auth]", ByteText.base64url(browser.auth)), ("subscription[standard]", "true"),
                ("data[alerts][favourite]", "true"), ("data[policy]", "all"),
            ])
    }

    @Test func pushesCarryTheSubscribingTokenSealedAtRest() async throws {
        try await PushTests.withPushApp { api, services, base in
            let (ana, bob) = try await api.register("ana", "bob")
            let app = try await api.mastodonApp()
            let code = try await api.mastodonCode(ana, app: app, scopes: "read write follow push")
            let issued = try await api.mastodon(
                .post, "/oauth/token",
                form: [
                    ("grant_type", "authorization_code"), ("code", code), ("client_id", app.id),
                    ("client_secret", app.secret), ("redirect_uri", "https://app.example/cb"),
                ])
            let token = try #require(try issued.json()["access_token"]?.stringValue)
            let browser = TestBrowser()
            let made = try await Self.subscribe(api, token: token, endpoint: base + "/wp/m-ana", browser: browser)
            #expect(made.status == .ok, "\(made.text)")
            // The id is a number, as Mastodon sends it and Ice Cubes decodes it; so in GET and PUT.
            let id = try #require(try made.json()["id"]?.number)
            #expect(id > 0)
            #expect(try await api.mastodon(.get, "/api/v1/push/subscription", token: token).json()["id"]?.number == id)
            #expect(
                try await api.mastodon(
                    .put, "/api/v1/push/subscription", token: token, form: [("data[alerts][mention]", "true")]
                ).json()["id"]?.number == id)
            // The token is kept sealed, never as it is.
            let stored = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.first("SELECT app_token FROM push_devices WHERE mastodon IS NOT NULL")?.decode(
                        column: "app_token", as: String?.self)
                }
            }
            let sealed = try #require(stored ?? nil)
            #expect(!sealed.contains(token) && sealed.hasPrefix(AppPushTokens.prefix))

            let post = try await api.textPost(ana, "tap me")
            #expect(try await api.call(.put, "/posts/\(post.id)/like", as: bob).status == .ok)
            let push = try #require(try await services.pushes(to: "/wp/m-ana").first)
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data(try browser.decrypt(push.body)))
            #expect(payload["access_token"]?.stringValue == token)
            #expect(payload["notification_type"]?.stringValue == "favourite")
            let notification = try #require(payload["notification_id"]?.number)
            let opened = try await api.mastodon(
                .get, "/api/v1/notifications/\(Int64(notification))",
                token: try #require(payload["access_token"]?.stringValue))
            #expect(try opened.status == .ok && (opened.json()["type"]?.stringValue) == "favourite")

            // Revoked: the subscription, and the sealed token with it, are gone.
            let revoked = try await api.mastodon(
                .post, "/oauth/revoke", form: [("client_id", app.id), ("client_secret", app.secret), ("token", token)])
            #expect(revoked.status == .ok)
            let left = try await api.withDatabase { db in
                try await db.read { db in try await db.rows("SELECT id FROM push_devices WHERE app_token IS NOT NULL") }
            }
            #expect(left.isEmpty)
        }
    }

    @Test func aSealedTokenOpensOnlyInItsOwnRowAndUnderItsKey() async throws {
        try await withApp { api async throws in
            try await api.withDatabase { db in
                let keys = ServerKeyStore(db: db)
                let tokens = AppPushTokens(keys: keys, secrets: SecretBox(current: nil))
                let sealed = try await tokens.sealer().seal("secret-token", device: 7)
                #expect(await tokens.open(sealed, device: 7) == "secret-token")
                #expect(await tokens.open(sealed, device: 8) == nil)
                #expect(await tokens.open("secret-token", device: 7) == nil)
                #expect(await tokens.open(AppPushTokens.prefix + "AAAA", device: 7) == nil)
                #expect(await tokens.open(nil, device: 7) == nil)
                // With a key kept outside the database, that key seals it.
                let key = try SecretBox.Key(text: SecretBox.Key.generate())
                let boxed = AppPushTokens(keys: keys, secrets: SecretBox(current: key))
                let outside = try await boxed.sealer().seal("secret-token", device: 7)
                #expect(outside.hasPrefix(SecretBox.prefix) && !outside.contains("secret-token"))
                #expect(await boxed.open(outside, device: 7) == "secret-token")
                #expect(await tokens.open(outside, device: 7) == nil)
            }
        }
    }
}
