import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Search in every script, on SQLite and PostgreSQL alike: words inside runs of Chinese,
/// Japanese, Korean and Thai, folding (ß, Turkish i, full-width, Arabic marks), emoji.
@Suite("Search in every script")
struct SearchScriptsTests {
    @Test func foldingMakesOneFormOfEachWord() {
        #expect(SearchFolding.fold("Straße STRASSE ẞ") == "strasse strasse ss")
        #expect(SearchFolding.fold("İSTANBUL ılık Işık") == "istanbul ilik isik")
        #expect(SearchFolding.fold("ＰＬＡＺＡ１２") == "plaza12", "full-width Latin and digits")
        #expect(SearchFolding.fold("Crème brûlée, Ærø, ΣΟΦΙΑΣ") == "creme brulee, ærø, σοφιασ")
        #expect(
            SearchFolding.fold("مَدْرَسَةٌ أحمد إلى ـــمصر") == "مدرسه احمد الي مصر", "Arabic marks, alef, yeh, teh marbuta")
        #expect(SearchFolding.fold("pay\u{200B}pal \u{202E}evil\u{202C} 👩\u{200D}💻\u{FE0F}") == "paypal evil 👩💻")
        #expect(SearchFolding.fold("ｶﾀｶﾅ が") == "カタカナ が", "half-width kana become full-width; dakuten stay")
        #expect(SearchFolding.fold("서울") == "서울", "Hangul syllables stay composed")
    }

    @Test func unspacedRunsAreIndexedAsPairsAndAskedForAsPhrases() {
        #expect(
            SearchFolding.indexText("東京のラーメン!").split(separator: " ") == [
                "東京", "京の", "のラ", "ラー", "ーメ", "メン", "ン", "!",
            ])
        #expect(SearchFolding.indexText("ramen🍜tonight").split(separator: " ") == ["ramen", "🍜", "tonight"])
        #expect(SearchFolding.tokens(ofWord: "iphone15ケース") == ["iphone15", "ケー", "ース"])
        #expect(SearchText("ラーメン")?.terms == [.init(words: ["ラー", "ーメ", "メン"], prefix: true)])
        #expect(
            SearchText("東 plaza")?.terms == [.init(words: ["東"], prefix: true), .init(words: ["plaza"], prefix: true)])
        #expect(SearchText("ＳＴＲＡßＥ")?.terms == [.init(words: ["strasse"], prefix: true)])
        #expect(SearchText("🍜")?.terms == [.init(words: ["🍜"])])
        #expect(SearchText("ラーメン")?.fts5(in: .all) == #""ラー ーメ メン"*"#)
        #expect(SearchText("\"北京 烤鸭\"")?.tsquery(in: .all) == "('北京' <-> '烤鸭')")
    }

    func titles(_ api: TestAPI, _ query: String, field: String = "all") async throws -> [String] {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return try await api.page("/search/posts?q=\(encoded)&in=\(field)", of: Post.self).items.compactMap(\.title)
    }

    @Test func wordsAreFoundInEveryScript() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let posts: [(String, String)] = [
                ("Japanese", "東京のラーメンが美味しい"),
                ("Chinese", "我喜欢北京烤鸭"),
                ("Korean", "서울에서 김치찌개를 먹었어요"),
                ("Thai", "ฉันชอบกินข้าวผัดมาก"),
                ("German", "Die Straße am Fluß ist lang"),
                ("Turkish", "İstanbul'da ılık bir gün"),
                ("Full-width", "ＰＬＡＺＡ meetup tonight"),
                ("Arabic", "مَدْرَسَةٌ جديدة في القاهرة"),
                ("Emoji", "Ramen 🍜 night with friends"),
            ]
            for (title, body) in posts {
                _ = try await api.post(ana, CreatePostRequest(kind: .text, title: title, body: body))
            }
            let found: [(String, String)] = [
                ("ラーメン", "Japanese"), ("美味しい", "Japanese"), ("東京", "Japanese"), ("ラー", "Japanese"),
                ("ｒａｍｅｎ", "Emoji"),
                ("烤鸭", "Chinese"), ("北京", "Chinese"), ("欢", "Chinese"),
                ("김치찌개", "Korean"), ("서울", "Korean"),
                ("ข้าวผัด", "Thai"),
                ("strasse", "German"), ("STRASSE", "German"), ("straße", "German"), ("fluss", "German"),
                ("istanbul", "Turkish"), ("ISTANBUL", "Turkish"), ("ılık", "Turkish"), ("Ilik", "Turkish"),
                ("plaza", "Full-width"), ("ＭＥＥＴＵＰ", "Full-width"),
                ("مدرسة", "Arabic"), ("القاهره", "Arabic"), ("جديدة", "Arabic"),
                ("🍜", "Emoji"), ("ramen🍜", "Emoji"),
            ]
            for (query, title) in found {
                let hits = try await titles(api, query)
                #expect(hits == [title], "\(query) finds the \(title) post")
            }
            for query in ["京都", "キムチ", "烤鱼", "strase", "ราเมน"] {
                #expect(try await titles(api, query).isEmpty, "\(query) is in no post")
            }
        }
    }

    @Test func rankingPrefixesFieldsNamesAndSavesWorkInEveryScript() async throws {
        try await withApp { api async throws in
            let (ana, taro) = try await api.register("ana", "taro")
            try await api.call(.patch, "/me", as: taro, json: UpdateMeRequest(displayName: "山田太郎"))
            let omer = try await api.register("omer")
            try await api.call(.patch, "/me", as: omer, json: UpdateMeRequest(displayName: "Ömer Çelik"))
            _ = try await api.post(ana, CreatePostRequest(kind: .text, title: "昼ごはん", body: "今日はラーメンを食べた"))
            let shop = try await api.post(ana, CreatePostRequest(kind: .text, title: "ラーメン屋", body: "駅の近く"))
            _ = try await api.post(
                ana,
                CreatePostRequest(
                    kind: .text, title: "夜景",
                    location: Location(latitude: 35.6586, longitude: 139.7454, name: "東京タワー")))
            #expect(try await titles(api, "ラーメン") == ["ラーメン屋", "昼ごはん"], "a title hit ranks first")
            #expect(try await titles(api, "ラーメ") == ["ラーメン屋", "昼ごはん"], "typing: the last word is a prefix")
            #expect(try await titles(api, "タワー", field: "place") == ["夜景"])
            #expect(try await titles(api, "タワー", field: "title").isEmpty)
            #expect(try await titles(api, "\"ラーメン 駅\"").isEmpty, "a phrase keeps its order and neighbours")
            func names(_ q: String) async throws -> [String] {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await api.page("/search/users?q=\(encoded)", of: User.self).items.map(\.username)
            }
            #expect(try await names("太郎") == ["taro"])
            #expect(try await names("山田") == ["taro"])
            #expect(try await names("omer celik") == ["omer"])
            #expect(try await names("ÖMER") == ["omer"])
            let crate = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "食べ物"))
                .decode(SavedCollection.self)
            try await api.call(
                .post, "/collections/\(crate.id)/items", as: ana, json: SaveItemRequest(postId: shop.id, note: "Straße")
            )
            func saved(_ q: String) async throws -> Int {
                let encoded = q.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                return try await api.page("/search/saved?q=\(encoded)", as: ana, of: CollectionItem.self).items.count
            }
            #expect(try await saved("ラーメン") == 1)
            #expect(try await saved("strasse") == 1)
            #expect(try await saved("京都") == 0)
        }
    }
}
