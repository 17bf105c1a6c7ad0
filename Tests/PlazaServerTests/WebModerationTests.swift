import Foundation
import Hummingbird
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Web app: reports and the moderation page")
struct WebModerationTests {
    @Test func theModerationPageShowsEachPersonWhatTheyModerate() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let club = try await api.report(world.bob, .post, world.clubPost.id).decode(Report.self)
            let lone = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            // MUT / validate: the admin sees both, the person's recent content, suspend, the log.
            let admin = try await api.page(.get, "/admin", cookie: world.admin.cookie)
            #expect(admin.status == .ok)
            #expect(
                admin.text.contains(#"id="report-\#(club.id)""#) && admin.text.contains(#"id="report-\#(lone.id)""#))
            #expect(
                admin.text.contains("zebra spam elsewhere") && admin.text.contains("Their recent posts and comments"))
            #expect(admin.text.contains(#"value="suspend""#) && admin.text.contains("Audit log"))
            #expect(admin.text.contains(#"data-api="PATCH /api/v1/admin/reports/\#(lone.id)""#))
            #expect(admin.text.contains(#"href="/admin""#))
            // The club's owner sees its report only, and neither suspension nor the log.
            let carol = try await api.page(.get, "/admin", cookie: world.carol.cookie)
            #expect(carol.status == .ok && carol.text.contains(#"id="report-\#(club.id)""#))
            #expect(!carol.text.contains(#"id="report-\#(lone.id)""#) && !carol.text.contains(#"value="suspend""#))
            #expect(!carol.text.contains("Audit log") && carol.text.contains(#"href="/admin""#))
            // Anyone else: refused, and no link to it.
            #expect(try await api.page(.get, "/admin", cookie: world.dave.cookie).status == .forbidden)
            #expect(!(try await api.page(.get, "/", cookie: world.dave.cookie)).text.contains(#"href="/admin""#))
            #expect(try await api.page(.get, "/admin").status != .ok)
            // Resolved reports move to their own list, and the log shows the action.
            #expect(try await api.resolve(world.admin, lone.id, .dismiss, note: "checked").status == .ok)
            let after = try await api.page(.get, "/admin", cookie: world.admin.cookie)
            #expect(!after.text.contains(#"id="report-\#(lone.id)""#) && after.text.contains("report.dismiss"))
            let resolved = try await api.page(.get, "/admin?state=resolved", cookie: world.admin.cookie)
            #expect(
                resolved.text.contains(#"id="report-\#(lone.id)""#)
                    && resolved.text.contains("dismiss by @adm: checked"))
        }
    }

    @Test func reportFormsAreOnOtherPeoplesPostsCommentsAndProfiles() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let bobsView = try await api.page(.get, "/p/\(world.clubPost.id)", cookie: world.bob.cookie).text
            #expect(bobsView.contains(#"name="targetType" value="post""#))
            #expect(bobsView.contains(#"name="targetType" value="comment""#))
            #expect(bobsView.contains(#"data-dialog="report-comment-sheet" data-target-id="\#(world.comment.id)""#))
            #expect(bobsView.contains(#"data-api="POST /api/v1/reports""#))
            let alicesView = try await api.page(.get, "/p/\(world.clubPost.id)", cookie: world.alice.cookie).text
            // Alice wrote the post and the comment: nothing of hers to report.
            #expect(!alicesView.contains(#"<dialog id="report-sheet""#) && !alicesView.contains("data-target-id="))
            let anonymous = try await api.page(.get, "/p/\(world.clubPost.id)").text
            #expect(!anonymous.contains("Report this"))
            let profile = try await api.page(.get, "/u/alice", cookie: world.bob.cookie).text
            #expect(profile.contains(#"name="targetType" value="user""#) && profile.contains(world.alice.id))
            #expect(!(try await api.page(.get, "/u/bob", cookie: world.bob.cookie)).text.contains("Report this"))
        }
    }

    @Test func aSuspendedPersonsWebSignInSaysWhy() async throws {
        try await withApp { api async throws in
            let admin = try await api.admin("adm")
            let alice = try await api.register("alice")
            #expect(try await api.call(.put, "/admin/users/alice/suspension", as: admin).status == .noContent)
            // The cookie of the suspended session no longer signs in.
            #expect(try await api.page(.get, "/settings", cookie: alice.cookie).status != .ok)
            let loginPage = try await api.page(.get, "/login")
            let nonceCookie = try #require(loginPage.setCookie(WebSession.nonceCookie))
            let nonce = String(nonceCookie.dropFirst(WebSession.nonceCookie.count + 1).prefix { $0 != ";" })
            let token = try #require(loginPage.pageCSRF)
            // MUT
            let refused = try await api.page(
                .post, "/login", cookie: "\(WebSession.nonceCookie)=\(nonce)",
                form: formEncode(["login": "alice", "password": alice.password, "_csrf": token]))
            // validate
            #expect(refused.status == .forbidden)
            #expect(refused.text.contains("This account is suspended"))
            #expect(refused.setCookie(WebSession.sessionCookie) == nil)
        }
    }
}
