import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Web app: locked accounts, follow requests, friends and mutes")
struct WebPeopleTests {
    @Test func theFollowRequestInboxListsRequestsWithApproveAndDeny() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            #expect(
                try await api.call(.patch, "/me", as: ana, json: UpdateMeRequest(locked: true)).status == .ok)
            let settings = try await api.page(.get, "/settings", cookie: ana.cookie).text
            #expect(settings.contains(#"<input type="checkbox" name="locked" data-bool checked>"#))
            #expect(
                try await api.page(.get, "/settings", cookie: ben.cookie).text.contains(
                    #"<input type="checkbox" name="locked" data-bool >"#))

            try await api.follow(ben, "ana")
            // Ben's button shows the pending request; Ana's profile says it is locked.
            let profile = try await api.page(.get, "/u/ana", cookie: ben.cookie).text
            #expect(profile.contains(#"data-follow="ana" aria-pressed="true" class="">Requested</button>"#))
            #expect(profile.contains(#"title="Follows need approval">Locked</span>"#))
            // The notification links to the inbox.
            let notifications = try await api.page(.get, "/notifications", cookie: ana.cookie).text
            #expect(notifications.contains(#"<a href="/follow-requests">"#))
            #expect(notifications.contains("ben asked to follow you"))

            let inbox = try await api.page(.get, "/follow-requests", cookie: ana.cookie)
            #expect(inbox.status == .ok)
            #expect(inbox.text.contains(#"id="request-ben""#))
            #expect(inbox.text.contains(#"data-api="PUT /api/v1/me/follow-requests/ben""#))
            #expect(inbox.text.contains(#"data-api="DELETE /api/v1/me/follow-requests/ben""#))
            #expect(inbox.pageCSRF == ana.csrf)
            // The buttons' requests, as the page's script sends them (cookie and CSRF header).
            #expect(
                try await api.cookieCall(.put, "/me/follow-requests/ben", session: ana.token, csrf: nil).status
                    == .forbidden)
            #expect(
                try await api.cookieCall(.put, "/me/follow-requests/ben", session: ana.token, csrf: ana.csrf).status
                    == .noContent)
            let after = try await api.page(.get, "/follow-requests", cookie: ana.cookie).text
            #expect(!after.contains(#"id="request-ben""#) && after.contains("No one is waiting"))
            let following = try await api.page(.get, "/u/ana", cookie: ben.cookie).text
            #expect(following.contains(#"data-follow="ana" aria-pressed="true" class="">Unfollow</button>"#))

            // Ben's inbox is his own and empty; signed out, the page asks to sign in.
            #expect(try await api.page(.get, "/follow-requests", cookie: ben.cookie).text.contains("No one is waiting"))
            let anonymous = try await api.page(.get, "/follow-requests")
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location] == "/login?next=%2Ffollow%2Drequests")
        }
    }

    @Test func profilesLinkFriendsAndOfferMute() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            try await api.follow(ana, "ben")
            try await api.follow(ben, "ana")
            let profile = try await api.page(.get, "/u/ana", cookie: ben.cookie).text
            #expect(profile.contains(#"<a href="/u/ana/friends">Friends</a>"#))
            #expect(profile.contains(#"data-api="PUT /api/v1/users/ana/mute""#) && profile.contains(">Mute</button>"))
            let friends = try await api.page(.get, "/u/ana/friends")
            #expect(friends.status == .ok)
            #expect(friends.text.contains("Friends of ana") && friends.text.contains(#"href="/u/ben""#))
            #expect(try await api.page(.get, "/u/nobody/friends").status == .notFound)

            #expect(try await api.call(.put, "/users/ana/mute", as: ben).status == .noContent)
            let muted = try await api.page(.get, "/u/ana", cookie: ben.cookie).text
            #expect(muted.contains(#"data-api="DELETE /api/v1/users/ana/mute""#) && muted.contains(">Unmute</button>"))
            // One's own profile has no mute button.
            #expect(!(try await api.page(.get, "/u/ana", cookie: ana.cookie).text.contains("/mute")))
        }
    }
}
