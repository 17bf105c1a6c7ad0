import Foundation
import PlazaAPI
import PlazaKit
import Testing

/// PlazaKit's calls for the instance against a running `plaza serve`: what it says of itself,
/// sign-ups in each registration mode (a pending one is not a failure), invites, reports that
/// cite rules, and the admins' calls.
@Suite("PlazaKit: the instance, sign-ups and invites against a running plaza serve", .serialized)
struct InstanceTests {
    static let password = "correct horse battery"

    static func signUp(_ server: PlazaProcess, _ username: String, invite: String? = nil, reason: String? = nil)
        async throws -> (PlazaClient, PlazaClient.SignUp)
    {
        let client = PlazaClient(baseURL: server.url, transport: URLSessionTransport())
        let outcome = try await client.register(
            username: username, email: "\(username)@example.com", password: password, invite: invite, reason: reason)
        return (client, outcome)
    }

    @Test func signUpModesInvitesRulesAndTheAdminsCalls() async throws {
        try await withServer { server in
            let root = try await server.admin("root")
            let anonymous = PlazaClient(baseURL: server.url, transport: URLSessionTransport())
            #expect(try await anonymous.about().registrations == .open)
            let about = try await root.updateInstance(
                InstancePatch(rules: [.init(text: "Be kind")], registrations: .approval, membersMayInvite: true))
            #expect(about.registrations == .approval && about.membersMayInvite && about.rules.count == 1)

            // Approval: the sign-up waits, holds no token, and signs in once an admin approves.
            let (bea, waiting) = try await Self.signUp(server, "bea", reason: "I cook ramen")
            #expect(waiting == .pending)
            #expect(await bea.tokens.token() == nil)
            let queue = try await root.pendingRegistrations()
            #expect(queue.items.map(\.username) == ["bea"] && queue.items.first?.reason == "I cook ramen")
            try await root.decideRegistration("bea", approve: true)
            _ = try await bea.login("bea", password: Self.password)

            // A member's invite lets someone in without waiting.
            let invite = try await bea.createInvite()
            #expect(invite.maxUses == 10 && invite.createdBy?.username == "bea")
            let (cyd, joined) = try await Self.signUp(server, "cyd", invite: invite.code)
            guard case .signedIn(let me) = joined else {
                Issue.record("an invite skips approval: \(joined)")
                return
            }
            #expect(me.user.username == "cyd")
            #expect(try await bea.invites().items.first?.uses == 1)
            try await bea.revokeInvite(invite.code)
            #expect(try await root.allInvites().items.isEmpty)

            // A report cites the rules it breaks.
            let post = try await root.createPost(CreatePostRequest(kind: .text, title: "Sale", body: "Buy now"))
            let report = try await cyd.report(.post, id: post.id, reason: .rules, ruleIds: [about.rules[0].id])
            #expect(report.rules.map(\.text) == ["Be kind"])

            // The admins' figures and people.
            let overview = try await root.adminOverview()
            #expect(overview.people.total == 3 && overview.people.admins == 1 && overview.openReports == 1)
            #expect(try await root.adminUsers(query: "cy").items.map(\.user.username) == ["cyd"])
            try await root.setRole(of: "cyd", to: .moderator)
            #expect(try await root.adminUsers(query: "cy").items.first?.role == "moderator")
            #expect(try await cyd.reports().items.map(\.id) == [report.id])
            try await root.setRole(of: "cyd", to: .admin)
            #expect(try await root.adminUsers(query: "cy").items.first?.role == "admin")
            do {
                _ = try await cyd.turnOffTwoFactor(of: "root")
            } catch let error as PlazaClientError {
                Issue.record("an admin turns off another's two-factor: \(error)")
            }

            // Closed: nobody signs up.
            _ = try await root.updateInstance(InstancePatch(registrations: .closed))
            do {
                _ = try await Self.signUp(server, "dee")
                Issue.record("a closed server refuses sign-ups")
            } catch let error as PlazaClientError {
                #expect(error.status == 403 && error.code == "registrations_closed")
            }
        }
    }
}
