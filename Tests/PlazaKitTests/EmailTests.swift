import Foundation
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

/// Mailed links through the SDK, against a real `plaza serve` with no SMTP server: the mail is
/// read from `<data-dir>/outbox/` as a person would read it from their inbox.
@Suite("PlazaKit email and password reset against a running plaza serve")
struct EmailTests {
    static let password = "correct horse battery"

    /// The link mailed at sign-up confirms the address; a change of address waits for its own
    /// link, and the old address is told once it is opened.
    @Test func anAddressIsConfirmedAndChangedByMailedLinks() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            #expect(try await ana.me().emailVerified == false)
            let welcome = try await server.mails(to: "ana@example.com", containing: "/verify-email?token=")
            let token = try #require(welcome.first?.token(of: "/verify-email"))

            // MUT: the link, opened on a device that is not signed in.
            try await PlazaClient(baseURL: server.url).verifyEmail(token: token)
            let verified = try await ana.me()
            #expect(verified.emailVerified && verified.pendingEmail == nil)
            do {
                try await ana.verifyEmail(token: token)
                Issue.record("a link works once")
            } catch let error as PlazaClientError {
                #expect(error.status == 400 && error.code == "invalid_link")
            }
            do {
                try await ana.resendEmailVerification()
                Issue.record("a confirmed address needs no link")
            } catch let error as PlazaClientError {
                #expect(error.status == 409 && error.code == "already_verified")
            }

            do {
                try await ana.changeEmail(to: "ana@new.example", currentPassword: "not my password")
                Issue.record("a change of address needs the password")
            } catch let error as PlazaClientError {
                #expect(error.status == 403 && error.code == "wrong_password")
            }
            try await ana.changeEmail(to: "ana@new.example", currentPassword: Self.password)
            let pending = try await ana.me()
            #expect(pending.email == "ana@example.com" && pending.pendingEmail == "ana@new.example")
            do {
                try await ana.resendEmailVerification()
                Issue.record("one link a minute")
            } catch let error as PlazaClientError {
                #expect(error.status == 429 && error.code == "rate_limited")
                #expect((1...60).contains(error.retryAfter ?? 0))
            }
            let link = try await server.mails(to: "ana@new.example", containing: "/verify-email?token=")
            try await ana.verifyEmail(token: try #require(link.first?.token(of: "/verify-email")))
            let changed = try await ana.me()
            #expect(changed.email == "ana@new.example" && changed.emailVerified && changed.pendingEmail == nil)
            let notice = try await server.mails(to: "ana@example.com", containing: "ana@new.example")
            #expect(notice.first?.token(of: "/verify-email") == nil, "the notice carries no link to the account")
            #expect(try await ana.login("ana@new.example", password: Self.password).email == "ana@new.example")

            // The same address again (in any case) is no change: nothing is pending.
            try await ana.changeEmail(to: "ANA@new.example", currentPassword: Self.password)
            #expect(try await ana.me().pendingEmail == nil)
        }
    }

    /// A reset link signs in with the new password on the device that opened it, ends every
    /// other session, and works once.
    @Test func aForgottenPasswordIsResetByAMailedLink() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let phone = PlazaClient(baseURL: server.url)
            try await phone.forgotPassword(email: "ANA@example.com")
            let mail = try await server.mails(to: "ana@example.com", containing: "/reset-password?token=")
            let token = try #require(mail.first?.token(of: "/reset-password"))

            // MUT
            let me = try await phone.resetPassword(token: token, newPassword: "a brand new password")
            #expect(me.user.username == "ana")
            #expect(me.emailVerified, "the link proved the address")
            #expect(try await phone.me().user.username == "ana")
            do {
                _ = try await ana.me()
                Issue.record("a reset ends the other sessions")
            } catch let error as PlazaClientError {
                #expect(error.status == 401 && error.code == "invalid_token")
            }
            #expect(await ana.tokens.token() == nil)
            do {
                try await PlazaClient(baseURL: server.url).resetPassword(token: token, newPassword: "another password")
                Issue.record("a reset link works once")
            } catch let error as PlazaClientError {
                #expect(error.status == 400 && error.code == "invalid_link")
            }
            do {
                try await ana.login("ana", password: Self.password)
                Issue.record("the old password is gone")
            } catch let error as PlazaClientError {
                #expect(error.status == 401)
            }
            #expect(try await ana.login("ana", password: "a brand new password").user.username == "ana")
        }
    }

    /// With two-factor sign-in on, a reset changes the password and then asks for the second
    /// factor, as `login` does.
    @Test func aResetWithTwoFactorOnAsksForTheSecondFactor() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let setup = try await ana.beginTwoFactor(currentPassword: Self.password)
            let secret = try #require(base32Decode(setup.secret))
            let recoveryCodes = try await ana.confirmTwoFactor(code: authenticatorCode(secret, offset: 0))
            let phone = PlazaClient(baseURL: server.url)
            try await phone.forgotPassword(email: "ana@example.com")
            let mail = try await server.mails(to: "ana@example.com", containing: "/reset-password?token=")
            let token = try #require(mail.first?.token(of: "/reset-password"))

            do {
                try await phone.resetPassword(token: token, newPassword: "a brand new password")
                Issue.record("the link alone must not sign in")
            } catch let error as PlazaClientError {
                #expect(error.status == 401 && error.code == "second_factor_required")
                #expect(await phone.tokens.token() == nil)
                let challenge = try #require(error.challenge)
                let me = try await phone.completeLogin(challenge: challenge, code: try #require(recoveryCodes.first))
                #expect(me.user.username == "ana")
            }
            #expect(try await phone.me().user.username == "ana")
            do {
                try await PlazaClient(baseURL: server.url).login("ana", password: "a brand new password")
                Issue.record("the new password alone must not sign in either")
            } catch let error as PlazaClientError {
                #expect(error.code == "second_factor_required", "the new password is the right one")
            }
        }
    }

    /// Admins list the outbox, newest first, by state and page by page; nobody else may.
    @Test func adminsListTheOutbox() async throws {
        try await withServer { server in
            let admin = try await server.admin("root")
            let ana = try await signedUp("ana", on: server)
            let anonymous = PlazaClient(baseURL: server.url)
            try await anonymous.forgotPassword(email: "nobody@example.com")
            try await anonymous.forgotPassword(email: "ana@example.com")
            _ = try await server.mails(to: "ana@example.com", count: 2)

            // The file is written just before its row is marked sent: wait for the mark.
            var sent: [OutgoingMail] = []
            for _ in 0..<3_000 {
                sent = try await admin.outgoingMail(state: .sent).items
                if sent.count == 2 { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(sent.map(\.kind) == ["password_reset", "verify_email"])
            #expect(sent.allSatisfy { $0.to == "ana@example.com" && $0.state == "sent" && $0.attempts == 1 })
            #expect(sent.allSatisfy { $0.sentAt != nil && $0.nextAttemptAt == nil && $0.lastError == nil })
            #expect(try await admin.outgoingMail().items == sent, "no mail for an address nobody has")
            #expect(try await admin.outgoingMail(state: .failed).items.isEmpty)
            #expect(try await admin.outgoingMail(state: .pending).items.isEmpty)

            let first = try await admin.outgoingMail(page: PageOptions(limit: 1))
            #expect(first.items.map(\.id) == [sent[0].id])
            let second = try await admin.outgoingMail(page: PageOptions(limit: 1, cursor: first.nextCursor))
            #expect(second.items.map(\.id) == [sent[1].id] && second.nextCursor == nil)

            do {
                _ = try await ana.outgoingMail()
                Issue.record("the outbox is for admins")
            } catch let error as PlazaClientError {
                #expect(error.status == 403)
            }
        }
    }
}
