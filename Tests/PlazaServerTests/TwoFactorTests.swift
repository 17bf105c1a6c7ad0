import Foundation
import Hummingbird
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Two-factor sign-in")
struct TwoFactorTests {
    // MARK: the algorithms

    /// RFC 6238 appendix B, SHA-1 rows (8 digits), and RFC 4226 appendix D (6 digits).
    @Test func totpMatchesTheRFCVectors() {
        let secret = Array("12345678901234567890".utf8)
        let rfc6238: [(Int64, String)] = [
            (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ]
        for (seconds, expected) in rfc6238 {
            #expect(TOTP.code(secret: secret, step: seconds / 30, digits: 8) == expected, "T = \(seconds)")
        }
        let rfc4226 = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
        ]
        for (counter, expected) in rfc4226.enumerated() {
            #expect(TOTP.code(secret: secret, step: Int64(counter)) == expected)
        }
    }

    @Test func base32FollowsRFC4648AndRefusesOtherLetters() {
        let vectors = [
            ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
            #expect(Base32.decode(encoded.lowercased() + "===") == Array(plain.utf8))
        }
        for bad in ["MZ1", "MZ8", "MZ!", "MZXW6é"] { #expect(Base32.decode(bad) == nil, "\(bad)") }
        let secret = TOTP.makeSecret()
        #expect(Base32.decode(Base32.encode(secret)) == secret)
    }

    @Test func aCodeIsAcceptedOneStepEitherSideAndNoFurther() {
        let secret = TOTP.makeSecret()
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        let step = TOTP.step(at: now)
        for offset: Int64 in -1...1 {
            #expect(
                TOTP.matchingStep(TOTP.code(secret: secret, step: step + offset), secret: secret, at: now) == step
                    + offset)
        }
        for offset: Int64 in [-3, -2, 2, 3] {
            let code = TOTP.code(secret: secret, step: step + offset)
            // Another step in the window may share the code by chance (1 in 10^6); rule that out.
            let inWindow = (-1...1).map { TOTP.code(secret: secret, step: step + $0) }
            if !inWindow.contains(code) { #expect(TOTP.matchingStep(code, secret: secret, at: now) == nil) }
        }
        let code = TOTP.code(secret: secret, step: step)
        #expect(TOTP.matchingStep(String(code.prefix(3)) + " " + code.suffix(3), secret: secret, at: now) == step)
        for bad in ["", "12345", "1234567", "12345a", "١٢٣٤٥٦", String(repeating: "9", count: 10_000)] {
            #expect(TOTP.matchingStep(bad, secret: secret, at: now) == nil)
        }
        let url = TOTP.url(secret: secret, account: "ana", issuer: "Plaza")
        #expect(url.hasPrefix("otpauth://totp/Plaza:ana?secret=\(Base32.encode(secret))&issuer=Plaza"))
    }

    @Test func recoveryCodesNormaliseAndRefuseOthers() {
        let code = TwoFactorStore.makeRecoveryCode()
        #expect(code.count == 11 && code.dropFirst(5).first == "-")
        #expect(
            TwoFactorStore.normalizedRecoveryCode(code.uppercased()) == code.replacingOccurrences(of: "-", with: ""))
        for bad in ["", "abcde-fghi", "abcde-fghij1", "abcde-fgh1j", "äbcde-fghij"] {
            #expect(TwoFactorStore.normalizedRecoveryCode(bad) == nil, "\(bad)")
        }
    }

    // MARK: the API

    static func currentCode(_ secret: String, offset: Int64 = 0) throws -> String {
        let bytes = try #require(Base32.decode(secret))
        return TOTP.code(secret: bytes, step: TOTP.step(at: .now) + offset)
    }

    /// The `n`th six-digit code (from 000000) that is none of the codes accepted now.
    static func wrongCode(_ secret: String, _ n: Int = 0) throws -> String {
        let accepted = try (-1...1).map { try currentCode(secret, offset: $0) }
        return (0..<1_000).lazy.map { String(format: "%06d", $0) }.filter { !accepted.contains($0) }.dropFirst(n)
            .first ?? "999999"
    }

    /// Turns two-factor sign-in on for `account`; returns the secret and the recovery codes.
    static func enable(_ api: TestAPI, _ account: Account) async throws -> (secret: String, codes: [String]) {
        let setup = try await api.call(
            .post, "/me/two-factor", as: account, json: CurrentPasswordRequest(currentPassword: account.password))
        #expect(setup.status == .ok)
        let secret = try setup.decode(TwoFactorSetup.self).secret
        let confirmed = try await api.call(
            .put, "/me/two-factor", as: account, json: ConfirmTwoFactorRequest(code: try currentCode(secret)))
        #expect(confirmed.status == .ok)
        return (secret, try confirmed.decode(RecoveryCodes.self).recoveryCodes)
    }

    /// Signs in with the password; returns the challenge of the `second_factor_required` answer.
    static func challenge(_ api: TestAPI, _ account: Account) async throws -> String {
        let response = try await api.call(
            .post, "/auth/login", json: LoginRequest(login: account.username, password: account.password))
        #expect(response.status == .unauthorized)
        #expect(response.error?.code == "second_factor_required")
        return try #require(response.error?.challenge)
    }

    static func answer(_ api: TestAPI, _ challenge: String, _ code: String) async throws -> TestResponse {
        try await api.call(
            .post, "/auth/login/second-factor", json: SecondFactorRequest(challenge: challenge, code: code))
    }

    @Test func settingUpNeedsThePasswordAndACodeFromTheApp() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(try await api.call(.get, "/me/two-factor").status == .unauthorized)
            #expect(
                try await api.call(.post, "/me/two-factor", json: CurrentPasswordRequest(currentPassword: "x")).status
                    == .unauthorized)
            let wrongPassword = try await api.call(
                .post, "/me/two-factor", as: ana, json: CurrentPasswordRequest(currentPassword: "not it at all"))
            #expect(wrongPassword.status == .forbidden)
            #expect(
                try await api.call(.put, "/me/two-factor", as: ana, json: ConfirmTwoFactorRequest(code: "123456"))
                    .error?.code == "two_factor_not_started")
            let setup = try await api.call(
                .post, "/me/two-factor", as: ana, json: CurrentPasswordRequest(currentPassword: ana.password)
            ).decode(TwoFactorSetup.self)
            #expect(setup.otpauthURL.contains("secret=\(setup.secret)"))
            // Not on until confirmed: the password alone still signs in.
            #expect(
                try await api.logIn(ana)
                    .status == .ok)
            let refused = try await api.call(
                .put, "/me/two-factor", as: ana, json: ConfirmTwoFactorRequest(code: try Self.wrongCode(setup.secret)))
            #expect(refused.status == .unprocessableContent)
            #expect(refused.error?.field == "code")
            let codes = try await api.call(
                .put, "/me/two-factor", as: ana, json: ConfirmTwoFactorRequest(code: try Self.currentCode(setup.secret))
            ).decode(RecoveryCodes.self).recoveryCodes
            #expect(codes.count == 10 && Set(codes).count == 10)
            #expect(
                try await api.get("/me/two-factor", as: ana).decode(TwoFactorStatus.self)
                    == TwoFactorStatus(enabled: true, recoveryCodesLeft: 10))
            // Someone else's account is untouched, and a second set-up is refused.
            #expect(
                try await api.get("/me/two-factor", as: bob).decode(TwoFactorStatus.self)
                    == TwoFactorStatus(enabled: false, recoveryCodesLeft: 0))
            #expect(
                try await api.call(
                    .post, "/me/two-factor", as: ana, json: CurrentPasswordRequest(currentPassword: ana.password)
                ).error?.code == "two_factor_enabled")
            #expect(
                try await api.logIn(bob)
                    .status == .ok)
        }
    }

    @Test func signingInTakesACodeOnceAndARecoveryCodeOnce() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let (secret, codes) = try await Self.enable(api, ana)

            // The password alone opens no session.
            let challenge = try await Self.challenge(api, ana)
            #expect(try await Self.answer(api, challenge, try Self.wrongCode(secret)).error?.code == "invalid_code")
            // The code confirming the set-up was used; the next step's code works.
            let code = try Self.currentCode(secret, offset: 1)
            let signedIn = try await Self.answer(api, challenge, code)
            #expect(signedIn.status == .ok)
            let auth = try signedIn.decode(AuthResponse.self)
            #expect(try await api.call(.get, "/me", token: auth.token).status == .ok)
            // The challenge is used up, and the same code does not work twice.
            #expect(try await Self.answer(api, challenge, code).error?.code == "challenge_expired")
            let again = try await Self.challenge(api, ana)
            #expect(try await Self.answer(api, again, code).error?.code == "invalid_code")

            // A recovery code, in any case and with or without its dash, works once.
            let recovery = codes[3].uppercased().replacingOccurrences(of: "-", with: "")
            #expect(try await Self.answer(api, again, recovery).status == .ok)
            let third = try await Self.challenge(api, ana)
            #expect(try await Self.answer(api, third, codes[3]).error?.code == "invalid_code")
            #expect(try await api.get("/me/two-factor", as: ana).decode(TwoFactorStatus.self).recoveryCodesLeft == 9)

            // A wrong password never reaches the second step.
            let badPassword = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: "wrong password here"))
            #expect(badPassword.error?.code == "invalid_credentials")
            #expect(badPassword.error?.challenge == nil)
        }
    }

    @Test func aChallengeTakesFiveWrongCodesThenIsGone() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let (secret, _) = try await Self.enable(api, ana)
            let challenge = try await Self.challenge(api, ana)
            for n in 0..<TwoFactorStore.attemptsPerChallenge {
                #expect(
                    try await Self.answer(api, challenge, try Self.wrongCode(secret, n)).error?.code == "invalid_code")
            }
            let right = try await Self.answer(api, challenge, try Self.currentCode(secret, offset: 1))
            #expect(right.error?.code == "challenge_expired")
            #expect(try await Self.answer(api, "made-up", "123456").error?.code == "challenge_expired")
            #expect(try await Self.answer(api, "made-up", "  ").error?.field == "code")
            #expect(try await Self.answer(api, String(repeating: "x", count: 5_000), "1").status == .unauthorized)
        }
    }

    @Test func wrongCodesAreThrottledAcrossChallenges() async throws {
        try await withApp({
            $0.accounts.loginThrottle = .init(
                freeFailuresPerAccount: 3, freeFailuresPerAddress: 100, windowSeconds: 900, baseLockoutSeconds: 60,
                maxLockoutSeconds: 60)
        }) { api async throws in
            let ana = try await api.register("ana")
            let (secret, _) = try await Self.enable(api, ana)
            var answers: [HTTPResponse.Status] = []
            for n in 0..<5 {
                answers.append(
                    try await Self.answer(api, try await Self.challenge(api, ana), try Self.wrongCode(secret, n)).status
                )
            }
            #expect(answers == [.unauthorized, .unauthorized, .unauthorized, .tooManyRequests, .tooManyRequests])
        }
    }

    @Test func turningItOffNeedsThePasswordAndEndsTheSecondStep() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let (_, _) = try await Self.enable(api, ana)
            let pending = try await Self.challenge(api, ana)
            #expect(
                try await api.call(
                    .delete, "/me/two-factor", as: ana, json: CurrentPasswordRequest(currentPassword: "nope nope")
                )
                .status == .forbidden)
            let regenerated = try await api.call(
                .post, "/me/two-factor/recovery-codes", as: ana,
                json: CurrentPasswordRequest(currentPassword: ana.password))
            #expect(try regenerated.decode(RecoveryCodes.self).recoveryCodes.count == 10)
            #expect(
                try await api.call(
                    .delete, "/me/two-factor", as: ana, json: CurrentPasswordRequest(currentPassword: ana.password)
                )
                .status == .noContent)
            #expect(try await Self.answer(api, pending, "123456").error?.code == "challenge_expired")
            #expect(
                try await api.logIn(ana)
                    .status == .ok)
            #expect(
                try await api.call(
                    .post, "/me/two-factor/recovery-codes", as: ana,
                    json: CurrentPasswordRequest(currentPassword: ana.password)
                ).error?.code == "two_factor_off")
        }
    }
}

extension TwoFactorTests {
    /// `plaza user two-factor-off`: the operator's way back in for someone who lost everything.
    @Test func theOperatorCanTurnItOff() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await Self.enable(api, ana)
            _ = try await Self.challenge(api, ana)
            let logger = Logger(label: "test")
            #expect(try await Admin.disableTwoFactor(config: api.config, username: "nobody", logger: logger) == false)
            #expect(try await Admin.disableTwoFactor(config: api.config, username: "ANA", logger: logger))
            #expect(
                try await api.logIn(ana)
                    .status == .ok)
        }
    }

    /// The web form: a right password shows the code form (no session yet), a wrong code shows
    /// it again, the right one signs in; the settings page says two-factor sign-in is on.
    @Test func theWebSignInAsksForTheCode() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana", password: "correct horse battery")
            let (secret, _) = try await Self.enable(api, ana)
            let loginPage = try await api.page(.get, "/login")
            let nonceCookie = try #require(loginPage.setCookie(WebSession.nonceCookie))
            let nonce = String(nonceCookie.dropFirst(WebSession.nonceCookie.count + 1).prefix { $0 != ";" })
            let token = try #require(loginPage.pageCSRF)
            let jar = "\(WebSession.nonceCookie)=\(nonce)"

            let step = try await api.page(
                .post, "/login", cookie: jar,
                form: formEncode([
                    "login": "ana", "password": "correct horse battery", "_csrf": token, "next": "/settings",
                ]))
            #expect(step.status == .ok)
            #expect(step.setCookie(WebSession.sessionCookie) == nil)
            #expect(step.text.contains(#"action="/login/second-factor""#))
            let challenge = try #require(
                step.text.range(of: #"name="challenge" value=""#).map {
                    String(step.text[$0.upperBound...].prefix { $0 != "\"" })
                })

            let wrong = try await api.page(
                .post, "/login/second-factor", cookie: jar,
                form: formEncode([
                    "challenge": challenge, "code": try Self.wrongCode(secret), "_csrf": token, "next": "/settings",
                ]))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.text.contains("That code is not right.") && wrong.text.contains(challenge))
            #expect(wrong.setCookie(WebSession.sessionCookie) == nil)

            let ok = try await api.page(
                .post, "/login/second-factor", cookie: jar,
                form: formEncode([
                    "challenge": challenge, "code": try Self.currentCode(secret, offset: 1), "_csrf": token,
                    "next": "/settings",
                ]))
            #expect(ok.status == .seeOther)
            #expect(ok.headers[.location] == "/settings")
            let session = try #require(ok.setCookie(WebSession.sessionCookie))
            let value = String(session.dropFirst(WebSession.sessionCookie.count + 1).prefix { $0 != ";" })
            let settings = try await api.page(.get, "/settings", cookie: "\(WebSession.sessionCookie)=\(value)")
            #expect(
                settings.text.contains("On: signing in asks for a code")
                    && settings.text.contains("10 recovery codes left"))
        }
    }
}
