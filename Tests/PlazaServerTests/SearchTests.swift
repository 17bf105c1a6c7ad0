import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Search")
struct SearchTests {
    func search(_ api: TestAPI, _ query: String, as account: Account? = nil) async throws -> [String] {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return try await api.page("/search/posts?q=" + encoded, as: account, of: Post.self).items.compactMap(\.title)
    }

    @Test func searchTextKeepsOnlyWordsPhrasesAndAFinalPrefix() {
        #expect(SearchText("Linear alg")?.terms == [.init(words: ["linear"]), .init(words: ["alg"], prefix: true)])
        #expect(
            SearchText("\"eigen values\" matrix ")?.terms == [
                .init(words: ["eigen", "values"]), .init(words: ["matrix"]),
            ])
        #expect(
            SearchText("a NEAR(b) OR c* -d ^e")?.fts5(in: .all)
                == #""a" AND "near" AND "b" AND "or" AND "c" AND "d" AND "e"*"#)
        #expect(SearchText("caf\u{e9} \"x")?.tsquery(in: .title) == "'cafe':A & 'x':A")
        #expect(SearchText("vector spa")?.tsquery(in: .all) == "'vector' & 'spa':*")
        #expect(SearchText("\"two words\"")?.fts5(in: .space) == #"{spaces} : ("two words")"#)
        #expect(SearchText("*** \"\" '; --") == nil)
        #expect(SearchText(String(repeating: "word ", count: 2_000))?.terms.count == SearchText.maxTerms)
    }

    @Test func wordsMatchAllTheLastAsAPrefixPhrasesInOrderRankedThenNewest() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.post(
                ana, CreatePostRequest(kind: .text, title: "Eigen values", body: "A matrix has eigen values"))
            _ = try await api.post(
                ana, CreatePostRequest(kind: .text, title: "Values of a matrix", body: "eigen decomposition"))
            _ = try await api.post(
                ana, CreatePostRequest(kind: .text, title: "Linear algebra", body: "vectors and matrices"))
            _ = try await api.post(ana, CreatePostRequest(kind: .text, title: "Café corner", body: "Crème brûlée"))
            let prefix = try await search(api, "matri")
            #expect(
                Set(prefix) == ["Linear algebra", "Values of a matrix", "Eigen values"], "the last word is a prefix")
            #expect(prefix.first == "Values of a matrix", "a title hit ranks first")
            #expect(try await search(api, "matrix eigen").sorted() == ["Eigen values", "Values of a matrix"])
            #expect(try await search(api, "\"eigen values\"") == ["Eigen values"], "a phrase keeps its order")
            #expect(try await search(api, "\"values eigen\"").isEmpty)
            #expect(try await search(api, "eigen")[0] == "Eigen values", "a title hit ranks first")
            #expect(try await search(api, "cafe creme") == ["Café corner"], "accents are ignored")
            #expect(try await search(api, "nothing here").isEmpty)
        }
    }

    @Test func fieldsSpacesAndKindsFilter() async throws {
        try await withApp { api async throws in
            let (ana, grace) = try await api.register("ana", "grace_hopper")
            try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "cs101", name: "Compilers"))
            _ = try await api.post(ana, CreatePostRequest(kind: .text, title: "About compilers", body: "parsing"))
            _ = try await api.post(
                grace, CreatePostRequest(kind: .text, title: "Debugging", body: "found a moth", spaces: ["cs101"]))
            _ = try await api.post(
                ana,
                CreatePostRequest(kind: .activity, title: "Read about compilers", activity: ActivityInput(type: "Read"))
            )
            let q = "/search/posts?q="
            #expect(
                try await api.page(q + "compilers&in=title", of: Post.self).items.compactMap(\.title).sorted() == [
                    "About compilers", "Read about compilers",
                ])
            #expect(
                try await api.page(q + "compilers&in=space", of: Post.self).items.compactMap(\.title) == ["Debugging"])
            #expect(try await api.page(q + "grace&in=author", of: Post.self).items.compactMap(\.title) == ["Debugging"])
            #expect(try await api.page(q + "hopp&in=author", of: Post.self).items.compactMap(\.title) == ["Debugging"])
            #expect(try await api.page(q + "moth&in=title", of: Post.self).items.isEmpty)
            #expect(try await api.page(q + "moth&in=body", of: Post.self).items.compactMap(\.title) == ["Debugging"])
            #expect(
                try await api.page(q + "compilers&kind=activity", of: Post.self).items.compactMap(\.title) == [
                    "Read about compilers"
                ])
            #expect(
                try await api.page(q + "compilers&space=cs101", of: Post.self).items.compactMap(\.title) == [
                    "Debugging"
                ])
            let unknown = try await api.get(q + "x&space=nowhere")
            #expect(unknown.status == .unprocessableContent && unknown.error?.field == "space")
            let field = try await api.get(q + "x&in=everything")
            #expect(field.status == .unprocessableContent && field.error?.field == "in")
        }
    }

    @Test func theIndexFollowsEditsDeletesRenamesAndSpaces() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "garden", name: "Gardening"))
            let post = try await api.post(ana, CreatePostRequest(kind: .text, title: "Tomatoes", body: "planted today"))
            try await api.call(.patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(title: .set("Peppers")))
            #expect(try await search(api, "tomatoes").isEmpty)
            #expect(try await search(api, "peppers") == ["Peppers"])
            try await api.call(.patch, "/posts/\(post.id)", as: ana, json: UpdatePostRequest(spaces: ["garden"]))
            #expect(
                try await api.page("/search/posts?q=gardening&in=space", of: Post.self).items.map(\.id) == [post.id])
            // Each search below is also run just before the change that makes it match: its kept
            // ranking must not outlive that change.
            #expect(try await api.page("/search/posts?q=allotment", of: Post.self).items.isEmpty)
            try await api.call(.patch, "/spaces/garden", as: ana, json: UpdateSpaceRequest(name: "Allotment"))
            #expect(try await api.page("/search/posts?q=allotment", of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.page("/search/posts?q=verde&in=author", of: Post.self).items.isEmpty)
            try await api.call(.patch, "/me", as: ana, json: UpdateMeRequest(displayName: "Ana Verde"))
            #expect(try await api.page("/search/posts?q=verde&in=author", of: Post.self).items.map(\.id) == [post.id])
            // Likes update the post row but leave the index alone; the post stays findable.
            try await api.call(.put, "/posts/\(post.id)/like", as: ana)
            #expect(try await search(api, "peppers") == ["Peppers"])
            try await api.call(.delete, "/posts/\(post.id)", as: ana)
            #expect(try await search(api, "peppers").isEmpty)
        }
    }

    /// A word search is ranked once and kept for a second: posts written, edited or deleted
    /// show at once, and each viewer's blocks and cursor apply to the kept ranking.
    @Test func keptRankingsFollowWritesAndEachViewersBlocks() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(try await search(api, "quince").isEmpty)
            let jam = try await api.post(ana, CreatePostRequest(kind: .text, title: "Quince jam"))
            #expect(try await search(api, "quince") == ["Quince jam"])
            let tart = try await api.post(bob, CreatePostRequest(kind: .text, title: "Quince tart"))
            #expect(try await search(api, "quince") == ["Quince tart", "Quince jam"])  // equal scores: newer first
            try await api.call(.put, "/users/bob/block", as: ana)
            #expect(try await search(api, "quince", as: ana) == ["Quince jam"])
            #expect(try await search(api, "quince", as: bob) == ["Quince tart"])
            #expect(try await search(api, "quince") == ["Quince tart", "Quince jam"])
            let first = try await api.page("/search/posts?q=quince&limit=1", of: Post.self)
            let second = try await api.page(
                "/search/posts?q=quince&limit=1&cursor=\(first.nextCursor ?? "")", of: Post.self)
            #expect(
                first.items.map(\.id) == [tart.id] && second.items.map(\.id) == [jam.id] && second.nextCursor == nil)
            try await api.call(.patch, "/posts/\(jam.id)", as: ana, json: UpdatePostRequest(title: .set("Plum jam")))
            #expect(try await search(api, "quince") == ["Quince tart"])
            try await api.call(.delete, "/posts/\(tart.id)", as: bob)
            #expect(try await search(api, "quince").isEmpty)
        }
    }

    @Test func pagesFillUpPastBlockedPeoplesPosts() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            var anas: [String] = []
            for i in 0..<3 {
                anas.append(try await api.post(ana, CreatePostRequest(kind: .text, title: "fig \(i)")).id)
            }
            for i in 0..<7 { _ = try await api.post(bob, CreatePostRequest(kind: .text, title: "fig \(i)")) }
            try await api.call(.put, "/users/bob/block", as: carol)
            let first = try await api.page("/search/posts?q=fig&limit=2", as: carol, of: Post.self)
            let second = try await api.page(
                "/search/posts?q=fig&limit=2&cursor=\(first.nextCursor ?? "")", as: carol, of: Post.self)
            #expect(first.items.count == 2 && second.items.count == 1 && second.nextCursor == nil)
            #expect(Set((first.items + second.items).map(\.id)) == Set(anas))
        }
    }

    @Test func aKeptRankingIsDroppedWhenAWriteRacesIt() {
        let cache = SearchWindowCache(ttlMillis: 1_000, capacity: 2)
        let hit = SearchWindowCache.Hit(id: 1, score: -1)
        let before = cache.get("a", now: 0)
        #expect(before.hits == nil)
        cache.clear()  // a post was written while "a" was being ranked
        cache.put("a", [hit], generation: before.generation, now: 0)
        #expect(cache.get("a", now: 0).hits == nil)
        let now = cache.get("a", now: 0)
        cache.put("a", [hit], generation: now.generation, now: 0)
        #expect(cache.get("a", now: 999).hits == [hit])
        #expect(cache.get("a", now: 1_000).hits == nil)
        cache.put("b", [], generation: now.generation, now: 500)
        cache.put("c", [hit], generation: now.generation, now: 1_200)  // full: "a" has expired and makes room
        #expect(cache.get("b", now: 1_200).hits == [] && cache.get("c", now: 1_200).hits == [hit])
        cache.put("d", [hit], generation: now.generation, now: 1_300)  // full of live ones: the oldest, "b", goes
        #expect(
            cache.get("b", now: 1_300).hits == nil && cache.get("c", now: 1_300).hits == [hit]
                && cache.get("d", now: 1_300).hits == [hit])
    }

    @Test func blockedPeoplesPostsAreNotFound() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            _ = try await api.post(bob, CreatePostRequest(kind: .text, title: "Bob on rockets"))
            #expect(try await search(api, "rockets", as: ana) == ["Bob on rockets"])
            try await api.call(.put, "/users/ana/block", as: bob)
            #expect(try await search(api, "rockets", as: ana).isEmpty)
            #expect(try await search(api, "rockets") == ["Bob on rockets"])
        }
    }

    @Test func pagingWalksEveryMatchOnce() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for i in 0..<13 {
                _ = try await api.post(
                    ana,
                    CreatePostRequest(
                        kind: .text, title: "note \(i)", body: String(repeating: "kiwi ", count: 1 + i % 4)))
            }
            let seen = try await api.walk("/search/posts?q=kiwi&limit=4", of: Post.self).map(\.id)
            #expect(seen.count == 13 && Set(seen).count == 13)
            let feedCursor = try await api.page("/feed/global?limit=1", of: Post.self).nextCursor!
            #expect(try await api.get("/search/posts?q=kiwi&cursor=\(feedCursor)").status == .badRequest)
        }
    }

    @Test func accountsByUsernameOrDisplayNamePrefix() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana_lima")
            _ = try await api.register("grace")
            let bob = try await api.register("bob")
            try await api.call(.patch, "/me", as: bob, json: UpdateMeRequest(displayName: "Bob Ânalyst"))
            func names(_ q: String, as account: Account? = nil) async throws -> [String] {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await api.page("/search/users?q=\(encoded)", as: account, of: User.self).items.map(
                    \.username)
            }
            #expect(try await names("ana") == ["ana_lima", "bob"], "a username hit ranks above a display-name hit")
            #expect(try await names("gra") == ["grace"])
            #expect(try await names("bob anal") == ["bob"])
            #expect(try await names("zed").isEmpty)
            let seen = try await api.page("/search/users?q=gra", as: ana, of: User.self).items
            #expect(seen.first?.viewer?.following == false, "with the viewer's relation")
            try await api.call(.put, "/users/ana_lima/block", as: bob)
            #expect(try await names("ana", as: ana) == ["ana_lima"], "people with a block are not found")
            let first = try await api.page("/search/users?q=ana&limit=1", of: User.self)
            #expect(
                try await api.page("/search/users?q=ana&limit=1&cursor=\(first.nextCursor!)", of: User.self).items.map(
                    \.username) == ["bob"])
            #expect(try await api.get("/search/users?q=%22%22").status == .unprocessableContent)
        }
    }

    @Test func savedItemsAreSearchedForTheirOwnerOnly() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let soup = try await api.post(bob, CreatePostRequest(kind: .text, title: "Tomato soup", body: "with basil"))
            let crate = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "Food"))
                .decode(SavedCollection.self)
            try await api.call(
                .post, "/collections/\(crate.id)/items", as: ana,
                json: SaveItemRequest(postId: soup.id, note: "for Sunday"))
            try await api.call(
                .post, "/collections/\(crate.id)/items", as: ana,
                json: SaveItemRequest(url: "https://192.0.2.9/pasta-recipes", note: "100% durum"))
            func found(_ q: String, as account: Account) async throws -> [String] {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await api.page("/search/saved?q=\(encoded)", as: account, of: CollectionItem.self).items.map
                { $0.post?.title ?? $0.link?.url ?? "?" }
            }
            #expect(try await found("basil", as: ana) == ["Tomato soup"], "the saved post's text")
            #expect(try await found("sunday", as: ana) == ["Tomato soup"], "the note")
            #expect(try await found("pasta", as: ana) == ["https://192.0.2.9/pasta-recipes"], "the URL")
            #expect(
                try await found("durum 100", as: ana) == ["https://192.0.2.9/pasta-recipes"], "every word, in any order"
            )
            #expect(try await found("soup pasta", as: ana).isEmpty)
            #expect(try await found("basil", as: bob).isEmpty, "Bob's saves, not Ana's")
            #expect(try await api.get("/search/saved?q=basil").status == .unauthorized)
        }
    }

    @Test func nearFindsPostsInsideTheRadiusNearestFirstAndCombinesWithWords() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            func place(_ title: String, _ latitude: Double, _ longitude: Double) async throws -> Post {
                try await api.post(
                    ana,
                    CreatePostRequest(
                        kind: .text, title: title, location: Location(latitude: latitude, longitude: longitude)))
            }
            // Around Lisbon (38.7223, -9.1393): distances from the centre in km.
            _ = try await place("Rossio pastries", 38.7139, -9.1394)  // ~0.9
            _ = try await place("Belém pastries", 38.6975, -9.2063)  // ~6.4
            _ = try await place("Sintra pastries", 38.8029, -9.3817)  // ~22.6
            _ = try await place("Porto pastries", 41.1579, -8.6291)  // ~274
            _ = try await api.textPost(ana, "pastries without a place")
            let centre = "near=38.7223,-9.1393"
            func titles(_ query: String) async throws -> [String] {
                try await api.page("/search/posts?" + query, of: Post.self).items.compactMap(\.title)
            }
            #expect(
                try await titles(centre) == ["Rossio pastries", "Belém pastries"], "default radius 10 km, nearest first"
            )
            #expect(try await titles(centre + "&radiusKm=0.95") == ["Rossio pastries"], "inside the edge")
            #expect(try await titles(centre + "&radiusKm=0.8").isEmpty, "outside the edge")
            #expect(
                try await titles(centre + "&radiusKm=25") == ["Rossio pastries", "Belém pastries", "Sintra pastries"])
            #expect(
                try await titles(centre + "&radiusKm=300&q=porto") == ["Porto pastries"], "words and place in one query"
            )
            #expect(try await titles(centre + "&radiusKm=25&q=pastries").count == 3)
            let first = try await api.page("/search/posts?\(centre)&radiusKm=25&limit=2", of: Post.self)
            #expect(
                try await api.page(
                    "/search/posts?\(centre)&radiusKm=25&limit=2&cursor=\(first.nextCursor!)", of: Post.self
                ).items.compactMap(\.title) == ["Sintra pastries"])
            // Across the antimeridian and at a pole, the box widens instead of missing posts.
            _ = try await place("Fiji east", -17.0, 179.99)
            #expect(try await titles("near=-17.0,-179.99&radiusKm=50") == ["Fiji east"])
            _ = try await place("South pole", -89.99, 0)
            #expect(try await titles("near=-89.99,120&radiusKm=50") == ["South pole"])
            for (query, field) in [
                ("near=91,0", "near"), ("near=0,181", "near"), ("near=abc", "near"), ("near=1,2,3", "near"),
                ("near=nan,0", "near"),
                ("near=0,0&radiusKm=0", "radiusKm"), ("near=0,0&radiusKm=501", "radiusKm"),
                ("near=0,0&radiusKm=x", "radiusKm"), ("radiusKm=5&q=a", "radiusKm"),
            ] {
                let response = try await api.get("/search/posts?" + query)
                #expect(
                    response.status == .unprocessableContent && response.error?.field == field,
                    "\(query): \(response.text)")
            }
            #expect(try await api.get("/search/posts").status == .unprocessableContent, "q or near is needed")
        }
    }

    static let hostile: [String] = [
        "\"", "\"\"\"", "'", "*", "* *", "NEAR", "NEAR(a b)", "a OR b", "a AND", "NOT a", "-a", "^a", "a:b",
        "{title}: x", "title:x",
        "'); DROP TABLE posts; --", "1' OR '1'='1", "\\", "%_", "a & b | !c", "<->", "x:*", "(((", ")))", "\u{0}", "🙂",
        "🙂 emoji 🎉",
        "ünïcödé", "中文 搜索", String(repeating: "x", count: 1_000), String(repeating: "ab ", count: 333),
    ]

    /// The food app: "near me among people I follow", and places found by their names, which
    /// follow edits of the place; `in=place` and `in=space` stay apart on both databases.
    @Test func nearAmongPeopleIFollowAndPlacesByName() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            try await api.call(.post, "/spaces", as: ben, json: CreateSpaceRequest(slug: "tokyo", name: "Tokyo eats"))
            try await api.follow(ana, "ben")
            let ramen = try await api.post(
                ben,
                CreatePostRequest(
                    kind: .text, title: "Best bowl",
                    location: Location(latitude: 35.6595, longitude: 139.7005, name: "Ichiran Shibuya")))
            _ = try await api.post(
                cat,
                CreatePostRequest(
                    kind: .text, title: "Gyoza",
                    location: Location(latitude: 35.6600, longitude: 139.7010, name: "Harajuku")))
            _ = try await api.post(
                ben, CreatePostRequest(kind: .text, title: "Soba", body: "shibuya", spaces: ["tokyo"]))
            func titles(_ query: String, as account: Account? = nil) async throws -> [String] {
                try await api.page("/search/posts?" + query, as: account, of: Post.self).items.compactMap(\.title)
            }
            let near = "near=35.6590,139.7000&radiusKm=2"
            #expect(try await titles(near, as: ana).sorted() == ["Best bowl", "Gyoza"])
            #expect(try await titles(near + "&followed=true", as: ana) == ["Best bowl"])
            #expect(try await titles(near + "&followed=true&q=gyoza", as: ana).isEmpty)
            #expect(try await titles(near + "&followed=false", as: ana).count == 2)
            #expect(try await api.get("/search/posts?" + near + "&followed=true").status == .unauthorized)
            let bad = try await api.get("/search/posts?" + near + "&followed=yes", as: ana)
            #expect(bad.status == .unprocessableContent && bad.error?.field == "followed")

            #expect(try await titles("q=ichiran") == ["Best bowl"], "a place's name is searched with everything")
            #expect(try await titles("q=shibuya&in=place") == ["Best bowl"])
            #expect(try await titles("q=shibuya&in=body") == ["Soba"])
            #expect(try await titles("q=tokyo&in=place").isEmpty, "a space's name is not a place")
            #expect(try await titles("q=tokyo&in=space") == ["Soba"])
            _ = try await api.call(
                .patch, "/posts/\(ramen.id)", as: ben,
                json: UpdatePostRequest(location: .set(Location(latitude: 35.6595, longitude: 139.7005, name: "Afuri")))
            )
            #expect(try await titles("q=ichiran").isEmpty, "the old name leaves the index")
            #expect(try await titles("q=afuri&in=place") == ["Best bowl"])
        }
    }

    @Test(arguments: hostile)
    func noStringBreaksTheQuery(q: String) async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.post(ana, CreatePostRequest(kind: .text, title: "emoji party", body: "ab ab ab x"))
            let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let response = try await api.get("/search/posts?q=\(encoded)")
            #expect(
                response.status == .ok || response.status == .unprocessableContent,
                "\(q): \(response.status) \(response.text)")
            if response.status == .unprocessableContent { #expect(response.error?.field == "q") }
        }
    }

    @Test func tenKilobytesOfTextIsRefusedCleanly() async throws {
        try await withApp { api async throws in
            let response = try await api.get("/search/posts?q=" + String(repeating: "a%20", count: 2_600))
            #expect(response.status == .unprocessableContent && response.error?.field == "q")
        }
    }
}
