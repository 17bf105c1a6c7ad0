import Foundation
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Registration modes (open, approval, invite, closed) and the instance's settings, through the
/// API as anyone, a member and an admin.
@Suite("Registrations and instance settings")
struct RegistrationTests {
    static func admin(_ api: TestAPI, _ name: String = "root") async throws -> Account {
        let root = try await api.register(name)
        try await api.withDatabase { db in
            try await db.write {
                try await $0.exec("UPDATE users SET is_admin = TRUE WHERE username_key = \(bind: name)")
            }
        }
        return root
    }

    static func signUp(_ api: TestAPI, _ name: String, invite: String? = nil, reason: String? = nil) async throws
        -> TestResponse
    {
        try await api.call(
            .post, "/auth/register",
            json: RegisterRequest(
                username: name, email: "\(name)@example.com", password: "correct horse battery", invite: invite,
                reason: reason))
    }

    static func setMode(_ api: TestAPI, _ mode: RegistrationMode, by admin: Account) async throws {
        let set = try await api.call(.patch, "/admin/instance", as: admin, json: InstancePatch(registrations: mode))
        #expect(set.status == .ok, "\(set.text)")
        #expect(try set.decode(InstanceInfo.self).registrations == mode)
    }

    static func mails(_ api: TestAPI, kind: String) async throws -> [String] {
        try await api.withDatabase { db in
            try await db.read {
                try await $0.rows("SELECT recipient FROM mail_outbox WHERE kind = \(bind: kind) ORDER BY id")
            }.map { try $0.decode(column: "recipient", as: String.self) }
        }
    }

    @Test func aboutSaysWhatAdminsSetAndOnlyAdminsSetIt() async throws {
        try await withApp({ $0.instanceName = "Riverside" }) { api async throws in
            let about = try await api.get("/about").decode(InstanceInfo.self)
            #expect(about.name == "Riverside" && about.registrations == .open && about.rules.isEmpty)
            #expect(about.version == PlazaVersion.number)
            let root = try await Self.admin(api)
            let ana = try await api.register("ana")
            let patch = InstancePatch(
                name: "Riverside Runners", description: "Runs by the river.",
                rules: [.init(text: "Be kind."), .init(text: "No ads.")], contact: "admins@riverside.example")
            #expect(try await api.call(.patch, "/admin/instance", as: ana, json: patch).status == .forbidden)
            #expect(try await api.call(.patch, "/admin/instance", json: patch).status == .unauthorized)
            let set = try await api.call(.patch, "/admin/instance", as: root, json: patch).decode(InstanceInfo.self)
            #expect(set.name == "Riverside Runners" && set.description == "Runs by the river.")
            #expect(set.rules == [.init(id: "1", text: "Be kind."), .init(id: "2", text: "No ads.")])
            #expect(set.contact == "admins@riverside.example")
            #expect(try await api.get("/about").decode(InstanceInfo.self) == set)
            // The new name is the web app's, and the mails' from now on.
            let home = try await api.page(.get, "/login").text
            #expect(
                home.contains("· Riverside Runners</title>")
                    && home.contains(#"class="brand" href="/">Riverside Runners<"#))
            _ = try await api.register("bea")
            #expect(
                try await api.mails(to: "bea@example.com").first?.subject
                    == "Confirm your email address for Riverside Runners")
            // A rule given its id keeps it; a new one gets the next; an empty text clears a field.
            let edited = try await api.call(
                .patch, "/admin/instance", as: root,
                json: InstancePatch(
                    description: "", rules: [.init(id: "2", text: "No ads, ever."), .init(text: "Credit photos.")])
            ).decode(InstanceInfo.self)
            #expect(edited.rules == [.init(id: "2", text: "No ads, ever."), .init(id: "3", text: "Credit photos.")])
            #expect(edited.description == "" && edited.name == "Riverside Runners")
            // Bad input: 422, nothing changed.
            for bad in [
                #"{"name":""}"#, #"{"registrations":"sometimes"}"#, #"{"rules":[{"text":" "}]}"#,
                #"{"name":"\#(String(repeating: "x", count: 61))"}"#,
            ] {
                let refused = try await api.call(.patch, "/admin/instance", as: root, raw: bad)
                #expect(refused.status == .unprocessableContent || refused.status == .badRequest, "\(bad)")
            }
            #expect(try await api.get("/about").decode(InstanceInfo.self) == edited)
            // Every change is in the audit log.
            let audit = try await api.get("/admin/audit", as: root).decode(Page<AuditEntry>.self)
            #expect(audit.items.filter { $0.action == "instance.update" }.count == 2)
        }
    }

    @Test func approvalMakesSignUpsWaitUntilAnAdminDecides() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            try await Self.setMode(api, .approval, by: root)
            let waiting = try await Self.signUp(api, "ana", reason: "I run by the river.")
            #expect(waiting.status == .accepted)
            #expect(try waiting.decode(PendingRegistration.self).status == "pending")
            #expect(try await Self.mails(api, kind: "sign_up_waiting") == ["root@example.com"])
            // Not signed in, not seen, and told why the password does not sign in.
            let login = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: "correct horse battery"))
            #expect(login.status == .forbidden && login.error?.code == "pending_approval")
            let wrong = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: "wrong one!"))
            #expect(wrong.status == .unauthorized)
            #expect(try await api.get("/users/ana").status == .notFound)
            // Lifting a "suspension" does not let a waiting sign-up in: only approving does.
            #expect(try await api.call(.delete, "/admin/users/ana/suspension", as: root).status == .noContent)
            #expect(try await api.get("/users/ana").status == .notFound)
            // The admins' list; nobody else sees it.
            let list = try await api.get("/admin/registrations", as: root).decode(Page<RegistrationRequest>.self)
            #expect(list.items.map(\.username) == ["ana"] && list.items.first?.reason == "I run by the river.")
            let bea = try await Self.signUp(api, "bea")
            #expect(bea.status == .accepted)
            // Bea, approved behind the API's back, is a member but no admin.
            try await api.withDatabase { db in
                try await db.write {
                    try await $0.exec(
                        "UPDATE users SET pending_since = NULL, suspended_at = NULL WHERE username_key = 'bea'")
                }
            }
            let beaSignedIn = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "bea", password: "correct horse battery"))
            let beaToken = try beaSignedIn.decode(AuthResponse.self).token
            #expect(try await api.call(.get, "/admin/registrations", token: beaToken).status == .forbidden)
            #expect(try await api.call(.put, "/admin/registrations/ana", token: beaToken).status == .forbidden)
            // Approved: signs in, is seen, and is mailed.
            #expect(try await api.call(.put, "/admin/registrations/ana", as: root).status == .noContent)
            #expect(try await api.call(.put, "/admin/registrations/ana", as: root).status == .notFound)
            let approved = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: "correct horse battery"))
            #expect(approved.status == .ok)
            #expect(try await api.get("/users/ana").status == .ok)
            #expect(try await Self.mails(api, kind: "registration_approved") == ["ana@example.com"])
            // Rejected: the account is gone and its name free again.
            #expect(try await Self.signUp(api, "cyd").status == .accepted)
            #expect(try await api.call(.delete, "/admin/registrations/cyd", as: root).status == .noContent)
            #expect(try await Self.mails(api, kind: "registration_rejected") == ["cyd@example.com"])
            #expect(
                try await api.get("/admin/registrations", as: root).decode(Page<RegistrationRequest>.self).items.isEmpty
            )
            try await Self.setMode(api, .open, by: root)
            #expect(try await Self.signUp(api, "cyd").status == .created)
            let audit = try await api.get("/admin/audit", as: root).decode(Page<AuditEntry>.self).items.map(\.action)
            #expect(audit.contains("user.approve") && audit.contains("user.reject"))
        }
    }

    /// Two admins decide one sign-up at once (on PostgreSQL, on two connections): one decision
    /// wins, the other finds nothing waiting, and the person gets one mail. Two sign-ups race
    /// for an invite's last use: one account is made.
    @Test func concurrentDecisionsAndInviteUsesHaveOneWinner() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            let other = try await Self.admin(api, "boss")
            try await Self.setMode(api, .approval, by: root)
            for round in 0..<5 {
                let name = "waiter\(round)"
                #expect(try await Self.signUp(api, name).status == .accepted)
                async let approve = api.call(.put, "/admin/registrations/\(name)", as: root)
                async let reject = api.call(.delete, "/admin/registrations/\(name)", as: other)
                let statuses = [try await approve.status, try await reject.status]
                #expect(statuses.filter { $0 == .noContent }.count == 1 && statuses.contains(.notFound), "\(statuses)")
                let approved = statuses[0] == .noContent
                #expect(try await api.get("/users/\(name)").status == (approved ? .ok : .notFound))
            }
            let decided =
                try await Self.mails(api, kind: "registration_approved")
                + Self.mails(api, kind: "registration_rejected")
            #expect(decided.sorted() == (0..<5).map { "waiter\($0)@example.com" })

            try await Self.setMode(api, .invite, by: root)
            let invite = try await api.call(.post, "/admin/invites", as: root, json: CreateInviteRequest(maxUses: 1))
                .decode(InstanceInvite.self)
            async let first = Self.signUp(api, "racer1", invite: invite.code)
            async let second = Self.signUp(api, "racer2", invite: invite.code)
            let raced = [try await first.status, try await second.status]
            #expect(raced.filter { $0 == .created }.count == 1 && raced.contains(.forbidden), "\(raced)")
            #expect(
                try await api.get("/admin/invites", as: root).decode(Page<InstanceInvite>.self).items.first?.uses == 1)
        }
    }

    @Test func inviteModeTakesAValidInviteOnly() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            let ana = try await api.register("ana")
            try await Self.setMode(api, .invite, by: root)
            let none = try await Self.signUp(api, "bea")
            #expect(none.status == .forbidden && none.error?.code == "invite_required")
            #expect(try await Self.signUp(api, "bea", invite: "made-up").error?.code == "invite_required")
            // Admins make invites; members do not.
            #expect(
                try await api.call(.post, "/admin/invites", as: ana, json: CreateInviteRequest()).status == .forbidden)
            let once = try await api.call(.post, "/admin/invites", as: root, json: CreateInviteRequest(maxUses: 1))
            #expect(once.status == .created)
            let invite = try once.decode(InstanceInvite.self)
            #expect(invite.url.hasSuffix("/signup?invite=\(invite.code)") && invite.uses == 0 && invite.maxUses == 1)
            #expect(try await Self.signUp(api, "bea", invite: invite.code).status == .created)
            // Used up: refused, and no account made.
            let again = try await Self.signUp(api, "cyd", invite: invite.code)
            #expect(again.status == .forbidden && again.error?.code == "invite_required")
            #expect(try await api.get("/users/cyd").status == .notFound)
            let listed = try await api.get("/admin/invites", as: root).decode(Page<InstanceInvite>.self)
            #expect(listed.items.map(\.uses) == [1] && listed.items.first?.createdBy?.username == "root")
            // An invite past its end is refused; a revoked one too.
            let past = Timestamp(milliseconds: Timestamp.now.milliseconds - 1000)
            #expect(
                try await api.call(.post, "/admin/invites", as: root, json: CreateInviteRequest(expiresAt: past)).status
                    == .unprocessableContent)
            let open = try await api.call(.post, "/admin/invites", as: root, raw: "").decode(InstanceInvite.self)
            #expect(open.maxUses == nil && open.expiresAt == nil)
            try await api.withDatabase { db in
                try await db.write {
                    try await $0.exec("UPDATE invites SET expires_at = 1 WHERE code = \(bind: open.code)")
                }
            }
            #expect(try await Self.signUp(api, "cyd", invite: open.code).status == .forbidden)
            let later = try await api.call(.post, "/admin/invites", as: root, raw: "{}").decode(InstanceInvite.self)
            #expect(try await api.call(.delete, "/admin/invites/\(later.code)", as: root).status == .noContent)
            #expect(try await Self.signUp(api, "cyd", invite: later.code).status == .forbidden)
            #expect(try await api.call(.delete, "/admin/invites/\(later.code)", as: root).status == .notFound)
        }
    }

    /// Members invite when the admins allow it, within members' limits, and see and revoke only
    /// their own; an invite also lets its holder past approval.
    @Test func membersInviteWhenAdminsAllowIt() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            let (ana, ben) = try await api.register("ana", "ben")
            try await Self.setMode(api, .invite, by: root)
            let refused = try await api.call(.post, "/invites", as: ana, raw: "")
            #expect(refused.status == .forbidden && refused.error?.code == "invites_disabled")
            #expect(try await api.get("/about").decode(InstanceInfo.self).membersMayInvite == false)
            // Only admins turn it on.
            #expect(
                try await api.call(.patch, "/admin/instance", as: ana, json: InstancePatch(membersMayInvite: true))
                    .status == .forbidden)
            let on = try await api.call(
                .patch, "/admin/instance", as: root, json: InstancePatch(membersMayInvite: true))
            #expect(try on.decode(InstanceInfo.self).membersMayInvite)

            // A member's invite has limits: 10 uses and a week unless asked, at most 100 and 30 days.
            let made = try await api.call(.post, "/invites", as: ana, raw: "")
            #expect(made.status == .created)
            let invite = try made.decode(InstanceInvite.self)
            let week = Timestamp.now.milliseconds + 7 * 86_400_000
            #expect(invite.maxUses == 10 && invite.createdBy?.username == "ana")
            #expect(abs((invite.expiresAt?.milliseconds ?? 0) - week) < 60_000)
            #expect(
                try await api.call(.post, "/invites", as: ana, json: CreateInviteRequest(maxUses: 101)).status
                    == .unprocessableContent)
            let far = Timestamp(milliseconds: Timestamp.now.milliseconds + 32 * 86_400_000)
            #expect(
                try await api.call(.post, "/invites", as: ana, json: CreateInviteRequest(expiresAt: far)).status
                    == .unprocessableContent)
            // An admin's own invite through the same route has no such limits.
            let rootsOwn = try await api.call(.post, "/invites", as: root, raw: "").decode(InstanceInvite.self)
            #expect(rootsOwn.maxUses == nil && rootsOwn.expiresAt == nil)

            // Each sees their own; the admins' list has them all; nobody revokes another's.
            #expect(
                try await api.get("/invites", as: ana).decode(Page<InstanceInvite>.self).items.map(\.code) == [
                    invite.code
                ])
            #expect(try await api.get("/invites", as: ben).decode(Page<InstanceInvite>.self).items.isEmpty)
            #expect(try await api.get("/admin/invites", as: root).decode(Page<InstanceInvite>.self).items.count == 2)
            #expect(try await api.call(.delete, "/invites/\(invite.code)", as: ben).status == .notFound)
            #expect(try await api.call(.delete, "/invites/\(invite.code)", as: root).status == .notFound)

            // It signs people up; in approval mode it lets them past the wait.
            #expect(try await Self.signUp(api, "cyd", invite: invite.code).status == .created)
            try await Self.setMode(api, .approval, by: root)
            #expect(try await Self.signUp(api, "dee", invite: invite.code).status == .created)
            #expect(try await Self.signUp(api, "eve", invite: "made-up").error?.code == "invite_required")
            #expect(try await Self.signUp(api, "fay").status == .accepted)
            #expect(try await api.get("/invites", as: ana).decode(Page<InstanceInvite>.self).items.first?.uses == 2)

            // At most 20 working invites at a time; a revoked one makes room.
            for _ in 1..<InstanceStore.maxMemberInvites {
                #expect(try await api.call(.post, "/invites", as: ben, raw: "").status == .created)
            }
            #expect(try await api.call(.post, "/invites", as: ben, raw: "").status == .created)
            let full = try await api.call(.post, "/invites", as: ben, raw: "")
            #expect(full.status == .forbidden && full.error?.code == "too_many_invites")
            let oldest = try await api.get("/invites?limit=50", as: ben).decode(Page<InstanceInvite>.self).items.last
            #expect(try await api.call(.delete, "/invites/\(oldest?.code ?? "")", as: ben).status == .noContent)
            #expect(try await api.call(.post, "/invites", as: ben, raw: "").status == .created)

            // A suspended member's links stop at once (their holders would skip approval).
            let bens = try await api.get("/invites", as: ben).decode(Page<InstanceInvite>.self).items
            #expect(try await api.call(.put, "/admin/users/ben/suspension", as: root).status == .noContent)
            let stopped = try await Self.signUp(api, "gil", invite: bens.first?.code)
            #expect(stopped.status == .forbidden && stopped.error?.code == "invite_required")
            #expect(try await api.call(.delete, "/admin/users/ben/suspension", as: root).status == .noContent)
            #expect(try await Self.signUp(api, "gil", invite: bens.first?.code).status == .created)
            // In approval mode the sign-up page takes a code too, filled in from the link.
            let form = try await api.page(.get, "/signup?invite=\(invite.code)").text
            #expect(form.contains(#"name="invite" maxlength="64" value="\#(invite.code)""#))

            // The web app: settings lead to the page of one's invites, whose form keeps members' limits.
            #expect(try await api.page(.get, "/settings", cookie: ana.cookie).text.contains(#"href="/invites""#))
            let page = try await api.page(.get, "/invites", cookie: ana.cookie).text
            #expect(page.contains(#"data-api="POST /api/v1/invites""#) && page.contains(#"max="100" value="10""#))
            #expect(page.contains(invite.url) && !page.contains(rootsOwn.url))

            // Turned off again: members make no more, and the web app offers none.
            _ = try await api.call(.patch, "/admin/instance", as: root, json: InstancePatch(membersMayInvite: false))
            #expect(try await api.call(.post, "/invites", as: ana, raw: "").error?.code == "invites_disabled")
            #expect(!(try await api.page(.get, "/settings", cookie: ana.cookie).text.contains(#"href="/invites""#)))
            let off = try await api.page(.get, "/invites", cookie: ana.cookie).text
            #expect(!off.contains("POST /api/v1/invites") && off.contains(invite.url))
        }
    }

    /// The name pages, mails and pushes use is read again once older than its age, and a
    /// slower read that started earlier never replaces a newer one.
    @Test func theInstanceNameIsReadAgainWhenOld() async throws {
        try await withApp { api async throws in
            try await api.withDatabase { db in
                func rename(_ name: String) async throws {
                    try await db.write {
                        try await $0.exec(
                            """
                            INSERT INTO instance_settings (key, value) VALUES ('name', \(bind: name))
                            ON CONFLICT (key) DO UPDATE SET value = excluded.value
                            """)
                    }
                }
                let always = InstanceName("Env", db: db, maxAge: .zero)
                #expect(always.current == "Env")
                let first = await always.fresh()
                #expect(first == "Env")
                try await rename("Hillside")
                #expect(await always.fresh() == "Hillside")
                let kept = InstanceName("Env", db: db, maxAge: .seconds(3600))
                #expect(await kept.fresh() == "Hillside")
                try await rename("Valley")
                #expect(await kept.fresh() == "Hillside")
                let earlier = ContinuousClock.now - .seconds(1)
                kept.set("Older read", readAt: earlier)
                #expect(kept.current == "Hillside")
            }
        }
    }

    @Test func closedRefusesEveryoneAndTheEnvironmentSetsTheFirstMode() async throws {
        try await withApp({ $0.registrations = .closed }) { api async throws in
            #expect(try await api.get("/about").decode(InstanceInfo.self).registrations == .closed)
            let refused = try await Self.signUp(api, "ana")
            #expect(refused.status == .forbidden && refused.error?.code == "registrations_closed")
            // Operators still make accounts on the command line; an admin opens sign-ups.
            let rootID = try await api.withDatabase { db in
                try await AppServices(config: api.config, db: db).accounts.createUser(
                    .init(
                        username: "root", email: "root@example.com", passwordHash: "", displayName: "root",
                        isAdmin: true))
            }
            let session = try await api.withDatabase { db in
                try await AppServices(config: api.config, db: db).accounts.createSession(
                    userID: rootID, userAgent: nil, ip: nil)
            }
            let opened = try await api.call(
                .patch, "/admin/instance", token: session, json: InstancePatch(registrations: .open))
            #expect(opened.status == .ok)
            #expect(try await Self.signUp(api, "ana").status == .created)
        }
    }

    /// Mastodon's instance entities and rules say what the admins set, in Mastodon's shapes.
    @Test func mastodonsInstanceSaysWhatAdminsSet() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            let patch = InstancePatch(
                name: "Riverside", description: "Runs by the river.", rules: [.init(text: "Be kind.")],
                contact: "admins@riverside.example", registrations: .approval)
            #expect(try await api.call(.patch, "/admin/instance", as: root, json: patch).status == .ok)
            let v1 = try await api.mastodon(.get, "/api/v1/instance").json()
            try MastodonTests.expectDocumented("Instance_v1", v1)
            #expect(v1["title"]?.stringValue == "Riverside" && v1["description"]?.stringValue == "Runs by the river.")
            #expect(v1["registrations"] == .bool(true) && v1["approval_required"] == .bool(true))
            #expect(v1["email"]?.stringValue == "admins@riverside.example")
            let v2 = try await api.mastodon(.get, "/api/v2/instance").json()
            try MastodonTests.expectDocumented("Instance_v2", v2)
            #expect(v2["registrations"]?["approval_required"] == .bool(true))
            #expect(v2["rules"]?.array.first?["text"]?.stringValue == "Be kind.")
            let rules = try await api.mastodon(.get, "/api/v1/instance/rules").json()
            #expect(rules.array.map { $0["text"]?.stringValue } == ["Be kind."])
            #expect(rules.array.first == v2["rules"]?.array.first)
            try await Self.setMode(api, .closed, by: root)
            #expect(try await api.mastodon(.get, "/api/v1/instance").json()["registrations"] == .bool(false))
        }
    }

    /// The admins' overview counts what is there; their list of people finds by name; roles and
    /// two-factor change only by another admin, each in the audit log.
    @Test func theAdminsOverviewPeopleRolesAndTwoFactor() async throws {
        try await withApp { api async throws in
            let root = try await Self.admin(api)
            let (ana, bea) = try await api.register("ana", "bea")
            #expect(try await api.get("/admin/overview", as: ana).status == .forbidden)
            #expect(try await api.get("/admin/users", as: ana).status == .forbidden)
            try await api.withDatabase { db in
                try await db.write {
                    try await $0.exec("UPDATE users SET media_bytes = 5000 WHERE username_key = 'bea'")
                    try await $0.exec("UPDATE users SET media_bytes = 900 WHERE username_key = 'ana'")
                }
            }
            let overview = try await api.get("/admin/overview", as: root).decode(AdminOverview.self)
            #expect(overview.people == .init(total: 3, admins: 1, pending: 0, suspended: 0))
            #expect(overview.storageBytes == 5900 && overview.topStorage.map(\.user.username) == ["bea", "ana"])
            #expect(overview.databaseBytes > 0 && overview.version.hasPrefix(PlazaVersion.number))
            #expect(overview.mail.pending + overview.mail.failed >= 0 && overview.openReports == 0)

            let found = try await api.get("/admin/users?q=B", as: root).decode(Page<AdminUser>.self)
            #expect(found.items.map(\.user.username) == ["bea"] && found.items.first?.role == "member")
            let all = try await api.get("/admin/users", as: root).decode(Page<AdminUser>.self)
            #expect(all.items.map(\.user.username) == ["bea", "ana", "root"])

            // Roles: an admin makes another; nobody changes their own; bad input is 422.
            let role = { (who: String, to: String, by: Account) in
                try await api.call(.put, "/admin/users/\(who)/role", as: by, json: RoleRequest(role: to))
            }
            #expect(try await role("bea", "admin", ana).status == .forbidden)
            #expect(try await role("bea", "admin", root).status == .noContent)
            #expect(try await api.get("/admin/overview", as: bea).status == .ok)
            #expect(try await role("bea", "member", bea).status == .unprocessableContent)
            #expect(try await role("bea", "owner", root).status == .unprocessableContent)
            #expect(try await role("nobody", "admin", root).status == .notFound)
            #expect(try await role("bea", "member", root).status == .noContent)
            #expect(try await api.get("/admin/overview", as: bea).status == .forbidden)

            // Two-factor off: ana's sign-in needs her password alone again.
            try await api.withDatabase { db in
                try await db.write {
                    try await $0.exec(
                        "INSERT INTO two_factor (user_id, secret, confirmed_at, created_at) VALUES (\(bind: Int64(ana.id)!), 'x', 1, 1)"
                    )
                }
            }
            #expect(try await api.logIn(ana).error?.code == "second_factor_required")
            #expect(
                try await api.get("/admin/users?q=ana", as: root).decode(Page<AdminUser>.self).items.first?.twoFactor
                    == true)
            #expect(try await api.call(.delete, "/admin/users/ana/two-factor", as: bea).status == .forbidden)
            #expect(try await api.call(.delete, "/admin/users/ana/two-factor", as: root).status == .noContent)
            #expect(try await api.logIn(ana).status == .ok)
            let audit = try await api.get("/admin/audit", as: root).decode(Page<AuditEntry>.self).items.map(\.action)
            #expect(audit.filter { $0 == "user.role" }.count == 2 && audit.contains("user.two_factor_off"))
        }
    }
}
