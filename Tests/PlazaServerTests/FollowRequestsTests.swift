import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Locked accounts and follow requests")
struct FollowRequestsTests {
    /// Ana locks her account through PATCH /me; the profile says so to everyone.
    static func lock(_ api: TestAPI, _ account: Account, _ locked: Bool = true) async throws {
        let response = try await api.call(.patch, "/me", as: account, json: UpdateMeRequest(locked: locked))
        #expect(response.status == .ok, "\(response.text)")
        #expect(try response.decode(Me.self).user.locked == locked)
    }

    static func requests(_ api: TestAPI, _ account: Account, query: String = "") async throws -> Page<JoinRequest> {
        try await api.page("/me/follow-requests" + query, as: account, of: JoinRequest.self)
    }

    static func notifications(_ api: TestAPI, _ account: Account) async throws -> [PlazaAPI.Notification] {
        try await api.page("/me/notifications", as: account, of: PlazaAPI.Notification.self).items
    }

    @Test func followingALockedPersonAsksThemAndApprovalMakesTheFollow() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await Self.lock(api, ana)
            #expect(try await api.get("/users/ana").decode(User.self).locked)
            #expect(try await api.get("/users/bob").decode(User.self).locked == false)
            let secret = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "for my followers", audience: .followers))

            // Asking twice records one request, one notification; nothing is followed yet.
            for _ in 0..<2 {
                let response = try await api.call(.put, "/users/ana/follow", as: bob)
                #expect(response.status == .ok)
                let profile = try response.decode(User.self)
                #expect(
                    profile.viewer == User.Viewer(following: false, followedBy: false, blocking: false, requested: true)
                )
                #expect(profile.counts.followers == 0)
            }
            #expect(try await api.get("/users/ana", as: bob).decode(User.self).viewer?.requested == true)
            #expect(try await api.get("/posts/\(secret.id)", as: bob).status == .notFound)
            let asked = try await Self.notifications(api, ana)
            #expect(asked.map(\.kind) == [.followRequest])
            #expect(asked.first?.actor.username == "bob")
            #expect(try await api.get("/me", as: ana).decode(Me.self).unreadNotifications == 1)
            let inbox = try await Self.requests(api, ana)
            #expect(inbox.items.map(\.user.username) == ["bob"])
            #expect(inbox.nextCursor == nil)
            #expect(try await Self.requests(api, bob).items.isEmpty)

            // Approval: Bob follows Ana, counters move, the followers-only post opens to him.
            #expect(try await api.call(.put, "/me/follow-requests/bob", as: ana).status == .noContent)
            let seen = try await api.get("/users/ana", as: bob).decode(User.self)
            #expect(seen.viewer == User.Viewer(following: true, followedBy: false, blocking: false))
            #expect(seen.counts.followers == 1)
            #expect(try await api.get("/users/bob").decode(User.self).counts.following == 1)
            #expect(try await api.get("/posts/\(secret.id)", as: bob).status == .ok)
            #expect(
                try await api.page("/feed/home", as: bob, of: Post.self).items.map(\.id).contains(secret.id))
            // The request and its notification are gone; as in Mastodon, nobody is notified of the approval.
            #expect(try await Self.requests(api, ana).items.isEmpty)
            #expect(try await Self.notifications(api, ana).isEmpty)
            #expect(try await api.get("/me", as: ana).decode(Me.self).unreadNotifications == 0)
            #expect(try await Self.notifications(api, bob).isEmpty)
            #expect(try await api.call(.put, "/me/follow-requests/bob", as: ana).status == .notFound)
            // Following again changes nothing (not a new request).
            #expect(try await api.call(.put, "/users/ana/follow", as: bob).decode(User.self).viewer?.following == true)
            #expect(try await Self.requests(api, ana).items.isEmpty)
        }
    }

    @Test func denyingLeavesThePersonOutside() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            try await Self.lock(api, ana)
            let secret = try await api.post(
                ana, CreatePostRequest(kind: .text, body: "for my followers", audience: .followers))
            try await api.follow(bob, "ana")
            #expect(try await api.call(.delete, "/me/follow-requests/bob", as: ana).status == .noContent)
            let seen = try await api.get("/users/ana", as: bob).decode(User.self)
            #expect(seen.viewer == User.Viewer(following: false, followedBy: false, blocking: false))
            #expect(seen.counts.followers == 0)
            #expect(try await api.get("/posts/\(secret.id)", as: bob).status == .notFound)
            #expect(try await Self.notifications(api, ana).isEmpty)
            #expect(try await api.call(.delete, "/me/follow-requests/bob", as: ana).status == .notFound)
            // Bob may ask again.
            try await api.follow(bob, "ana")
            #expect(try await Self.requests(api, ana).items.map(\.user.username) == ["bob"])
        }
    }

    @Test func unfollowWithdrawsAndABlockRemovesRequestsBothWays() async throws {
        try await withApp { api async throws in
            let (ana, bob, carol) = try await api.register("ana", "bob", "carol")
            try await Self.lock(api, ana)
            try await Self.lock(api, bob)
            try await api.follow(bob, "ana")
            let withdrawn = try await api.call(.delete, "/users/ana/follow", as: bob).decode(User.self)
            #expect(withdrawn.viewer?.requested == false)
            #expect(try await Self.requests(api, ana).items.isEmpty)
            #expect(try await Self.notifications(api, ana).isEmpty)

            // Requests each way, and Carol's: Ana's block of Bob ends both of theirs, not Carol's.
            try await api.follow(bob, "ana")
            try await api.follow(ana, "bob")
            try await api.follow(carol, "ana")
            #expect(try await api.call(.put, "/users/bob/block", as: ana).status == .ok)
            #expect(try await Self.requests(api, ana).items.map(\.user.username) == ["carol"])
            #expect(try await Self.requests(api, bob).items.isEmpty)
            #expect(try await Self.notifications(api, ana).map(\.actor.username) == ["carol"])
            #expect(try await api.call(.delete, "/users/bob/block", as: ana).status == .ok)
            #expect(try await api.get("/users/ana", as: bob).decode(User.self).viewer?.requested == false)
            #expect(try await api.call(.put, "/me/follow-requests/bob", as: ana).status == .notFound)
        }
    }

    @Test func unlockingAcceptsThePendingRequests() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let fans = [try await api.register("bob"), try await api.register("carol")]
            try await Self.lock(api, ana)
            for fan in fans { try await api.follow(fan, "ana") }
            #expect(try await api.get("/users/ana").decode(User.self).counts.followers == 0)
            try await Self.lock(api, ana, false)
            #expect(try await api.get("/users/ana").decode(User.self).counts.followers == 2)
            for fan in fans {
                let seen = try await api.get("/users/ana", as: fan).decode(User.self)
                #expect(seen.viewer?.following == true && seen.viewer?.requested == false, "\(fan.username)")
            }
            #expect(try await Self.requests(api, ana).items.isEmpty)
            #expect(try await Self.notifications(api, ana).isEmpty)
            // Unlocked, a follow is a follow again.
            let dan = try await api.register("dan")
            #expect(try await api.call(.put, "/users/ana/follow", as: dan).decode(User.self).viewer?.following == true)
        }
    }

    @Test func theInboxPagesNewestFirstAndIsEachPersonsOwn() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await Self.lock(api, ana)
            let names = try await api.fans(5, of: "ana")
            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await Self.requests(api, ana, query: "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                #expect(page.items.count <= 2)
                seen += page.items.map(\.user.username)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == names.reversed())
            // The requests are grouped in one notification while it is unread.
            let grouped = try await Self.notifications(api, ana)
            #expect(grouped.count == 1 && grouped.first?.actorCount == 5)
            // Approving one takes them out of the group.
            #expect(try await api.call(.put, "/me/follow-requests/fan4", as: ana).status == .noContent)
            let regrouped = try await Self.notifications(api, ana)
            #expect(regrouped.first?.actorCount == 4 && regrouped.first?.actor.username != "fan4")
            #expect(regrouped.first?.actors.contains { $0.username == "fan4" } == false)

            // Signed out: 401; someone else's request is not mine to answer; bad input is a 4xx.
            let other = try await api.register("other")
            #expect(try await api.get("/me/follow-requests").status == .unauthorized)
            #expect(try await api.call(.put, "/me/follow-requests/fan0").status == .unauthorized)
            #expect(try await api.call(.delete, "/me/follow-requests/fan0").status == .unauthorized)
            #expect(try await api.call(.put, "/me/follow-requests/fan0", as: other).status == .notFound)
            #expect(try await api.call(.delete, "/me/follow-requests/fan0", as: other).status == .notFound)
            #expect(try await api.call(.put, "/me/follow-requests/nobody", as: ana).status == .notFound)
            #expect(try await api.get("/me/follow-requests?cursor=nonsense", as: ana).status == .badRequest)
            #expect(try await api.get("/me/follow-requests?limit=0", as: ana).status.code / 100 == 4)
            #expect(try await api.call(.patch, "/me", as: ana, raw: #"{"locked":"yes"}"#).status.code / 100 == 4)
            #expect(try await Self.requests(api, ana).items.count == 4)
        }
    }
}
