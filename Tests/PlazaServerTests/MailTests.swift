import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Email: verification, password reset, the outbox", .serialized)
struct MailTests {
    // MARK: addresses

    @Test func signingUpMailsALinkThatConfirmsTheAddressOnce() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            #expect(ana.me.emailVerified == false)
            let mail = try #require(try await api.mails(to: "ana@example.com").first)
            #expect(mail.subject == "Confirm your email address for Plaza")
            #expect(mail.headers["from"] == "\"Plaza\" <noreply@localhost>")
            #expect(mail.html.contains("Confirm my address") && mail.html.contains("<p>Hello ana,</p>"))
            let token = try #require(mail.token)
            #expect(mail.text.contains("http://localhost:0/verify-email?token=\(token)"))

            // Someone else's link or a made-up one does nothing; the right one works once.
            for bad in ["", "x", String(repeating: "A", count: 43), String(token.dropLast()) + "!"] {
                let refused = try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: bad))
                #expect(refused.status == .badRequest && refused.error?.code == "invalid_link", "\(bad)")
            }
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: token)).status
                    == .noContent)
            #expect(try await api.get("/me", as: ana).decode(Me.self).emailVerified)
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: token)).error?.code
                    == "invalid_link")
            // Nothing left to confirm.
            let again = try await api.call(.post, "/me/email/verification", as: ana)
            #expect(again.status == .conflict && again.error?.code == "already_verified")
            #expect(try await api.call(.post, "/me/email/verification").status == .unauthorized)
        }
    }

    /// Mails speak the language the person chose (here at sign-up, as the web app's sign-up
    /// page sends its own), right to left where the language is.
    @Test func mailsSpeakTheRecipientsLanguage() async throws {
        try await withApp { api async throws in
            var accounts: [String: Account] = [:]
            for (name, language) in [("jana", "de"), ("omar", "ar")] {
                let signUp = try await api.call(
                    .post, "/auth/register",
                    json: RegisterRequest(
                        username: name, email: "\(name)@example.com", password: "correct horse battery",
                        language: language))
                #expect(signUp.status == .created)
                let auth = try signUp.decode(AuthResponse.self)
                accounts[name] = Account(token: auth.token, me: auth.user, password: "correct horse battery")
            }
            let german = try #require(try await api.mails(to: "jana@example.com").first)
            #expect(german.subject == "Bestätige deine E-Mail-Adresse für Plaza")
            #expect(
                german.text.hasPrefix("Hallo jana,\n") && german.text.contains("Der Link ist 24 Stunden lang gültig."))
            #expect(
                german.html.contains(#"<html lang="de" dir="ltr">"#) && german.html.contains("Meine Adresse bestätigen")
            )
            let arabic = try #require(try await api.mails(to: "omar@example.com").first)
            #expect(arabic.subject == "أكّد عنوان بريدك الإلكتروني في Plaza")
            #expect(arabic.html.contains(#"<html lang="ar" dir="rtl">"#))

            // A language changed later is the one the next mail speaks.
            let jana = try #require(accounts["jana"])
            #expect(
                try await api.call(.patch, "/me/preferences", as: jana, json: ["language": "en"]).status == .ok)
            #expect(
                try await api.call(.post, "/auth/password/forgot", json: ["email": "jana@example.com"]).status.code
                    < 300)
            let reset = try #require(try await api.mails(to: "jana@example.com", subject: "Reset").first)
            #expect(reset.subject == "Reset your Plaza password" && reset.html.contains(#"<html lang="en" dir="ltr">"#))
        }
    }

    @Test func sendingTheLinkAgainIsThrottledPerPerson() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            // Each was mailed at sign-up a moment ago.
            for person in [ana, bob] {
                let tooSoon = try await api.call(.post, "/me/email/verification", as: person)
                #expect(tooSoon.status == .tooManyRequests)
                #expect(Int(tooSoon.headers[.retryAfter] ?? "") ?? 0 > 0)
            }
            try await api.withDatabase { db in
                _ = try await db.write(
                    "UPDATE email_tokens SET created_at = created_at - 61000 WHERE user_id = \(bind: Int64(ana.id) ?? 0)"
                )
            }
            #expect(try await api.call(.post, "/me/email/verification", as: bob).status == .tooManyRequests)
            #expect(try await api.call(.post, "/me/email/verification", as: ana).status == .accepted)
            let mails = try await api.mails(to: "ana@example.com", count: 2)
            #expect(mails.count == 2 && mails[0].token != mails[1].token)
            // Both links work until one is used.
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: mails[0].token ?? ""))
                    .status == .noContent)
        }
    }

    /// Many requests for one person at once (several connections on PostgreSQL): the row lock
    /// makes them take turns, so exactly one mail goes out and the rest are told to wait.
    @Test func concurrentRequestsForOnePersonSendOneMail() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.mails(to: "ana@example.com")
            try await api.withDatabase { db in
                _ = try await db.write("UPDATE email_tokens SET created_at = created_at - 61000")
            }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await api.call(.post, "/me/email/verification", as: ana).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .accepted }.count == 1)
            #expect(statuses.filter { $0 == .tooManyRequests }.count == 7)
            let tokens = try await api.withDatabase { db in
                try await db.read {
                    try await $0.first("SELECT COUNT(*) AS n FROM email_tokens WHERE purpose = 'verify'")?.decode(
                        column: "n", as: Int.self)
                }
            }
            #expect(tokens == 2)
        }
    }

    @Test func aNewAddressCountsOnceItsLinkIsOpenedAndTheOldOneIsTold() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.register("bob")
            let change = { (email: String, password: String) in
                try await api.call(
                    .put, "/me/email", as: ana, json: ChangeEmailRequest(email: email, currentPassword: password))
            }
            #expect(
                try await api.call(.put, "/me/email", json: ChangeEmailRequest(email: "a@b.cd", currentPassword: "x"))
                    .status == .unauthorized)
            #expect(try await change("ana@new.example", "not the password").status == .forbidden)
            #expect(try await change("not an address", ana.password).error?.field == "email")
            #expect(try await change("BOB@example.com", ana.password).error?.code == "email_taken")
            // The sign-up mail was a moment ago; a change waits its minute like any other link.
            try await api.withDatabase { db in
                _ = try await db.write("UPDATE email_tokens SET created_at = created_at - 61000")
            }
            #expect(try await change("ana@new.example", ana.password).status == .accepted)
            let me = try await api.get("/me", as: ana).decode(Me.self)
            #expect(me.email == "ana@example.com" && me.pendingEmail == "ana@new.example")
            let link = try #require(try await api.mails(to: "ana@new.example").first?.token)
            // Bob takes the address meanwhile: the link cannot give it to Ana too.
            try await api.withDatabase { db in
                _ = try await db.write(
                    "UPDATE users SET email = 'ana@new.example', email_key = 'ana@new.example' WHERE username = 'bob'")
            }
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: link)).error?.code
                    == "email_taken")
            try await api.withDatabase { db in
                _ = try await db.write(
                    "UPDATE users SET email = 'bob@example.com', email_key = 'bob@example.com' WHERE username = 'bob'")
            }
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: link)).status
                    == .noContent)
            let after = try await api.get("/me", as: ana).decode(Me.self)
            #expect(after.email == "ana@new.example" && after.emailVerified && after.pendingEmail == nil)
            let notice = try #require(
                try await api.mails(to: "ana@example.com", subject: "email address was changed").first)
            #expect(notice.text.contains("ana@new.example"))
            // The old address's sign-up link proves nothing any more.
            let signUpLink = try #require(
                try await api.mails(to: "ana@example.com", subject: "Confirm").first?.token)
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: signUpLink)).error?
                    .code == "invalid_link")
            // Sign-in works with the new address.
            #expect(
                try await api.call(
                    .post, "/auth/login", json: LoginRequest(login: "ana@new.example", password: ana.password)
                )
                .status == .ok)
        }
    }

    // MARK: password reset

    @Test func aResetLinkSetsANewPasswordOnceAndEndsEverySession() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let other = try await api.logIn(ana).decode(AuthResponse.self)
            #expect(
                try await api.call(
                    .post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ANA@example.com")
                )
                .status == .accepted)
            let mail = try #require(try await api.mails(to: "ana@example.com", subject: "Reset").first)
            let token = try #require(mail.token)
            #expect(mail.text.contains("/reset-password?token=\(token)"))

            let short = try await api.call(
                .post, "/auth/password/reset", json: ResetPasswordRequest(token: token, newPassword: "short"))
            #expect(short.status == .unprocessableContent && short.error?.field == "newPassword")
            let reset = try await api.call(
                .post, "/auth/password/reset", json: ResetPasswordRequest(token: token, newPassword: "a new password"))
            #expect(reset.status == .ok)
            let auth = try reset.decode(AuthResponse.self)
            #expect(auth.user.user.username == "ana")
            // The link proved the address.
            #expect(auth.user.emailVerified)
            #expect(try await api.call(.get, "/me", token: auth.token).status == .ok)
            for old in [ana.token, other.token] {
                #expect(try await api.call(.get, "/me", token: old).status == .unauthorized)
            }
            #expect(
                try await api.logIn(ana)
                    .status == .unauthorized)
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: "a new password"))
                    .status == .ok)
            let reused = try await api.call(
                .post, "/auth/password/reset", json: ResetPasswordRequest(token: token, newPassword: "another one!"))
            #expect(reused.status == .badRequest && reused.error?.code == "invalid_link")
        }
    }

    @Test func forgotAnswersTheSameForEveryAddressAndMailsAtMostOnceAMinute() async throws {
        try await withApp { api async throws in
            _ = try await api.register("ana")
            let unknown = try await api.call(
                .post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "nobody@example.com"))
            let known = try await api.call(
                .post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com"))
            #expect(unknown.status == .accepted && known.status == .accepted)
            #expect(unknown.text == known.text)
            let again = try await api.call(
                .post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com"))
            #expect(again.status == .accepted)
            #expect(
                try await api.call(.post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "nope")).status
                    == .unprocessableContent)
            _ = try await api.mails(to: "ana@example.com", count: 1, subject: "Reset")
            let (tokens, queued) = try await api.withDatabase { db in
                try await db.read { db in
                    (
                        try await db.first("SELECT COUNT(*) AS n FROM email_tokens WHERE purpose = 'reset'")?.decode(
                            column: "n", as: Int.self) ?? -1,
                        try await db.first("SELECT COUNT(*) AS n FROM mail_outbox WHERE kind = 'password_reset'")?
                            .decode(column: "n", as: Int.self) ?? -1
                    )
                }
            }
            #expect(tokens == 1 && queued == 1)
        }
    }

    @Test func aResetLinkExpiresAfterAnHourAndAPasswordChangeCancelsIt() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            try await api.call(.post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com"))
            let token = try #require(try await api.mails(to: "ana@example.com", subject: "Reset").first?.token)
            try await api.withDatabase { db in
                _ = try await db.write(
                    "UPDATE email_tokens SET expires_at = expires_at - 3600001 WHERE purpose = 'reset'")
            }
            #expect(
                try await api.call(
                    .post, "/auth/password/reset",
                    json: ResetPasswordRequest(token: token, newPassword: "a new password")
                ).error?.code == "invalid_link")

            try await api.withDatabase { db in
                _ = try await db.write("UPDATE email_tokens SET created_at = created_at - 61000")
            }
            try await api.call(.post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com"))
            let second = try #require(
                try await api.mails(to: "ana@example.com", count: 2, subject: "Reset").last?.token)
            #expect(
                try await api.call(
                    .put, "/me/password", as: ana,
                    json: ChangePasswordRequest(currentPassword: ana.password, newPassword: "changed it myself")
                ).status == .noContent)
            #expect(
                try await api.call(
                    .post, "/auth/password/reset",
                    json: ResetPasswordRequest(token: second, newPassword: "a new password")
                ).error?.code == "invalid_link")
        }
    }

    @Test func aResetWithTwoFactorOnStillAsksForTheCode() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let (secret, _) = try await TwoFactorTests.enable(api, ana)
            try await api.call(.post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com"))
            let token = try #require(try await api.mails(to: "ana@example.com", subject: "Reset").first?.token)
            let reset = try await api.call(
                .post, "/auth/password/reset", json: ResetPasswordRequest(token: token, newPassword: "a new password"))
            #expect(reset.status == .unauthorized && reset.error?.code == "second_factor_required")
            let challenge = try #require(reset.error?.challenge)
            let code = try TwoFactorTests.currentCode(secret, offset: 1)
            #expect(try await TwoFactorTests.answer(api, challenge, code).status == .ok)
            #expect(try await api.call(.get, "/me", as: ana).status == .unauthorized)
        }
    }

    @Test func aSuspendedAccountGetsNoResetMail() async throws {
        try await withApp { api async throws in
            _ = try await api.register("ana")
            _ = try await api.mails(to: "ana@example.com")
            try await api.withDatabase { db in
                _ = try await db.write("UPDATE users SET suspended_at = 1 WHERE username = 'ana'")
            }
            #expect(
                try await api.call(
                    .post, "/auth/password/forgot", json: ForgotPasswordRequest(email: "ana@example.com")
                )
                .status == .accepted)
            let queued = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.first("SELECT COUNT(*) AS n FROM mail_outbox WHERE kind = 'password_reset'")?.decode(
                        column: "n", as: Int.self)
                }
            }
            #expect(queued == 0)
        }
    }

    // MARK: the outbox

    @Test func adminsSeeTheOutboxWithoutTheMailsBodies() async throws {
        try await withApp { api async throws in
            let (ana, admin) = try await api.register("ana", "root")
            try await api.withDatabase { db in
                _ = try await db.write("UPDATE users SET is_admin = TRUE WHERE username = 'root'")
            }
            _ = try await api.mails(to: "root@example.com")
            #expect(try await api.get("/admin/mail").status == .unauthorized)
            #expect(try await api.get("/admin/mail", as: ana).status == .forbidden)
            #expect(try await api.get("/admin/mail?state=lost", as: admin).error?.field == "state")
            let sent = try await api.page("/admin/mail?state=sent&limit=1", as: admin, of: OutgoingMail.self)
            #expect(sent.items.count == 1 && sent.items[0].to == "root@example.com" && sent.nextCursor != nil)
            #expect(sent.items[0].kind == "verify_email" && sent.items[0].sentAt != nil)
            let all = try await api.walk("/admin/mail?limit=1", as: admin, of: OutgoingMail.self)
            #expect(Set(all.map(\.to)) == ["ana@example.com", "root@example.com"])
            // Without SMTP each message went to the outbox folder, one file each.
            let files = try FileManager.default.contentsOfDirectory(atPath: api.outboxFolder).filter {
                $0.hasSuffix(".eml")
            }
            #expect(files.count == 2)
            let bodies = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.rows("SELECT text_body, html_body FROM mail_outbox WHERE state = 'sent'").map {
                        try $0.decode(column: "text_body", as: String.self)
                            + $0.decode(column: "html_body", as: String.self)
                    }
                }
            }
            #expect(bodies == ["", ""])
        }
    }

    /// A port nothing listens on: bound, then closed.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 1
        try await channel.close().get()
        return port
    }

    @Test func aFailedDeliveryIsTriedAgainLaterAndGivenUpAfterTenAttempts() async throws {
        try await withDatabase { db, config in
            let outbox = MailOutbox(db: db, ids: IDGenerator(node: 1))
            let client = try SMTPClient(
                settings: SMTPSettings(host: "127.0.0.1", port: try await Self.closedPort(), security: .none),
                heloName: "plaza.test")
            let service = MailService(
                outbox: outbox, transport: .smtp(client), sender: MailAddress(name: nil, address: "noreply@plaza.test"),
                signal: WorkSignal(), name: nil, pollInterval: .seconds(1), leaseMillis: 120_000,
                logger: Logger(label: "test"))
            let message = MailMessage(kind: .passwordReset, to: "ana@example.com", subject: "s", text: "t", html: "h")
            let start = Timestamp.now.milliseconds
            var now = start
            try await db.write { conn in try await outbox.enqueue(message, now: start, on: conn) }
            #expect(await service.runOnce(now: now))
            // Claimed for this attempt; nothing is due until the wait after it.
            #expect(await service.runOnce(now: now) == false)
            let first = try #require(try await Self.outboxRow(db))
            #expect(first.state == "pending" && first.attempts == 1 && first.error?.isEmpty == false)
            #expect(first.next > Timestamp.now.milliseconds)
            var waits: [Int64] = []
            var previous = first.next
            for _ in 2...MailOutbox.maxAttempts {
                now = previous
                _ = try await db.write("UPDATE mail_outbox SET next_attempt_at = \(bind: now)")
                #expect(await service.runOnce(now: now))
                let row = try #require(try await Self.outboxRow(db))
                if row.state == "pending" { waits.append(row.next - Timestamp.now.milliseconds) }
                previous = row.next
            }
            let last = try #require(try await Self.outboxRow(db))
            #expect(last.state == "failed" && last.attempts == MailOutbox.maxAttempts)
            #expect(await service.runOnce(now: now + 86_400_000 * 30) == false)
            // The waits grow: 2 min, 8 min, 32 min, then up to 6 hours (each within a minute: the test takes time too).
            let expected = (2..<MailOutbox.maxAttempts).map { MailOutbox.retryDelayMillis(afterAttempt: $0) }
            #expect(waits.count == expected.count)
            for (wait, delay) in zip(waits, expected) { #expect(abs(wait - delay) < 60_000, "\(wait) vs \(delay)") }
            let longest: Int64 = 6 * 3_600_000
            #expect(expected.last ?? 0 == longest)
            _ = config
        }
    }

    static func outboxRow(_ db: Database) async throws -> (state: String, attempts: Int, next: Int64, error: String?)? {
        try await db.read { db in
            try await db.first("SELECT state, attempts, next_attempt_at, last_error FROM mail_outbox").map {
                (
                    try $0.decode(column: "state", as: String.self), try $0.decode(column: "attempts", as: Int.self),
                    try $0.decode(column: "next_attempt_at", as: Int64.self),
                    try $0.decode(column: "last_error", as: String?.self)
                )
            }
        }
    }

    // MARK: formats

    @Test func smtpRepliesAreReadStrictly() throws {
        var reader = SMTPReplyReader()
        reader.append(Array("250-plaza.test greets you\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n220".utf8))
        #expect(
            try reader.next() == SMTPReply(code: 250, lines: ["plaza.test greets you", "STARTTLS", "AUTH PLAIN LOGIN"]))
        #expect(try reader.next() == nil)
        reader.append(Array(" ready\n".utf8))
        #expect(try reader.next() == SMTPReply(code: 220, lines: ["ready"]))
        reader.append(Array("354\r\n".utf8))
        #expect(try reader.next()?.code == 354)
        for bad in ["25\r\n", "abc hello\r\n", "250x\r\n", "250-a\r\n251 b\r\n", "650 no\r\n", "\r\n"] {
            var reader = SMTPReplyReader()
            reader.append(Array(bad.utf8))
            #expect(throws: SMTPError.self, "\(bad)") { try reader.next() }
        }
        var long = SMTPReplyReader()
        long.append(Array(repeating: UInt8(ascii: "2"), count: SMTPReplyReader.maxLineBytes + 10))
        #expect(throws: SMTPError.self) { try long.next() }
        var many = SMTPReplyReader()
        many.append(Array(String(repeating: "250-x\r\n", count: SMTPReplyReader.maxLines + 1).utf8))
        #expect(throws: SMTPError.self) { try many.next() }
    }

    @Test func smtpURLsAndSendersParse() throws {
        let settings = try SMTPSettings.parse("smtp://me%40x.org:p%3Ass@mail.example.com:2525")
        #expect(settings.host == "mail.example.com" && settings.port == 2525 && settings.security == .startTLS)
        #expect(settings.username == "me@x.org" && settings.password == "p:ss")
        #expect(try SMTPSettings.parse("smtps://mail.example.com").port == 465)
        #expect(try SMTPSettings.parse("smtps://mail.example.com").security == .implicitTLS)
        #expect(try SMTPSettings.parse("smtp://127.0.0.1:25?starttls=off").security == .none)
        #expect(try SMTPSettings.parse("smtp://[::1]:25").host == "::1")
        for bad in ["http://x.org", "smtp://", "mail.example.com", "smtp://x.org:0", "smtp://x.org?starttls=maybe"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try SMTPSettings.parse(bad) }
        }
        #expect(try MailAddress.parse("Plaza Café <noreply@plaza.test>").header.hasPrefix("=?UTF-8?B?"))
        #expect(
            try MailAddress.parse("\"Plaza\" <noreply@plaza.test>")
                == MailAddress(name: "Plaza", address: "noreply@plaza.test"))
        for bad in ["", "Plaza", "Plaza <>", "a@b", "Plaza <a@b.c>\r\nBcc: x@y.z", "ü@plaza.test"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try MailAddress.parse(bad) }
        }
    }

    @Test func messagesAreWellFormedMIME() throws {
        let message = MailMessage(
            kind: .verifyEmail, to: "ana@example.com", subject: "Café\r\nBcc: evil@example.com",
            text: ".starts with a dot\nand <b>tags</b>", html: "<p>Hi</p>")
        let bytes = MIME.render(
            message, from: MailAddress(name: "Plaza", address: "noreply@plaza.test"), messageID: "1@plaza.test",
            date: Date(timeIntervalSince1970: 1_795_000_000), boundary: "b0")
        let mail = try #require(ReceivedMail.parse(Data(bytes)))
        #expect(
            mail.headers["subject"] == "=?UTF-8?B?\(Data("CaféBcc: evil@example.com".utf8).base64EncodedString())?=")
        #expect(mail.subject == "CaféBcc: evil@example.com")
        #expect(mail.headers["bcc"] == nil)
        #expect(mail.headers["date"] == "Wed, 18 Nov 2026 11:06:40 +0000")
        #expect(mail.text == message.text && mail.html == message.html)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("\n\n") && text.components(separatedBy: "\r\n").allSatisfy { $0.utf8.count <= 78 })
        #expect(SMTPClient.dotStuffed(Array("a\r\n.b\r\n..\r\nc".utf8)) == Array("a\r\n..b\r\n...\r\nc\r\n.\r\n".utf8))
        #expect(SMTPClient.dotStuffed(Array(".\r\n".utf8)) == Array("..\r\n.\r\n".utf8))
    }
}

/// Plaza's SMTP client against real SMTP servers (aiosmtpd), which `scripts/with-smtp.sh` starts
/// on loopback and names in PLAZA_TEST_SMTP_PORTS (make test does); without it these are skipped.
@Suite("SMTP against aiosmtpd", .enabled(if: SMTPSink.ports != nil))
struct SMTPClientTests {
    static let message = MailMessage(
        kind: .passwordReset, to: "ana@example.com", subject: "Réinitialiser",
        text: "Hello,\n.\n..a line of dots\nbye", html: "<p>Hello</p>")

    func send(
        _ server: String, security: SMTPSettings.Security, user: String? = "plaza", password: String = "plaza-secret",
        to recipient: String = "ana@example.com", trust: Bool = true
    ) async throws -> ReceivedMail? {
        let port = try #require(SMTPSink.ports?[server])
        var settings = SMTPSettings(
            host: "127.0.0.1", port: port, security: security, username: user, password: password)
        if trust { settings.caFile = SMTPSink.certificate }
        let client = try SMTPClient(settings: settings, heloName: "plaza.test")
        let id = UUID().uuidString
        var message = Self.message
        message.to = recipient
        message.subject = id
        let bytes = MIME.render(
            message, from: MailAddress(name: "Plaza", address: "noreply@plaza.test"), messageID: "\(id)@plaza.test",
            date: Date(), boundary: "b-\(id)")
        try await client.send(bytes, from: "noreply@plaza.test", to: recipient)
        return try await mails(in: SMTPSink.mailFolder) { $0.subject == id }.first
    }

    @Test func startTLSThenAuthDeliversTheMessageIntact() async throws {
        let mail = try #require(try await send("starttls", security: .startTLS))
        #expect(mail.text == Self.message.text && mail.html == Self.message.html)
        #expect(mail.to == "ana@example.com")
    }

    @Test func implicitTLSThenAuthDelivers() async throws {
        #expect(try await send("tls", security: .implicitTLS) != nil)
    }

    @Test func aLocalRelayWithoutTLSDeliversWhenToldTo() async throws {
        #expect(try await send("plain", security: .none, user: nil) != nil)
    }

    @Test func refusalsSayWhetherToTryAgain() async throws {
        // STARTTLS is required unless turned off: a server without it gets nothing.
        await #expect { try await send("plain", security: .startTLS, user: nil) } throws: { error in
            "\(error)".contains("does not offer STARTTLS") && (error as? SMTPError)?.permanent == false
        }
        await #expect { try await send("starttls", security: .startTLS, password: "wrong") } throws: { error in
            (error as? SMTPError)?.permanent == true && "\(error)".hasPrefix("AUTH: 535")
        }
        await #expect { try await send("starttls", security: .startTLS, to: "x@reject.test") } throws: { error in
            (error as? SMTPError)?.permanent == true && "\(error)".hasPrefix("RCPT: 550")
        }
        await #expect { try await send("starttls", security: .startTLS, to: "x@busy.test") } throws: { error in
            (error as? SMTPError)?.permanent == false && "\(error)".hasPrefix("RCPT: 451")
        }
        // A certificate nobody vouched for stops the delivery before any credential is sent.
        await #expect { try await send("tls", security: .implicitTLS, trust: false) } throws: { error in
            (error as? SMTPError)?.permanent != true
        }
    }

    @Test func theServerSendsThroughSMTPAndRecordsIt() async throws {
        let port = try #require(SMTPSink.ports?["starttls"])
        try await withApp({ config in
            config.mail.smtp = try? SMTPSettings.parse("smtp://plaza:plaza-secret@127.0.0.1:\(port)")
            config.mail.smtp?.caFile = SMTPSink.certificate
            config.mail.from = "Plaza Test <noreply@plaza.test>"
        }) { api async throws in
            let username = "u\(UInt32.random(in: 0...UInt32.max))"
            let ana = try await api.register(username)
            let mail = try #require(
                try await mails(in: SMTPSink.mailFolder) { $0.to == "\(username)@example.com" }.first)
            #expect(mail.headers["from"] == "\"Plaza Test\" <noreply@plaza.test>")
            let token = try #require(mail.token)
            #expect(
                try await api.call(.post, "/auth/email/verify", json: VerifyEmailRequest(token: token)).status
                    == .noContent)
            #expect(try await api.get("/me", as: ana).decode(Me.self).emailVerified)
            #expect(!FileManager.default.fileExists(atPath: api.outboxFolder))
        }
    }
}

enum SMTPSink {
    static let ports: [String: Int]? = ProcessInfo.processInfo.environment["PLAZA_TEST_SMTP_PORTS"].flatMap {
        try? JSONDecoder().decode([String: Int].self, from: Data($0.utf8))
    }
    static let folder = ProcessInfo.processInfo.environment["PLAZA_TEST_SMTP_DIR"] ?? ""
    static var certificate: String { (folder as NSString).appendingPathComponent("cert.pem") }
    static var mailFolder: String { (folder as NSString).appendingPathComponent("mail") }
}
