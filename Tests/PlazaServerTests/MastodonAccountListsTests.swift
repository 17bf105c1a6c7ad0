import Foundation
import HTTPTypes
import PlazaAPI
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

/// Mastodon's lists of one person — followers, following, follow requests, blocks, mutes,
/// favourites, bookmarks — paged as the apps page them (digits in the `Link` header's `max_id`),
/// featured tags, and reports.
@Suite("Mastodon account lists and reports")
struct MastodonAccountListsTests {
    /// The next page's address in a response's `Link` header, read as an app reads it: its
    /// `max_id` must be all digits (Ice Cubes and the official app read nothing else).
    static func next(_ response: TestResponse) throws -> String? {
        guard let link = response.link("next") else { return nil }
        let url = try #require(URLComponents(string: link))
        let maxID = try #require(url.queryItems?.first { $0.name == "max_id" }?.value)
        #expect(!maxID.isEmpty && maxID.allSatisfy(\.isASCII) && maxID.allSatisfy(\.isNumber), "max_id \(maxID)")
        if let prev = response.link("prev").flatMap(URLComponents.init(string:)) {
            let minID = prev.queryItems?.first { $0.name == "min_id" }?.value ?? ""
            #expect(!minID.isEmpty && minID.allSatisfy(\.isNumber), "min_id \(minID)")
        }
        return url.percentEncodedPath + "?" + (url.percentEncodedQuery ?? "")
    }

    /// Every page of a list from `path`, following the `Link` header: the `key` of each item
    /// (accounts' usernames, statuses' ids), in order.
    static func walk(_ api: TestAPI, _ path: String, token: String?, key: String = "username") async throws
        -> [String]
    {
        var items: [String] = []
        var next: String? = path
        var pages = 0
        while let page = next, pages < 20 {
            let response = try await api.mastodon(.get, page, token: token)
            #expect(response.status == .ok, "\(page): \(response.text)")
            items += try response.json().array.compactMap { $0[key]?.stringValue }
            next = try Self.next(response)
            pages += 1
        }
        return items
    }

    static func names(_ response: TestResponse) throws -> [String] {
        try response.json().array.compactMap { $0["username"]?.stringValue }
    }

    @Test func followersAndFollowingPageByNumericKeysPastTheFirstPage() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let fans = try await api.fans(5, of: "ana")
            let token = try await api.mastodonToken(ana)
            let path = "/api/v1/accounts/\(ana.id)/followers?limit=2"
            // Newest follow first, three pages of two, by anyone (anonymous too).
            #expect(try await Self.walk(api, path, token: token) == fans.reversed())
            #expect(try await Self.walk(api, path, token: nil) == fans.reversed())
            let fan0 = try await api.login("fan0")
            try await api.follow(fan0, "fan1")
            try await api.follow(fan0, "fan2")
            try await api.follow(fan0, "fan3")
            let fan0Token = try await api.mastodonToken(fan0)
            #expect(
                try await Self.walk(api, "/api/v1/accounts/\(fan0.id)/following?limit=2", token: fan0Token)
                    == ["fan3", "fan2", "fan1", "ana"])

            // The last follower shown unfollows before the next page: it goes on after them,
            // neither from the top nor past anyone.
            let first = try await api.mastodon(.get, path, token: token)
            #expect(try Self.names(first) == ["fan4", "fan3"])
            let unfollow = try await api.call(.delete, "/users/ana/follow", as: try await api.login("fan3"))
            #expect(unfollow.status == .ok)
            let second = try await api.mastodon(.get, try #require(try Self.next(first)), token: token)
            #expect(try Self.names(second) == ["fan2", "fan1"])
            // A newer page above a key: since_id and min_id.
            let keyOfFan2 = try #require(
                second.link("prev").flatMap(URLComponents.init(string:))?.queryItems?.first {
                    $0.name == "min_id"
                }?.value)
            let newer = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/followers?since_id=\(keyOfFan2)")
            #expect(try Self.names(newer) == ["fan4"])

            // Not an id: 422; an unknown account: 404.
            let bad = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/followers?max_id=abc", token: token)
            #expect(bad.status == .unprocessableContent)
            #expect(try bad.json()["error"]?.stringValue?.hasPrefix("Validation failed") == true)
            #expect(try await api.mastodon(.get, "/api/v1/accounts/999/following", token: token).status == .notFound)
        }
    }

    @Test func followRequestsPageWithNumericKeys() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let locked = try await api.mastodon(
                .patch, "/api/v1/accounts/update_credentials", token: token, form: [("locked", "true")])
            #expect(locked.status == .ok)
            let fans = try await api.fans(3, of: "ana")
            #expect(try await Self.walk(api, "/api/v1/follow_requests?limit=2", token: token) == fans.reversed())
            #expect(try await api.mastodon(.get, "/api/v1/follow_requests").status == .unauthorized)
        }
    }

    @Test func blocksAndMutesAreOnesOwnUntilUndone() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat, dan) = try await api.register("ana", "bea", "cat", "dan")
            let token = try await api.mastodonToken(ana)
            for (who, action) in [(bea, "block"), (cat, "block"), (dan, "mute"), (bea, "mute")] {
                let response = try await api.mastodon(.post, "/api/v1/accounts/\(who.id)/\(action)", token: token)
                #expect(response.status == .ok, "\(action): \(response.text)")
            }
            #expect(try await Self.walk(api, "/api/v1/blocks?limit=1", token: token) == ["cat", "bea"])
            #expect(try await Self.walk(api, "/api/v1/mutes?limit=1", token: token) == ["bea", "dan"])
            // Someone else's lists are theirs: bea blocks and mutes nobody.
            let beaToken = try await api.mastodonToken(bea)
            #expect(try Self.names(try await api.mastodon(.get, "/api/v1/blocks", token: beaToken)).isEmpty)
            #expect(try Self.names(try await api.mastodon(.get, "/api/v1/mutes", token: beaToken)).isEmpty)
            // `follow` grants reading them, as in Mastodon; `read:statuses` does not; nobody anonymous.
            let follow = try await api.mastodonToken(ana, scopes: "follow")
            #expect(try Self.names(try await api.mastodon(.get, "/api/v1/blocks", token: follow)) == ["cat", "bea"])
            let statuses = try await api.mastodonToken(ana, scopes: "read:statuses")
            #expect(try await api.mastodon(.get, "/api/v1/mutes", token: statuses).status == .forbidden)
            #expect(try await api.mastodon(.get, "/api/v1/blocks").status == .unauthorized)

            for (who, action) in [(bea, "unblock"), (dan, "unmute")] {
                #expect(
                    try await api.mastodon(.post, "/api/v1/accounts/\(who.id)/\(action)", token: token).status == .ok)
            }
            #expect(try Self.names(try await api.mastodon(.get, "/api/v1/blocks", token: token)) == ["cat"])
            #expect(try Self.names(try await api.mastodon(.get, "/api/v1/mutes", token: token)) == ["bea"])
        }
    }

    @Test func favouritesAndBookmarksNewestFirstAndOnlyReadable() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            let token = try await api.mastodonToken(ana)
            var posts: [String] = []
            for i in 0..<4 { posts.append(try await api.textPost(i == 3 ? cat : bea, "post \(i)").id) }
            // Liked and saved in another order than written.
            let order = [posts[1], posts[3], posts[0], posts[2]]
            for post in order {
                for action in ["favourite", "bookmark"] {
                    let response = try await api.mastodon(.post, "/api/v1/statuses/\(post)/\(action)", token: token)
                    #expect(response.status == .ok, "\(action): \(response.text)")
                }
            }
            for list in ["favourites", "bookmarks"] {
                let walked = try await Self.walk(api, "/api/v1/\(list)?limit=2", token: token, key: "id")
                #expect(walked == order.reversed(), "\(list)")
                #expect(try await api.mastodon(.get, "/api/v1/\(list)").status == .unauthorized)
                // Another person's are theirs (none).
                let beaToken = try await api.mastodonToken(bea)
                #expect(try await api.mastodon(.get, "/api/v1/\(list)", token: beaToken).json().array.isEmpty)
            }
            let first = try await api.mastodon(.get, "/api/v1/favourites", token: token)
            #expect(try first.json().array.first?["favourited"]?.bool == true)

            // cat blocks ana: cat's post is no longer ana's to read, nor in her lists.
            let catToken = try await api.mastodonToken(cat)
            #expect(try await api.mastodon(.post, "/api/v1/accounts/\(ana.id)/block", token: catToken).status == .ok)
            let readable = Array(order.reversed().filter { $0 != posts[3] })
            for list in ["favourites", "bookmarks"] {
                #expect(try await Self.walk(api, "/api/v1/\(list)?limit=2", token: token, key: "id") == readable)
            }
            // Unfavourited and unbookmarked: gone from the lists.
            for action in ["unfavourite", "unbookmark"] {
                #expect(
                    try await api.mastodon(.post, "/api/v1/statuses/\(posts[2])/\(action)", token: token).status == .ok)
            }
            for list in ["favourites", "bookmarks"] {
                #expect(
                    try await Self.walk(api, "/api/v1/\(list)?limit=2", token: token, key: "id")
                        == [posts[0], posts[1]])
            }
            let bad = try await api.mastodon(.get, "/api/v1/bookmarks?max_id=-3", token: token)
            #expect(bad.status == .unprocessableContent)
        }
    }

    @Test func featuredTagsAreEmpty() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let own = try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/featured_tags", token: token)
            #expect(own.status == .ok && own.text == "[]")
            #expect(try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/featured_tags").status == .ok)
            #expect(
                try await api.mastodon(.get, "/api/v1/accounts/12345/featured_tags", token: token).status == .notFound)
            let suggestions = try await api.mastodon(.get, "/api/v1/featured_tags/suggestions", token: token)
            #expect(suggestions.status == .ok && suggestions.text == "[]")
        }
    }

    @Test
    func reportsBecomePlazaReportsModeratorsSee() async throws {
        try await withApp { api async throws in
            let admin = try await api.admin("adm")
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            let rules = [InstancePatch.Rule(text: "Be kind"), InstancePatch.Rule(text: "No ads")]
            let set = try await api.call(.patch, "/admin/instance", as: admin, json: InstancePatch(rules: rules))
            let ruleIDs = try set.decode(InstanceInfo.self).rules.map(\.id)
            let post = try await api.textPost(bea, "buy my stuff").id
            let comment = try await api.call(
                .post, "/posts/\(post)/comments", as: bea, json: CreateCommentRequest(body: "really, buy it"))
            let commentID = try comment.decode(PlazaAPI.Comment.self).id
            let hidden = try await api.post(
                bea, CreatePostRequest(kind: .text, body: "for followers", audience: .followers)
            ).id
            let catPost = try await api.textPost(cat, "cat's").id
            let token = try await api.mastodonToken(ana)

            let filed = try await api.mastodon(
                .post, "/api/v1/reports", token: token,
                form: [
                    ("account_id", bea.id), ("status_ids[]", post), ("status_ids[]", commentID),
                    ("comment", "Adverts"), ("category", "violation"), ("rule_ids[]", ruleIDs[1]), ("forward", "true"),
                ])
            #expect(filed.status == .ok, "\(filed.text)")
            let report = try filed.json()
            #expect(report["category"]?.stringValue == "violation")
            #expect(report["comment"]?.stringValue == "Adverts")
            #expect(report["action_taken"]?.bool == false)
            #expect(report["forwarded"]?.bool == false)
            #expect(report["status_ids"]?.array.compactMap(\.stringValue) == [post, commentID])
            #expect(report["rule_ids"]?.array.compactMap(\.stringValue) == [ruleIDs[1]])
            #expect(report["target_account"]?["id"]?.stringValue == bea.id)
            #expect(report["created_at"]?.stringValue?.isEmpty == false)

            // The moderators' queue: one report on each status, for breaking the rule cited.
            let queue = try await api.get("/admin/reports", as: admin).decode(Page<Report>.self).items
            let onPost = try #require(queue.first { $0.targetType == .post && $0.targetId == post })
            #expect(onPost.id == report["id"]?.stringValue)
            #expect(onPost.reason == .rules && onPost.rules.map(\.text) == ["No ads"] && onPost.note == "Adverts")
            #expect(onPost.reporter?.username == "ana" && onPost.targetUser?.username == "bea")
            let onComment = try #require(queue.first { $0.targetType == .comment && $0.targetId == commentID })
            #expect(onComment.reason == .rules)

            // An account alone, each category to its reason.
            for (category, reason) in [("spam", ReportReason.spam), ("legal", .illegal), ("other", .other)] {
                let response = try await api.mastodon(
                    .post, "/api/v1/reports", token: try await api.mastodonToken(cat),
                    form: [("account_id", bea.id), ("category", category)])
                #expect(response.status == .ok, "\(category): \(response.text)")
                #expect(try response.json()["category"]?.stringValue == category)
                let id = try #require(try response.json()["id"]?.stringValue)
                let open = try await api.get("/admin/reports", as: admin).decode(Page<Report>.self).items
                let filed = try #require(open.first { $0.id == id })
                #expect(filed.targetType == .user && filed.targetId == bea.id && filed.reason == reason)
                // Resolved, so that the next category files a new report.
                let resolved = try await api.call(
                    .patch, "/admin/reports/\(id)", as: admin, json: ResolveReportRequest(action: .dismiss))
                #expect(resolved.status == .ok)
            }

            // A status ana cannot read, another account's, or no such account: not found.
            for (account, status) in [(bea.id, hidden), (bea.id, catPost), ("424242", post), (bea.id, "abc")] {
                let response = try await api.mastodon(
                    .post, "/api/v1/reports", token: token, form: [("account_id", account), ("status_ids[]", status)])
                #expect(response.status == .notFound, "\(account) \(status): \(response.text)")
            }
            // Bad input: 422 in Mastodon's words.
            for fields in [
                [("category", "rude")], [("category", "violation"), ("rule_ids[]", "999")],
                [("comment", String(repeating: "x", count: 1001))], [("category", "violation")],
            ] {
                let response = try await api.mastodon(
                    .post, "/api/v1/reports", token: token, form: [("account_id", bea.id)] + fields)
                #expect(response.status == .unprocessableContent, "\(fields): \(response.text)")
                #expect(try response.json()["error"]?.stringValue?.hasPrefix("Validation failed") == true)
            }
            let me = try await api.mastodon(.post, "/api/v1/reports", token: token, form: [("account_id", ana.id)])
            #expect(me.status == .unprocessableContent)
            let readOnly = try await api.mastodonToken(ana, scopes: "read")
            #expect(
                try await api.mastodon(.post, "/api/v1/reports", token: readOnly, form: [("account_id", bea.id)]).status
                    == .forbidden)
        }
    }
}
