import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Notifications")
struct NotificationsTests {
    func notifications(_ api: TestAPI, _ account: Account, unread: Bool = false) async throws -> [PlazaAPI.Notification]
    {
        try await api.page(
            "/me/notifications?limit=100" + (unread ? "&unread=true" : ""), as: account, of: PlazaAPI.Notification.self
        ).items
    }

    func unreadCount(_ api: TestAPI, _ account: Account) async throws -> Int {
        try await api.get("/me", as: account).decode(Me.self).unreadNotifications
    }

    func comment(_ api: TestAPI, _ account: Account, on post: Post, _ text: String) async throws {
        let response = try await api.call(
            .post, "/posts/\(post.id)/comments", as: account, json: CreateCommentRequest(body: text))
        #expect(response.status == .created, "comment: \(response.text)")
    }

    @Test func eachKindReachesTheRightPersonAndNeverTheActor() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat, dan) = try await api.register("ana", "ben", "cat", "dan")
            let post = try await api.textPost(ana, "My first ride")
            // setup: Dan comments first, so he is in the thread; Ana acts on her own post.
            try await comment(api, dan, on: post, "Nice!")
            try await comment(api, ana, on: post, "Thanks @ana")
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: ana)
            // MUT
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: ben)
            try await comment(api, ben, on: post, "Look @CAT and @ana, also @nobody_here and ben@example.com")
            try await api.follow(ben, "ana")
            let mention = try await api.textPost(cat, "Riding with @ben today")
            // validate
            let anas = try await notifications(api, ana)
            #expect(
                anas.map(\.kind) == [.follow, .comment, .like, .comment],
                "newest first; her own like and comment are silent")
            #expect(anas.allSatisfy { $0.actor.username != "ana" })
            #expect(anas[1].comment?.body.hasPrefix("Look @CAT") == true && anas[1].post?.id == post.id)
            #expect(anas[3].actor.username == "dan")
            let cats = try await notifications(api, cat)
            #expect(cats.map(\.kind) == [.mention] && cats[0].actor.username == "ben" && cats[0].comment != nil)
            let dans = try await notifications(api, dan)
            #expect(
                dans.map(\.kind) == [.reply, .reply], "Dan commented in the thread, so he hears of later comments in it"
            )
            #expect(dans.map(\.actor.username) == ["ben", "ana"])
            let bens = try await notifications(api, ben)
            #expect(bens.map(\.kind) == [.mention] && bens[0].post?.id == mention.id && bens[0].comment == nil)
            #expect(try await unreadCount(api, ana) == 4)
            #expect(try await api.get("/me/notifications").status == .unauthorized)
        }
    }

    /// "Recommend an activity to a friend": a post goes to people who follow the sender and may
    /// read it, all of them or none; two people recommending one post make one group.
    @Test func aRecommendationReachesFollowersWhoCanReadThePost() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat, dan) = try await api.register("ana", "ben", "cat", "dan")
            try await api.follow(ben, "ana")
            try await api.follow(ben, "dan")
            let run = try await api.post(
                cat,
                CreatePostRequest(kind: .activity, body: "10k", activity: ActivityInput(type: "Running", progress: 100))
            )
            let path = "/posts/\(run.id)/recommend"
            // MUT
            #expect(try await api.call(.post, path, json: RecommendPostRequest(to: ["ben"])).status == .unauthorized)
            let refused = try await api.call(
                .post, path, as: ana, json: RecommendPostRequest(to: ["ben", "cat", "ghost"]))
            #expect(refused.status == .unprocessableContent)
            let error = try refused.decode(ErrorBody.self).error
            #expect(error.code == "cannot_recommend" && error.field == "to")
            #expect(error.message.hasSuffix("not cat, ghost."), "\(error.message)")
            #expect(try await notifications(api, ben).isEmpty, "all or none")
            #expect(
                try await api.call(.post, path, as: ana, json: RecommendPostRequest(to: [])).status
                    == .unprocessableContent)
            #expect(
                try await api.call(.post, "/posts/999/recommend", as: ana, json: RecommendPostRequest(to: ["ben"]))
                    .status
                    == .notFound)
            #expect(
                try await api.call(.post, path, as: ana, json: RecommendPostRequest(to: ["@BEN"])).status
                    == .unprocessableContent)
            #expect(
                try await api.call(.post, path, as: ana, json: RecommendPostRequest(to: ["BEN", "ben"])).status
                    == .noContent)
            #expect(
                try await api.call(.post, path, as: dan, json: RecommendPostRequest(to: ["ben"])).status == .noContent)
            let got = try await notifications(api, ben)
            #expect(got.count == 1)
            let first = try #require(got.first)
            #expect(first.kind == .recommendation && first.post?.id == run.id)
            #expect(first.actorCount == 2 && Set(first.actors.map(\.username)) == ["ana", "dan"])
            #expect(try await unreadCount(api, ben) == 1)
            #expect(try await notifications(api, cat).isEmpty, "the author is not told")
            let inbox = try await api.page(.get, "/notifications", cookie: ben.cookie)
            #expect(inbox.text.contains("and 1 other recommended a post to you"), "\(inbox.text)")
            let form = "data-api=\"POST /api/v1/posts/\(run.id)/recommend\""
            #expect(try await api.page(.get, "/p/\(run.id)", cookie: ana.cookie).text.contains(form))
            #expect(!(try await api.page(.get, "/p/\(run.id)")).text.contains(form), "not for the signed-out")

            // A post for the author's followers cannot be sent to someone who cannot read it.
            let mine = try await api.post(
                dan, CreatePostRequest(kind: .text, body: "for my followers", audience: .followers))
            #expect(
                try await api.call(
                    .post, "/posts/\(mine.id)/recommend", as: dan, json: RecommendPostRequest(to: ["ben"])
                )
                .status == .noContent)
            try await api.follow(cat, "ana")
            let hidden = try await api.call(
                .post, "/posts/\(mine.id)/recommend", as: ana, json: RecommendPostRequest(to: ["cat"]))
            #expect(hidden.status == .notFound, "Ana cannot read it herself")
            try await api.follow(ana, "dan")
            // Cat follows Ana but not Dan, so she may not read his post: she is passed over without
            // a word, so that the answer tells Ana nothing of Cat's follows, spaces or blocks.
            let unread = try await api.call(
                .post, "/posts/\(mine.id)/recommend", as: ana, json: RecommendPostRequest(to: ["cat"]))
            #expect(unread.status == .noContent)
            #expect(try await notifications(api, cat).isEmpty)
            // A block ends the follow, and with it the way in.
            #expect(try await api.call(.put, "/users/ana/block", as: ben).status == .ok)
            #expect(
                try await api.call(.post, path, as: ana, json: RecommendPostRequest(to: ["ben"])).status
                    == .unprocessableContent)
        }
    }

    @Test func likesAndFollowsGroupWhileUnread() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "Group me")
            var likers: [Account] = []
            for name in ["ben", "cat", "dan"] {
                let account = try await api.register(name)
                likers.append(account)
                _ = try await api.call(.put, "/posts/\(post.id)/like", as: account)
                try await api.follow(account, "ana")
            }
            // Ben unlikes and likes again: he counts once and does not move the group up.
            _ = try await api.call(.delete, "/posts/\(post.id)/like", as: likers[0])
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: likers[0])
            var items = try await notifications(api, ana)
            #expect(items.map(\.kind) == [.follow, .like])
            #expect(items[0].actorCount == 3 && items[0].actor.username == "dan")
            #expect(
                items[1].actorCount == 3 && items[1].actor.username == "dan"
                    && items[1].actors.map(\.username) == ["dan", "cat", "ben"])
            #expect(try await unreadCount(api, ana) == 2)
            // Once read, the next like opens a new group.
            let likes = items[1]
            #expect(
                try await api.call(
                    .post, "/me/notifications/read", as: ana, json: MarkNotificationsReadRequest(ids: [likes.id])
                ).status == .noContent)
            #expect(try await unreadCount(api, ana) == 1)
            let eve = try await api.register("eve")
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: eve)
            items = try await notifications(api, ana)
            #expect(items.map(\.kind) == [.like, .follow, .like])
            #expect(items[0].actorCount == 1 && items[0].actor.username == "eve" && !items[0].read)
            #expect(items[2].id == likes.id && items[2].read && items[2].actorCount == 3)
            #expect(try await notifications(api, ana, unread: true).map(\.id) == [items[0].id, items[1].id])
            #expect(try await unreadCount(api, ana) == 2)
        }
    }

    @Test func blockedPeopleAreSilentAndABlockRemovesWhatTheyCaused() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat) = try await api.register("ana", "ben", "cat")
            let post = try await api.textPost(ana, "Hello")
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: ben)
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: cat)
            try await comment(api, ben, on: post, "First")
            _ = try await api.textPost(ben, "hey @ana")
            // MUT: Ana blocks Ben.
            #expect(try await api.call(.put, "/users/ben/block", as: ana).status == .ok)
            var items = try await notifications(api, ana)
            #expect(items.map(\.kind) == [.like], "Ben's comment and mention are gone")
            #expect(
                items[0].actorCount == 1 && items[0].actor.username == "cat"
                    && items[0].actors.map(\.username) == ["cat"])
            #expect(try await unreadCount(api, ana) == 1)
            // Nothing new gets through either way.
            _ = try await api.textPost(ben, "@ana again")
            let anasNew = try await api.textPost(ana, "Hi @ben")
            #expect(try await api.call(.put, "/posts/\(anasNew.id)/like", as: ben).status == .notFound)
            items = try await notifications(api, ana)
            #expect(items.count == 1)
            #expect(try await notifications(api, ben).isEmpty)
        }
    }

    @Test func markingReadIsPerPersonAndValidated() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            try await api.follow(ben, "ana")
            try await api.follow(ana, "ben")
            let bens = try await notifications(api, ben)
            // Ana cannot mark Ben's notification read: it is simply not hers.
            #expect(
                try await api.call(
                    .post, "/me/notifications/read", as: ana, json: MarkNotificationsReadRequest(ids: bens.map(\.id))
                ).status == .noContent)
            #expect(try await unreadCount(api, ben) == 1)
            #expect(try await unreadCount(api, ana) == 1)
            let bad = try await api.call(.post, "/me/notifications/read", as: ana, raw: #"{"ids":["x"]}"#)
            #expect(bad.status == .unprocessableContent && bad.error?.field == "ids")
            let many = try await api.call(
                .post, "/me/notifications/read", as: ana,
                json: MarkNotificationsReadRequest(ids: Array(repeating: "1", count: 101)))
            #expect(many.status == .unprocessableContent)
            #expect(try await api.call(.post, "/me/notifications/read", as: ana, raw: "[1]").status == .badRequest)
            #expect(try await api.call(.post, "/me/notifications/read").status == .unauthorized)
            #expect(try await api.get("/me/notifications?unread=maybe", as: ana).error?.field == "unread")
            #expect(try await unreadCount(api, ana) == 1, "bad requests change nothing")
            // No body marks all.
            #expect(try await api.call(.post, "/me/notifications/read", as: ana).status == .noContent)
            #expect(try await unreadCount(api, ana) == 0)
            #expect(try await notifications(api, ana, unread: true).isEmpty)
            #expect(try await notifications(api, ana).count == 1)
        }
    }

    @Test func pagesAreNewestFirstWithoutGapsAndEditsNotifyOnlyNewMentions() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            var posts: [Post] = []
            for i in 0..<7 { posts.append(try await api.textPost(ben, "note \(i) for @ana")) }
            let seen = try await api.walk("/me/notifications?limit=3", as: ana, of: PlazaAPI.Notification.self)
                .compactMap(\.post?.id)
            #expect(seen == posts.reversed().map(\.id))
            // Editing keeps the old mention silent and notifies the new one.
            let cat = try await api.register("cat")
            let edit = try await api.call(
                .patch, "/posts/\(posts[0].id)", as: ben, raw: #"{"body":"note 0 for @ana and @cat"}"#)
            #expect(edit.status == .ok)
            #expect(try await notifications(api, ana).count == 7)
            #expect(try await notifications(api, cat).map(\.kind) == [.mention])
        }
    }
}
