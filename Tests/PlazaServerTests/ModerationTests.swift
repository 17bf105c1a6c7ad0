import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// People and content for the moderation tests: an admin; alice, whose post in carol's space
/// "club", post outside it and comment on the club post get reported; bob, who reports; carol,
/// who owns "club" (and so moderates it); dave, nobody in particular.
struct ModerationWorld {
    let admin: Account
    let alice: Account
    let bob: Account
    let carol: Account
    let dave: Account
    let clubPost: Post
    let lonePost: Post
    let comment: PlazaAPI.Comment

    static func make(_ api: TestAPI) async throws -> ModerationWorld {
        let admin = try await api.admin("adm")
        let (alice, bob, carol, dave) = (
            try await api.register("alice"), try await api.register("bob"), try await api.register("carol"),
            try await api.register("dave")
        )
        let created = try await api.call(
            .post, "/spaces", as: carol, json: CreateSpaceRequest(slug: "club", name: "Club"))
        #expect(created.status == .created, "\(created.text)")
        let clubPost = try await api.post(
            alice, CreatePostRequest(kind: .text, body: "zebra spam in the club", spaces: ["club"]))
        let lonePost = try await api.textPost(alice, "zebra spam elsewhere", title: "Buy now")
        let response = try await api.call(
            .post, "/posts/\(clubPost.id)/comments", as: alice, json: CreateCommentRequest(body: "zebra comment spam"))
        #expect(response.status == .created)
        return ModerationWorld(
            admin: admin, alice: alice, bob: bob, carol: carol, dave: dave, clubPost: clubPost, lonePost: lonePost,
            comment: try response.decode(PlazaAPI.Comment.self))
    }
}

extension TestAPI {
    /// Registers `username` and makes them an admin (there is no route for that), signed in again.
    func admin(_ username: String) async throws -> Account {
        let account = try await register(username)
        try await withDatabase { db in
            _ = try await db.write("UPDATE users SET is_admin = TRUE WHERE id = \(bind: Int64(account.id) ?? 0)")
        }
        return try await login(username, password: account.password)
    }

    func login(_ username: String, password: String = "correct horse battery") async throws -> Account {
        let response = try await call(.post, "/auth/login", json: LoginRequest(login: username, password: password))
        #expect(response.status == .ok, "login \(username): \(response.text)")
        let auth = try response.decode(AuthResponse.self)
        return Account(token: auth.token, me: auth.user, password: password)
    }

    func report(_ account: Account?, _ type: ReportTargetType, _ id: String, _ reason: ReportReason = .spam)
        async throws -> TestResponse
    {
        try await call(
            .post, "/reports", as: account, json: CreateReportRequest(targetType: type, targetId: id, reason: reason))
    }

    func resolve(_ account: Account?, _ report: String, _ action: ReportAction, note: String? = nil) async throws
        -> TestResponse
    {
        try await call(
            .patch, "/admin/reports/\(report)", as: account, json: ResolveReportRequest(action: action, note: note))
    }
}

@Suite("Reports and moderation")
struct ModerationTests {
    @Test func everyRouteNeedsASignedInPerson() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let filed = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            let anonymous: [TestResponse] = [
                try await api.report(nil, .post, world.lonePost.id),
                try await api.get("/admin/reports"),
                try await api.resolve(nil, filed.id, .dismiss),
                try await api.call(.put, "/admin/users/alice/suspension"),
                try await api.call(.delete, "/admin/users/alice/suspension"),
                try await api.get("/admin/audit"),
            ]
            for response in anonymous { #expect(response.status == .unauthorized, "\(response.text)") }
            // An ordinary person: the queue, the log and suspensions are not theirs; reports are invisible.
            #expect(try await api.get("/admin/reports", as: world.dave).error?.code == "not_moderator")
            #expect(try await api.get("/admin/audit", as: world.dave).status == .forbidden)
            #expect(try await api.get("/admin/audit", as: world.carol).status == .forbidden)
            #expect(try await api.call(.put, "/admin/users/alice/suspension", as: world.dave).status == .forbidden)
            #expect(try await api.call(.delete, "/admin/users/alice/suspension", as: world.dave).status == .forbidden)
            #expect(try await api.resolve(world.dave, filed.id, .dismiss).status == .notFound)
            #expect(try await api.resolve(world.bob, filed.id, .dismiss).status == .notFound)
        }
    }

    @Test func aReportKeepsItsTargetAuthorTextAndSpacesAndIsFiledOnce() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            // MUT
            let first = try await api.report(world.bob, .post, world.clubPost.id)
            // validate
            #expect(first.status == .created)
            let report = try first.decode(Report.self)
            #expect(report.targetType == .post && report.targetId == world.clubPost.id && report.state == .open)
            #expect(report.targetUser?.username == "alice" && report.reporter?.username == "bob")
            #expect(report.snapshot == "zebra spam in the club" && report.spaces == ["club"])
            let again = try await api.report(world.bob, .post, world.clubPost.id, .abuse)
            #expect(try again.status == .ok && again.decode(Report.self).id == report.id)

            let comment = try await api.report(world.bob, .comment, world.comment.id).decode(Report.self)
            #expect(comment.snapshot == "zebra comment spam" && comment.spaces == ["club"])
            #expect(comment.targetUser?.username == "alice")
            let person = try await api.report(world.bob, .user, world.alice.id, .abuse).decode(Report.self)
            #expect(person.snapshot == "alice" && person.spaces.isEmpty && person.targetUser?.username == "alice")
            let lone = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            #expect(lone.snapshot == "Buy now\n\nzebra spam elsewhere" && lone.spaces.isEmpty)
        }
    }

    /// A report for breaking the rules cites the instance's rules by id, keeps them as they read
    /// then, and the queue shows them; the post page offers them to cite.
    @Test func aReportCitesTheRulesItBreaks() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let post = world.lonePost.id
            // No rules yet: the form offers none, and none can be cited.
            #expect(!(try await api.page(.get, "/p/\(post)", cookie: world.bob.cookie).text.contains("ruleIds")))
            let rules = [InstancePatch.Rule(text: "Be kind"), InstancePatch.Rule(text: "No ads")]
            let set = try await api.call(.patch, "/admin/instance", as: world.admin, json: InstancePatch(rules: rules))
            let ids = try set.decode(InstanceInfo.self).rules.map(\.id)
            #expect(ids.count == 2)

            func report(_ reason: ReportReason, _ cited: [String]?) async throws -> TestResponse {
                try await api.call(
                    .post, "/reports", as: world.bob,
                    json: CreateReportRequest(targetType: .post, targetId: post, reason: reason, ruleIds: cited))
            }
            for (reason, cited) in [(ReportReason.rules, nil), (.rules, []), (.rules, ["99"]), (.spam, [ids[1]])] {
                let refused = try await report(reason, cited)
                #expect(
                    refused.status == .unprocessableContent && refused.error?.field == "ruleIds",
                    "\(reason) \(cited ?? [])")
            }
            let page = try await api.page(.get, "/p/\(post)", cookie: world.bob.cookie).text
            #expect(page.contains(#"<option value="rules">"#) && page.contains(#"value="\#(ids[1])" disabled> No ads"#))

            let filed = try await report(.rules, [ids[1]])
            #expect(filed.status == .created)
            #expect(try filed.decode(Report.self).rules == [InstanceRule(id: ids[1], text: "No ads")])
            // The rule reworded later: the report keeps what the reporter pointed to.
            _ = try await api.call(
                .patch, "/admin/instance", as: world.admin,
                json: InstancePatch(rules: [.init(id: ids[1], text: "No adverts of any kind")]))
            let queued = try await api.get("/admin/reports", as: world.admin).decode(Page<Report>.self).items
            #expect(queued.first { $0.targetId == post }?.rules.map(\.text) == ["No ads"])
            let admin = try await api.page(.get, "/admin", cookie: world.admin.cookie).text
            #expect(admin.contains("Rules it breaks:") && admin.contains("<li>No ads</li>"))
        }
    }

    /// The instance's moderators handle every report, suspend members and read the audit log,
    /// and run nothing else; only admins make them, and only admins suspend them.
    @Test func theInstancesModeratorsHandleEveryReportAndRunNothingElse() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            func role(_ name: String, _ role: String, by account: Account) async throws -> HTTPResponse.Status {
                try await api.call(.put, "/admin/users/\(name)/role", as: account, json: RoleRequest(role: role)).status
            }
            #expect(try await role("dave", "moderator", by: world.bob) == .forbidden)
            #expect(try await role("dave", "moderator", by: world.admin) == .noContent)
            #expect(try await role("carol", "moderator", by: world.admin) == .noContent)
            #expect(try await role("dave", "owner", by: world.admin) == .unprocessableContent)
            let listed = try await api.get("/admin/users?q=dave", as: world.admin).decode(Page<AdminUser>.self)
            #expect(listed.items.map(\.role) == ["moderator"])

            // A report on a post in no space: the moderator sees it, and acts on it.
            let report = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            let queue = try await api.get("/admin/reports", as: world.dave).decode(Page<Report>.self)
            #expect(queue.items.map(\.id).contains(report.id))
            #expect(try await api.get("/admin/audit", as: world.dave).status == .ok)
            #expect(try await api.resolve(world.dave, report.id, .suspend).status == .ok)
            #expect(try await api.get("/users/alice").status == .notFound)
            #expect(try await api.call(.delete, "/admin/users/alice/suspension", as: world.dave).status == .noContent)
            // Not an admin, not another moderator.
            let admin = try await api.call(.put, "/admin/users/adm/suspension", as: world.dave)
            #expect(admin.status == .forbidden && admin.error?.code == "cannot_suspend_admin")
            let peer = try await api.call(.put, "/admin/users/carol/suspension", as: world.dave)
            #expect(peer.status == .forbidden && peer.error?.code == "cannot_suspend_moderator")
            #expect(try await api.call(.put, "/admin/users/carol/suspension", as: world.admin).status == .noContent)
            let lift = try await api.call(.delete, "/admin/users/carol/suspension", as: world.dave)
            #expect(lift.status == .forbidden && lift.error?.code == "cannot_suspend_moderator")
            #expect(try await api.call(.delete, "/admin/users/carol/suspension", as: world.admin).status == .noContent)

            // Running the instance stays the admins'.
            #expect(
                try await api.call(.patch, "/admin/instance", as: world.dave, json: InstancePatch(name: "Mine")).status
                    == .forbidden)
            for path in ["/admin/overview", "/admin/registrations", "/admin/invites", "/admin/users"] {
                #expect(try await api.get(path, as: world.dave).status == .forbidden, "\(path)")
            }
            #expect(try await role("bob", "admin", by: world.dave) == .forbidden)
            let page = try await api.page(.get, "/admin", cookie: world.dave.cookie).text
            #expect(page.contains("audit-heading") && !page.contains(#"href="/admin/dashboard""#))

            // A member again: no queue.
            #expect(try await role("dave", "member", by: world.admin) == .noContent)
            #expect(try await api.get("/admin/reports", as: world.dave).status == .forbidden)
        }
    }

    @Test func badReportsAreRefused() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            #expect(try await api.report(world.alice, .post, world.clubPost.id).error?.code == "cannot_report_self")
            #expect(try await api.report(world.alice, .user, world.alice.id).status == .unprocessableContent)
            #expect(try await api.report(world.bob, .post, "999999").status == .notFound)
            #expect(try await api.report(world.bob, .comment, world.clubPost.id).status == .notFound)
            #expect(try await api.report(world.bob, .post, "abc").error?.field == "targetId")
            let badType = try await api.call(
                .post, "/reports", as: world.bob, raw: #"{"targetType":"space","targetId":"1","reason":"spam"}"#)
            #expect(badType.status == .badRequest || badType.status == .unprocessableContent)
            let long = CreateReportRequest(
                targetType: .post, targetId: world.clubPost.id, reason: .other,
                note: String(repeating: "n", count: 1001))
            #expect(try await api.call(.post, "/reports", as: world.bob, json: long).error?.field == "note")
            // What the reporter cannot see cannot be reported: a block hides it.
            #expect(try await api.call(.put, "/users/bob/block", as: world.alice).status == .ok)
            #expect(try await api.report(world.bob, .post, world.lonePost.id).status == .notFound)
            #expect(try await api.report(world.bob, .user, world.alice.id).status == .notFound)
            #expect(try await api.get("/admin/reports?state=closed", as: world.admin).error?.field == "state")
            #expect(try await api.resolve(world.admin, "nope", .dismiss).status == .notFound)
        }
    }

    @Test func adminsSeeEveryReportAndASpacesModeratorsOnlyTheirs() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let club = try await api.report(world.bob, .post, world.clubPost.id).decode(Report.self)
            let lone = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            let comment = try await api.report(world.dave, .comment, world.comment.id).decode(Report.self)
            // MUT / validate
            let all = try await api.page("/admin/reports", as: world.admin, of: Report.self)
            #expect(all.items.map(\.id) == [comment.id, lone.id, club.id])
            let first = try await api.page("/admin/reports?limit=2", as: world.admin, of: Report.self)
            let cursor = try #require(first.nextCursor)
            let second = try await api.page("/admin/reports?limit=2&cursor=\(cursor)", as: world.admin, of: Report.self)
            #expect(first.items.map(\.id) + second.items.map(\.id) == all.items.map(\.id) && second.nextCursor == nil)
            let carols = try await api.page("/admin/reports", as: world.carol, of: Report.self)
            #expect(carols.items.map(\.id) == [comment.id, club.id])
            #expect(try await api.page("/admin/reports?state=resolved", as: world.admin, of: Report.self).items.isEmpty)
            // A moderator the owner appoints sees them too; a member does not.
            #expect(try await api.call(.put, "/spaces/club/membership", as: world.dave).status == .ok)
            #expect(try await api.get("/admin/reports", as: world.dave).status == .forbidden)
            try await api.withDatabase { db in
                _ = try await db.write(
                    "UPDATE space_members SET role = 'moderator' WHERE user_id = \(bind: Int64(world.dave.id) ?? 0)")
            }
            #expect(try await api.page("/admin/reports", as: world.dave, of: Report.self).items.count == 2)
            #expect(try await api.resolve(world.carol, lone.id, .dismiss).status == .notFound)
        }
    }

    @Test func aSpacesModeratorTakesPostsOutOfTheSpaceDeletesCommentsAndCannotSuspend() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let byBob = try await api.report(world.bob, .post, world.clubPost.id).decode(Report.self)
            let byDave = try await api.report(world.dave, .post, world.clubPost.id).decode(Report.self)
            let comment = try await api.report(world.bob, .comment, world.comment.id).decode(Report.self)
            #expect(try await api.resolve(world.carol, byBob.id, .suspend).error?.code == "admins_only")
            // MUT
            let removed = try await api.resolve(world.carol, byBob.id, .remove, note: "off topic")
            // validate
            #expect(removed.status == .ok, "\(removed.text)")
            let report = try removed.decode(Report.self)
            #expect(report.state == .resolved && report.action == .remove && report.resolvedBy?.username == "carol")
            #expect(report.resolutionNote == "off topic")
            let post = try await api.get("/posts/\(world.clubPost.id)", as: world.bob).decode(Post.self)
            #expect(post.spaces.isEmpty)
            let feed = try await api.page("/spaces/club/feed", of: Post.self)
            #expect(!feed.items.contains { $0.id == world.clubPost.id })
            // Every open report on the same post is resolved with it, and its reporters hear of it.
            #expect(try await api.resolve(world.carol, byDave.id, .dismiss).error?.code == "report_resolved")
            let resolved = try await api.page("/admin/reports?state=resolved", as: world.admin, of: Report.self)
            #expect(Set(resolved.items.map(\.id)) == [byBob.id, byDave.id])
            for reporter in [world.bob, world.dave] {
                let notes = try await api.page("/me/notifications", as: reporter, of: PlazaAPI.Notification.self)
                #expect(notes.items.contains { $0.kind == .reportResolved && $0.actor.username == "carol" })
            }
            // The comment was on a post that has left the club: no longer hers to remove.
            #expect(try await api.resolve(world.carol, comment.id, .remove).error?.code == "not_in_your_space")
            let audit = try await api.page("/admin/audit", as: world.admin, of: AuditEntry.self)
            #expect(audit.items.first?.action == "post.remove" && audit.items.first?.space == "club")
            #expect(audit.items.first?.actor?.username == "carol" && audit.items.first?.reportId == byBob.id)
        }
    }

    @Test func aSpacesModeratorDeletesACommentOnAPostInTheSpace() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let report = try await api.report(world.bob, .comment, world.comment.id).decode(Report.self)
            #expect(try await api.resolve(world.carol, report.id, .remove).status == .ok)
            let comments = try await api.page("/posts/\(world.clubPost.id)/comments", of: PlazaAPI.Comment.self)
            #expect(comments.items.isEmpty)
        }
    }

    @Test func anAdminDeletesContentDismissesAndCannotRemoveAPerson() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let lone = try await api.report(world.bob, .post, world.lonePost.id).decode(Report.self)
            let comment = try await api.report(world.bob, .comment, world.comment.id).decode(Report.self)
            let person = try await api.report(world.bob, .user, world.alice.id).decode(Report.self)
            let club = try await api.report(world.dave, .post, world.clubPost.id).decode(Report.self)
            // MUT / validate
            #expect(try await api.resolve(world.admin, lone.id, .remove).status == .ok)
            #expect(try await api.get("/posts/\(world.lonePost.id)", as: world.alice).status == .notFound)
            #expect(try await api.resolve(world.admin, comment.id, .remove).status == .ok)
            #expect(try await api.page("/posts/\(world.clubPost.id)/comments", of: PlazaAPI.Comment.self).items.isEmpty)
            #expect(try await api.resolve(world.admin, person.id, .remove).error?.code == "cannot_remove_user")
            let dismissed = try await api.resolve(world.admin, club.id, .dismiss, note: "fine").decode(Report.self)
            #expect(dismissed.state == .resolved && dismissed.action == .dismiss)
            #expect(try await api.get("/posts/\(world.clubPost.id)").status == .ok)
            let audit = try await api.page("/admin/audit", as: world.admin, of: AuditEntry.self)
            #expect(audit.items.map(\.action) == ["report.dismiss", "comment.remove", "post.remove"])
            #expect(audit.items.first?.note == "fine" && audit.items.first?.targetId == world.clubPost.id)
            let page = try await api.page("/admin/audit?limit=1", as: world.admin, of: AuditEntry.self)
            #expect(page.items.count == 1 && page.nextCursor != nil)
            let open = try await api.page("/admin/reports", as: world.admin, of: Report.self)
            #expect(open.items.map(\.id) == [person.id])
        }
    }

    @Test func aSuspensionEndsSessionsHidesEverythingRefusesSignInAndLifts() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let bobsPost = try await api.textPost(world.bob, "bob asks")
            #expect(
                try await api.call(
                    .post, "/posts/\(bobsPost.id)/comments", as: world.alice,
                    json: CreateCommentRequest(body: "zebra reply")
                ).status == .created)
            #expect(try await api.get("/me", as: world.alice).status == .ok)  // the session is cached now
            // Who may not: oneself, another admin, a space's moderator, nobody at all.
            #expect(
                try await api.call(.put, "/admin/users/adm/suspension", as: world.admin).error?.code
                    == "cannot_suspend_self")
            let other = try await api.admin("adm2")
            #expect(
                try await api.call(.put, "/admin/users/adm2/suspension", as: world.admin).error?.code
                    == "cannot_suspend_admin")
            #expect(try await api.call(.put, "/admin/users/alice/suspension", as: world.carol).status == .forbidden)
            #expect(try await api.call(.put, "/admin/users/nobody/suspension", as: world.admin).status == .notFound)
            // MUT
            let suspended = try await api.call(
                .put, "/admin/users/alice/suspension", as: world.admin, json: SuspensionRequest(note: "spam wave"))
            // validate
            #expect(suspended.status == .noContent, "\(suspended.text)")
            #expect(try await api.get("/me", as: world.alice).status == .unauthorized)
            for viewer in [nil, world.bob, world.admin] {
                #expect(try await api.get("/users/alice", as: viewer).status == .notFound)
                #expect(try await api.get("/users/alice/activity", as: viewer).status == .notFound)
                #expect(try await api.page("/search/users?q=alice", as: viewer, of: User.self).items.isEmpty)
                #expect(try await api.get("/posts/\(world.clubPost.id)", as: viewer).status == .notFound)
                #expect(
                    try await api.page("/feed/global", as: viewer, of: Post.self).items.allSatisfy {
                        $0.author.username != "alice"
                    })
                #expect(try await api.page("/search/posts?q=zebra", as: viewer, of: Post.self).items.isEmpty)
                #expect(
                    try await api.page("/posts/\(bobsPost.id)/comments", as: viewer, of: PlazaAPI.Comment.self).items
                        .isEmpty)
            }
            #expect(try await api.page("/feed/home", as: world.carol, of: Post.self).items.isEmpty)
            let login = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "alice", password: world.alice.password))
            #expect(login.status == .forbidden && login.error?.code == "account_suspended")
            #expect(login.error?.message.contains("suspended") == true)
            let wrong = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "alice", password: "wrong password"))
            #expect(wrong.status == .unauthorized)
            // Lifting it: sign-in works and everything is back.
            #expect(try await api.call(.delete, "/admin/users/alice/suspension", as: world.carol).status == .forbidden)
            #expect(try await api.call(.delete, "/admin/users/alice/suspension", as: world.admin).status == .noContent)
            let back = try await api.login("alice")
            #expect(try await api.get("/me", as: back).status == .ok)
            #expect(try await api.get("/users/alice", as: world.bob).status == .ok)
            #expect(try await api.page("/search/users?q=alice", of: User.self).items.map(\.username) == ["alice"])
            #expect(try await api.get("/posts/\(world.clubPost.id)").status == .ok)
            #expect(try await api.page("/search/posts?q=zebra", of: Post.self).items.count == 2)
            #expect(try await api.page("/posts/\(bobsPost.id)/comments", of: PlazaAPI.Comment.self).items.count == 1)
            let audit = try await api.page("/admin/audit", as: other, of: AuditEntry.self)
            #expect(audit.items.map(\.action) == ["user.unsuspend", "user.suspend"])
            #expect(audit.items.last?.note == "spam wave" && audit.items.last?.targetId == world.alice.id)
            #expect(audit.items.last?.targetUser?.username == "alice")
        }
    }

    /// What a suspended person did before is not replayed to anyone's stream: their comment on
    /// someone else's post (which stays readable) and the notification it caused.
    @Test func aSuspendedPersonsEventsAreNotReplayed() async throws {
        try await withLiveApp { api, port async throws in
            let admin = try await api.admin("adm")
            let (alice, bob) = try await api.register("alice", "bob")
            let post = try await api.textPost(bob, "bob asks")
            let stream = try await EventStreamClient.connect(port: port, token: bob.token)
            defer { stream.close() }
            let ready = try #require(await stream.waitFor(1).first)
            #expect(
                try await api.call(
                    .post, "/posts/\(post.id)/comments", as: alice, json: CreateCommentRequest(body: "spam reply")
                ).status == .created)
            #expect(Set(await stream.waitFor(3).map(\.event)) == ["ready", "comment.created", "notification"])
            // MUT
            #expect(try await api.call(.put, "/admin/users/alice/suspension", as: admin).status == .noContent)
            // validate: a replay from before the comment has nothing but its ready event.
            let replay = try await EventStreamClient.connect(port: port, token: bob.token, lastEventID: ready.id)
            defer { replay.close() }
            #expect(await replay.waitFor(1).map(\.event) == ["ready"])
            let sentinel = try await api.textPost(bob, "sentinel")
            #expect(try await replay.waitFor(2).last?.decode(Post.self).id == sentinel.id)
            #expect(try await api.get("/posts/\(post.id)", as: bob).status == .ok)
        }
    }

    @Test func resolvingWithSuspendSuspendsTheAuthorAndTellsTheReporter() async throws {
        try await withApp { api async throws in
            let world = try await ModerationWorld.make(api)
            let report = try await api.report(world.bob, .comment, world.comment.id).decode(Report.self)
            // MUT
            let resolved = try await api.resolve(world.admin, report.id, .suspend, note: "repeat offender")
            // validate
            #expect(try resolved.status == .ok && resolved.decode(Report.self).action == .suspend)
            #expect(try await api.get("/me", as: world.alice).status == .unauthorized)
            #expect(
                try await api.call(
                    .post, "/auth/login", json: LoginRequest(login: "alice", password: world.alice.password)
                )
                .error?.code == "account_suspended")
            let notes = try await api.page("/me/notifications", as: world.bob, of: PlazaAPI.Notification.self)
            #expect(notes.items.first?.kind == .reportResolved && notes.items.first?.actor.username == "adm")
            let audit = try await api.page("/admin/audit", as: world.admin, of: AuditEntry.self)
            #expect(audit.items.first?.action == "user.suspend" && audit.items.first?.reportId == report.id)
        }
    }

    /// Two app servers on one PostgreSQL database: a suspension on one ends the person's cached
    /// session on the other at once, not when its cache entry expires.
    @Test(.enabled(if: TestDatabase.postgresURL != nil))
    func aSuspensionEndsCachedSessionsOnEveryAppServer() async throws {
        let config = try await TestDatabase.config()
        try await TestDatabase.cleaningUp(config) {
            let one = try await buildApplication(config: config, logger: Logger(label: "test"))
            let two = try await buildApplication(config: config, logger: Logger(label: "test"))
            try await one.test(.router) { first in
                try await two.test(.router) { second in
                    let api = TestAPI(client: first, config: config)
                    let other = TestAPI(client: second, config: config)
                    let admin = try await api.admin("adm")
                    let alice = try await api.register("alice")
                    try await Task.sleep(for: .milliseconds(300))  // both servers are listening
                    #expect(try await other.get("/me", as: alice).status == .ok)  // cached on the second
                    #expect(try await api.call(.put, "/admin/users/alice/suspension", as: admin).status == .noContent)
                    let start = ContinuousClock.now
                    var status = try await other.get("/me", as: alice).status
                    while status == .ok, ContinuousClock.now - start < .seconds(2) {
                        try await Task.sleep(for: .milliseconds(20))
                        status = try await other.get("/me", as: alice).status
                    }
                    #expect(status == .unauthorized)
                }
            }
        }
    }
}
