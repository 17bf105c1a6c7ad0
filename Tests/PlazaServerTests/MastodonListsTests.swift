import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// Mastodon's lists (a person's lists of accounts they follow, each with a timeline), account
/// notes and familiar followers, over `ListActions`, `AccountNoteActions` and `PeopleStore`.
@Suite("Mastodon lists, notes and familiar followers")
struct MastodonListsTests {
    /// The ids of a page of accounts or lists.
    static func ids(_ response: TestResponse) throws -> [String] {
        try response.json().array.compactMap { $0["id"]?.stringValue }
    }

    /// The path (with its query) of a `Link` target, to ask the test client for it.
    static func path(_ link: String?) -> String? {
        guard let link, let url = URLComponents(string: link) else { return nil }
        return url.path + (url.query.map { "?" + $0 } ?? "")
    }

    /// Every status of a timeline, page after page by the `Link` header.
    static func walk(_ api: TestAPI, _ first: String, token: String) async throws -> [JSONValue] {
        var statuses: [JSONValue] = []
        var next: String? = first
        while let path = next {
            let page = try await api.mastodon(.get, path, token: token)
            #expect(page.status == .ok, "\(path): \(page.text)")
            let items = try page.json().array
            statuses += items
            next = items.isEmpty ? nil : Self.path(page.link("next"))
            #expect(statuses.count <= 50)
        }
        return statuses
    }

    static func create(_ api: TestAPI, _ token: String, _ form: [(String, String)]) async throws -> TestResponse {
        try await api.mastodon(.post, "/api/v1/lists", token: token, form: form)
    }

    static func status(_ api: TestAPI, _ token: String, _ text: String, visibility: String = "public")
        async throws -> String
    {
        let made = try await api.mastodon(
            .post, "/api/v1/statuses", token: token, form: [("status", text), ("visibility", visibility)])
        return try #require(try made.json()["id"]?.stringValue)
    }

    @Test func aListIsItsOwnersAlone() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let anaToken = try await api.mastodonToken(ana)
            let beaToken = try await api.mastodonToken(bea)
            let made = try await Self.create(api, anaToken, [("title", "Friends")])
            #expect(made.status == .ok, "\(made.text)")
            let list = try made.json()
            let id = try #require(list["id"]?.stringValue)
            #expect(list["title"]?.stringValue == "Friends")
            #expect(list["replies_policy"]?.stringValue == "list")
            #expect(list["exclusive"]?.bool == false)

            let changed = try await api.mastodon(
                .put, "/api/v1/lists/\(id)", token: anaToken,
                json: #"{"title":"Pals","replies_policy":"followed","exclusive":true}"#)
            #expect(try changed.json()["title"]?.stringValue == "Pals")
            #expect(try changed.json()["replies_policy"]?.stringValue == "followed")
            #expect(try changed.json()["exclusive"]?.bool == true)
            #expect(try await api.mastodon(.get, "/api/v1/lists/\(id)", token: anaToken).json() == changed.json())
            #expect(try Self.ids(try await api.mastodon(.get, "/api/v1/lists", token: anaToken)) == [id])

            // Bea has no such list, and cannot tell it from one that does not exist.
            #expect(try Self.ids(try await api.mastodon(.get, "/api/v1/lists", token: beaToken)).isEmpty)
            let theirs: [(HTTPRequest.Method, String)] = [
                (.get, "/api/v1/lists/\(id)"), (.put, "/api/v1/lists/\(id)"), (.delete, "/api/v1/lists/\(id)"),
                (.get, "/api/v1/lists/\(id)/accounts"), (.post, "/api/v1/lists/\(id)/accounts"),
                (.delete, "/api/v1/lists/\(id)/accounts"), (.get, "/api/v1/timelines/list/\(id)"),
            ]
            for (method, path) in theirs {
                let refused = try await api.mastodon(
                    method, path, token: beaToken, form: [("title", "mine"), ("account_ids[]", ana.id)])
                #expect(refused.status == .notFound, "\(method) \(path)")
                #expect(try refused.json()["error"]?.stringValue == "Record not found", "\(method) \(path)")
                #expect(try await api.mastodon(method, path).status == .unauthorized, "\(method) \(path)")
            }
            #expect(
                try await api.mastodon(.get, "/api/v1/lists/\(id)", token: anaToken).json()["title"]?.stringValue
                    == "Pals")
            #expect(try await api.mastodon(.get, "/api/v1/lists/abc", token: anaToken).status == .notFound)
            #expect(try await api.mastodon(.get, "/api/v1/timelines/list/-1", token: anaToken).status == .notFound)

            // Bad input: 422 in Mastodon's words.
            for form in [
                [("title", "")], [("title", "  ")], [("title", String(repeating: "x", count: 101))],
                [("title", "ok"), ("replies_policy", "everyone")],
            ] {
                let refused = try await Self.create(api, anaToken, form)
                #expect(refused.status == .unprocessableContent, "\(form)")
                #expect(try refused.json()["error"]?.stringValue?.hasPrefix("Validation failed: ") == true)
            }
            #expect(
                try await Self.create(api, anaToken, [("title", String(repeating: "é", count: 100))]).status == .ok)
            #expect(
                try await api.mastodon(
                    .put, "/api/v1/lists/\(id)", token: anaToken, form: [("replies_policy", "all")]
                ).status == .unprocessableContent)
            #expect(
                try await api.mastodon(
                    .post, "/api/v1/lists/\(id)/accounts", token: anaToken, form: [("account_ids[]", "x1")]
                ).status == .unprocessableContent)
            #expect(
                try await api.mastodon(.post, "/api/v1/lists/\(id)/accounts", token: anaToken, form: []).status
                    == .unprocessableContent)
            // A token without the lists' scopes.
            let readOnly = try await api.mastodonToken(ana, scopes: "read:statuses")
            #expect(try await api.mastodon(.get, "/api/v1/lists", token: readOnly).status == .forbidden)

            #expect(try await api.mastodon(.delete, "/api/v1/lists/\(id)", token: anaToken).json() == .object([:]))
            #expect(try await api.mastodon(.get, "/api/v1/lists/\(id)", token: anaToken).status == .notFound)
        }
    }

    @Test func aPersonHasFiftyListsAndAListAThousandAccounts() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            let token = try await api.mastodonToken(ana)
            for n in 0..<ListActions.maxPerPerson {
                #expect(try await Self.create(api, token, [("title", "list \(n)")]).status == .ok)
            }
            let refused = try await Self.create(api, token, [("title", "one more")])
            #expect(refused.status == .unprocessableContent)
            #expect(try refused.json()["error"]?.stringValue?.contains("50 lists") == true)
            #expect(try Self.ids(try await api.mastodon(.get, "/api/v1/lists", token: token)).count == 50)

            // The accounts' bound, checked under the owner's lock (here with a bound of one).
            try await api.follow(ana, "bea")
            try await api.follow(ana, "cat")
            let owner = try #require(Int64(ana.id))
            let (beaID, catID) = (try #require(Int64(bea.id)), try #require(Int64(cat.id)))
            try await api.withDatabase { db in
                let store = ListStore(db: db, ids: IDGenerator(node: 1))
                let list = try #require(try await store.lists(of: owner).first)
                #expect(try await store.add([beaID], to: list.id, user: owner, limit: 1) == .added)
                #expect(try await store.add([beaID], to: list.id, user: owner, limit: 1) == .added, "already in")
                #expect(try await store.add([catID], to: list.id, user: owner, limit: 1) == .tooMany)
                #expect(try await store.add([catID], to: list.id, user: catID, limit: 1) == .noList)
            }
        }
    }

    @Test func aListHoldsFollowedAccountsAndItsTimelineTheirPosts() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat, dan) = try await api.register("ana", "bea", "cat", "dan")
            try await api.follow(ana, "bea")
            try await api.follow(ana, "cat")
            let (anaToken, beaToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bea))
            let (catToken, danToken) = (try await api.mastodonToken(cat), try await api.mastodonToken(dan))
            let id = try #require(try await Self.create(api, anaToken, [("title", "Close")]).json()["id"]?.stringValue)
            let accounts = "/api/v1/lists/\(id)/accounts"

            // Only people Ana follows.
            let stranger = try await api.mastodon(.post, accounts, token: anaToken, form: [("account_ids[]", dan.id)])
            #expect(stranger.status == .unprocessableContent)
            #expect(try stranger.json()["error"]?.stringValue?.hasPrefix("Validation failed: ") == true)
            let added = try await api.mastodon(
                .post, accounts, token: anaToken, form: [("account_ids[]", bea.id), ("account_ids[]", cat.id)])
            #expect(added.status == .ok, "\(added.text)")

            // Highest account id first, a page at a time by the Link header's account ids.
            let first = try await api.mastodon(.get, accounts + "?limit=1", token: anaToken)
            #expect(try Self.ids(first) == [cat.id])
            let next = try #require(first.link("next"))
            #expect(next.contains("max_id=\(cat.id)"))
            let second = try await api.mastodon(.get, try #require(Self.path(next)), token: anaToken)
            #expect(try Self.ids(second) == [bea.id])
            #expect(second.link("next") == nil)
            #expect(
                try Self.ids(try await api.mastodon(.get, accounts + "?limit=0", token: anaToken)) == [cat.id, bea.id])
            #expect(
                try Self.ids(try await api.mastodon(.get, accounts + "?since_id=\(bea.id)", token: anaToken)) == [
                    cat.id
                ])
            #expect(
                try await api.mastodon(.get, accounts + "?max_id=zz", token: anaToken).status == .unprocessableContent)
            #expect(
                try Self.ids(try await api.mastodon(.get, "/api/v1/accounts/\(bea.id)/lists", token: anaToken)) == [id])
            #expect(
                try Self.ids(try await api.mastodon(.get, "/api/v1/accounts/\(dan.id)/lists", token: anaToken)) == [])
            #expect(
                try Self.ids(try await api.mastodon(.get, "/api/v1/accounts/\(ana.id)/lists", token: beaToken)) == [])

            // The list's timeline: Bea's and Cat's posts (followers-only ones too) and boosts,
            // not Dan's nor Ana's own, newest first, past the first page.
            var expected: [String] = []
            for n in 1...3 { expected.append(try await Self.status(api, beaToken, "bea \(n)")) }
            expected.append(try await Self.status(api, catToken, "cat private", visibility: "private"))
            let danPost = try await Self.status(api, danToken, "dan")
            _ = try await Self.status(api, anaToken, "ana")
            expected.append(try await Self.status(api, catToken, "cat"))
            let boost = try await api.mastodon(.post, "/api/v1/statuses/\(danPost)/reblog", token: beaToken)
            #expect(boost.status == .ok)
            let timeline = try await Self.walk(api, "/api/v1/timelines/list/\(id)?limit=2", token: anaToken)
            #expect(timeline.count == 6)
            #expect(timeline.first?["reblog"]?["id"]?.stringValue == danPost, "Bea's boost, newest")
            #expect(timeline.dropFirst().compactMap { $0["id"]?.stringValue } == Array(expected.reversed()))

            // Taken out: Cat's posts leave the timeline.
            #expect(
                try await api.mastodon(.delete, accounts, token: anaToken, form: [("account_ids[]", cat.id)]).status
                    == .ok)
            let fewer = try await Self.walk(api, "/api/v1/timelines/list/\(id)", token: anaToken)
            #expect(fewer.dropFirst().compactMap { $0["id"]?.stringValue } == Array(expected.prefix(3).reversed()))

            // An unfollow takes Bea out of Ana's lists; a block either way takes Cat out.
            #expect(try await api.mastodon(.post, "/api/v1/accounts/\(bea.id)/unfollow", token: anaToken).status == .ok)
            #expect(try Self.ids(try await api.mastodon(.get, accounts, token: anaToken)).isEmpty)
            #expect(
                try await api.mastodon(.post, accounts, token: anaToken, form: [("account_ids[]", cat.id)]).status
                    == .ok)
            #expect(try Self.ids(try await api.mastodon(.get, accounts, token: anaToken)) == [cat.id])
            #expect(try await api.mastodon(.post, "/api/v1/accounts/\(ana.id)/block", token: catToken).status == .ok)
            #expect(try Self.ids(try await api.mastodon(.get, accounts, token: anaToken)).isEmpty)
            #expect(try await Self.walk(api, "/api/v1/timelines/list/\(id)", token: anaToken).isEmpty)
        }
    }

    @Test func anExclusiveListsAccountsLeaveTheHomeFeed() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            try await api.follow(ana, "bea")
            try await api.follow(ana, "cat")
            let anaToken = try await api.mastodonToken(ana)
            let (beaToken, catToken) = (try await api.mastodonToken(bea), try await api.mastodonToken(cat))
            let beaPost = try await Self.status(api, beaToken, "bea")
            let catPost = try await Self.status(api, catToken, "cat")
            let boost = try await api.mastodon(.post, "/api/v1/statuses/\(catPost)/reblog", token: beaToken)
            #expect(boost.status == .ok)
            func home() async throws -> [String] {
                try await api.mastodon(.get, "/api/v1/timelines/home", token: anaToken).json().array.compactMap {
                    $0["reblog"]?["id"]?.stringValue.map { "boost of \($0)" } ?? $0["id"]?.stringValue
                }
            }
            func plazaHome() async throws -> [String] {
                try await api.get("/feed/home", as: ana).decode(Page<Post>.self).items.map(\.id)
            }
            #expect(try await home() == [catPost, beaPost], "a followed author's post is not boosted in again")
            let id = try #require(
                try await Self.create(api, anaToken, [("title", "Bea"), ("exclusive", "true")]).json()["id"]?
                    .stringValue)
            #expect(
                try await api.mastodon(
                    .post, "/api/v1/lists/\(id)/accounts", token: anaToken, form: [("account_ids[]", bea.id)]
                ).status == .ok)
            // Bea's post and boost are in the list, no longer at home, on every door.
            #expect(try await home() == [catPost])
            #expect(try await plazaHome() == [catPost])
            let listed = try await api.mastodon(.get, "/api/v1/timelines/list/\(id)", token: anaToken).json().array
            #expect(listed.compactMap { $0["id"]?.stringValue } == [beaPost])
            // Not exclusive any more: back home.
            #expect(
                try await api.mastodon(.put, "/api/v1/lists/\(id)", token: anaToken, form: [("exclusive", "false")])
                    .status == .ok)
            #expect(try await home() == [catPost, beaPost])
            #expect(try await plazaHome() == [catPost, beaPost])
        }
    }

    @Test func aNoteIsItsAuthorsAlone() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let (anaToken, beaToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bea))
            let note = "/api/v1/accounts/\(bea.id)/note"
            let set = try await api.mastodon(.post, note, token: anaToken, form: [("comment", "Met at the café")])
            #expect(set.status == .ok, "\(set.text)")
            #expect(try set.json()["id"]?.stringValue == bea.id)
            #expect(try set.json()["note"]?.stringValue == "Met at the café")
            let mine = try await api.mastodon(
                .get, "/api/v1/accounts/relationships?id[]=\(bea.id)&id[]=\(ana.id)", token: anaToken
            ).json().array
            #expect(mine.map { $0["note"]?.stringValue } == ["Met at the café", ""])
            // A follow's answer carries it too; Bea never sees it.
            let followed = try await api.mastodon(.post, "/api/v1/accounts/\(bea.id)/follow", token: anaToken)
            #expect(try followed.json()["note"]?.stringValue == "Met at the café")
            let theirs = try await api.mastodon(
                .get, "/api/v1/accounts/relationships?id[]=\(ana.id)", token: beaToken
            ).json().array
            #expect(theirs.first?["note"]?.stringValue == "")

            let long = try await api.mastodon(
                .post, note, token: anaToken, form: [("comment", String(repeating: "n", count: 2_001))])
            #expect(long.status == .unprocessableContent)
            #expect(
                try await api.mastodon(
                    .post, note, token: anaToken, form: [("comment", String(repeating: "n", count: 2_000))]
                ).status == .ok)
            let cleared = try await api.mastodon(.post, note, token: anaToken, form: [("comment", "")])
            #expect(try cleared.json()["note"]?.stringValue == "")
            #expect(try await api.mastodon(.post, note, form: [("comment", "x")]).status == .unauthorized)
            #expect(
                try await api.mastodon(.post, "/api/v1/accounts/999999/note", token: anaToken, form: [("comment", "x")])
                    .status == .notFound)
            #expect(
                try await api.mastodon(.post, "/api/v1/accounts/abc/note", token: anaToken, form: [("comment", "x")])
                    .status == .notFound)
        }
    }

    @Test func familiarFollowersAreThePeopleIFollowWhoFollowThem() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat, dan, eve) = try await api.register("ana", "bea", "cat", "dan", "eve")
            try await api.follow(ana, "bea")
            try await api.follow(ana, "cat")
            try await api.follow(bea, "dan")
            try await api.follow(cat, "dan")
            try await api.follow(eve, "dan")
            try await api.follow(eve, "cat")
            let token = try await api.mastodonToken(ana)
            let path = "/api/v1/accounts/familiar_followers?id[]=\(dan.id)&id[]=\(eve.id)&id[]=\(cat.id)"
            func familiar() async throws -> [String: [String]] {
                let answer = try await api.mastodon(.get, path, token: token).json().array
                #expect(answer.map { $0["id"]?.stringValue } == [dan.id, eve.id, cat.id], "in the order asked")
                var byID: [String: [String]] = [:]
                for item in answer {
                    byID[item["id"]?.stringValue ?? ""] = item["accounts"]?.array.compactMap { $0["acct"]?.stringValue }
                }
                return byID
            }
            #expect(try await familiar() == [dan.id: ["bea", "cat"], eve.id: [], cat.id: []])
            // Someone hidden by a block is left out.
            let catToken = try await api.mastodonToken(cat)
            #expect(try await api.mastodon(.post, "/api/v1/accounts/\(ana.id)/block", token: catToken).status == .ok)
            #expect(try await familiar() == [dan.id: ["bea"], eve.id: [], cat.id: []])
            #expect(
                try await api.mastodon(.get, "/api/v1/accounts/familiar_followers?id[]=x", token: token).status
                    == .unprocessableContent)
            #expect(try await api.mastodon(.get, path).status == .unauthorized)
        }
    }

    @Test func listsGoWithTheirPeopleAndIntoTheExport() async throws {
        try await withApp { api async throws in
            let (ana, bea, cat) = try await api.register("ana", "bea", "cat")
            try await api.follow(ana, "bea")
            try await api.follow(ana, "cat")
            try await api.follow(bea, "cat")
            let (anaToken, beaToken) = (try await api.mastodonToken(ana), try await api.mastodonToken(bea))
            let id = try #require(
                try await Self.create(api, anaToken, [("title", "Pals"), ("exclusive", "true")]).json()["id"]?
                    .stringValue)
            #expect(
                try await api.mastodon(
                    .post, "/api/v1/lists/\(id)/accounts", token: anaToken,
                    form: [("account_ids[]", bea.id), ("account_ids[]", cat.id)]
                ).status == .ok)
            let beaList = try #require(
                try await Self.create(api, beaToken, [("title", "Cat")]).json()["id"]?.stringValue)
            #expect(
                try await api.mastodon(
                    .post, "/api/v1/lists/\(beaList)/accounts", token: beaToken, form: [("account_ids[]", cat.id)]
                ).status == .ok)

            #expect(
                try await api.mastodon(
                    .post, "/api/v1/accounts/\(bea.id)/note", token: anaToken, form: [("comment", "Lends books")]
                ).status == .ok)
            let export = try await api.get("/me/export", as: ana)
            let files = try AccountExportTests.entries(Array(export.body.readableBytesView))
            let notes = try AccountExportTests.json(files["ana-plaza/notes.json"]).array
            #expect(notes.map { $0["username"]?.stringValue } == ["bea"])
            #expect(notes.first?["note"]?.stringValue == "Lends books")
            let lists = try AccountExportTests.json(files["ana-plaza/lists.json"]).array
            #expect(lists.count == 1)
            #expect(lists.first?["title"]?.stringValue == "Pals")
            #expect(lists.first?["exclusive"] == .bool(true))
            #expect(lists.first?["members"] == .array([.string("bea"), .string("cat")]))

            // Bea's account goes: her lists with it, and she leaves Ana's.
            #expect(try await AccountDeletionTests.deleteMe(api, bea).status == .accepted)
            #expect(try await AccountDeletionTests.purgeDue(api) == 1)
            #expect(
                try Self.ids(try await api.mastodon(.get, "/api/v1/lists/\(id)/accounts", token: anaToken)) == [cat.id])
            #expect(try await AccountDeletionTests.count(api, "SELECT COUNT(*) AS n FROM lists") == 1)
            #expect(try await AccountDeletionTests.count(api, "SELECT COUNT(*) AS n FROM list_accounts") == 1)
        }
    }
}
