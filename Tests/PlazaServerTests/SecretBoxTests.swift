import Foundation
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Two-factor secrets sealed under a key kept outside the database: a copy of the database does
/// not reveal them, a key can be replaced, and a sealed value opens only where it was sealed.
@Suite struct SecretBoxTests {
    static let keyA = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="  // 32 × "A"
    static let keyB = String(repeating: "42", count: 32)  // hex

    @Test func sealedValuesOpenWithTheirKeyInTheirPlaceOnly() throws {
        let a = try SecretBox.Key(text: Self.keyA)
        let b = try SecretBox.Key(text: Self.keyB)
        let box = SecretBox(current: a)
        let sealed = try box.seal("JBSWY3DPEHPK3PXP", context: "two_factor:1")
        #expect(sealed.hasPrefix("sealed:v1:\(a.id):") && !sealed.contains("JBSWY3DPEHPK3PXP"))
        #expect(try box.seal("JBSWY3DPEHPK3PXP", context: "two_factor:1") != sealed)  // a new nonce each time
        #expect(box.open(sealed, context: "two_factor:1") == "JBSWY3DPEHPK3PXP")
        // Copied to another person's row, changed, or under an unknown key: it does not open.
        #expect(box.open(sealed, context: "two_factor:2") == nil)
        var tampered = Array(sealed.utf8)
        tampered[tampered.count - 3] =
            tampered[tampered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(box.open(String(decoding: tampered, as: UTF8.self), context: "two_factor:1") == nil)
        #expect(SecretBox(current: b).open(sealed, context: "two_factor:1") == nil)
        #expect(SecretBox(current: b, previous: [a]).open(sealed, context: "two_factor:1") == "JBSWY3DPEHPK3PXP")
        // Values stored before a key was set read as they are; without a key nothing is sealed.
        #expect(box.open("JBSWY3DPEHPK3PXP", context: "two_factor:1") == "JBSWY3DPEHPK3PXP")
        #expect(try SecretBox(current: nil).seal("x", context: "c") == "x")
        for garbage in [
            "sealed:v1:", "sealed:v1:\(a.id)", "sealed:v1:\(a.id):", "sealed:v1:\(a.id):!!!", "sealed:v1:x:AAAA",
        ] {
            #expect(box.open(garbage, context: "two_factor:1") == nil, "\(garbage)")
        }
    }

    @Test func keysAre32BytesInBase64OrHex() throws {
        #expect(try SecretBox.Key(text: Self.keyA).id == SecretBox.Key(text: " \(Self.keyA)\n").id)
        #expect(try SecretBox.Key(text: SecretBox.Key.generate()).id.count == 8)
        for bad in ["", "short", String(repeating: "4", count: 62), "QUFB", String(repeating: "zz", count: 32)] {
            #expect(throws: ConfigurationError.self) { try SecretBox.Key(text: bad) }
        }
    }

    @Test func twoFactorSecretsAreSealedAndSignInStillTakesTheirCodes() async throws {
        try await withApp({ $0.accounts.secrets = SecretBox(current: try! SecretBox.Key(text: Self.keyA)) }) {
            api async throws in
            let ana = try await api.register("ana")
            let (secret, _) = try await TwoFactorTests.enable(api, ana)
            let stored = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT secret FROM two_factor") }?.decode(
                    column: "secret", as: String.self)
            }
            #expect(stored?.hasPrefix("sealed:v1:") == true && stored?.contains(secret) == false)
            let challenge = try await TwoFactorTests.challenge(api, ana)
            // The next step's code (the one that confirmed it counts as used).
            let signedIn = try await TwoFactorTests.answer(
                api, challenge, try TwoFactorTests.currentCode(secret, offset: 1))
            #expect(signedIn.status == .ok)
        }
    }

    /// `plaza secrets rotate`: secrets under the old key, and those stored before any key, are
    /// sealed under the new one, and still take their codes.
    @Test func rotatingSealsEverySecretUnderTheNewKey() async throws {
        try await withDatabase { db, config in
            let old = try SecretBox.Key(text: Self.keyA)
            let new = try SecretBox.Key(text: Self.keyB)
            let accounts = try AppServices(config: config, db: db).accounts
            var people: [Int64] = []
            for name in ["ana", "bea"] {
                let id = try await accounts.createUser(
                    .init(username: name, email: "\(name)@example.com", passwordHash: "", displayName: name))
                people.append(id)
            }
            // Ana's secret was sealed under the old key, Bea's before there was any.
            guard
                case .started(let anaSecret) = try await TwoFactorStore(db: db, secrets: .init(current: old)).begin(
                    userID: people[0]),
                case .started(let beaSecret) = try await TwoFactorStore(db: db, secrets: .init(current: nil)).begin(
                    userID: people[1])
            else {
                Issue.record("two-factor did not start")
                return
            }
            let rotated = TwoFactorStore(db: db, secrets: .init(current: new, previous: [old]))
            #expect(try await rotated.reseal() == (resealed: 2, unreadable: 0))
            #expect(try await rotated.reseal() == (resealed: 0, unreadable: 0))
            let stored = try await db.read { try await $0.rows("SELECT secret FROM two_factor") }.map {
                try $0.decode(column: "secret", as: String.self)
            }
            #expect(stored.allSatisfy { $0.hasPrefix("sealed:v1:\(new.id):") })
            // The new key alone opens them: each confirms with its app's code.
            let newOnly = TwoFactorStore(db: db, secrets: .init(current: new))
            for (id, secret) in zip(people, [anaSecret, beaSecret]) {
                let code = TOTP.code(secret: secret, step: TOTP.step(at: .now))
                guard case .enabled = try await newOnly.confirm(userID: id, code: code) else {
                    Issue.record("the resealed secret did not take its code")
                    return
                }
            }
            // Without the key a secret was sealed with, it is counted as unreadable, not lost.
            #expect(
                try await TwoFactorStore(db: db, secrets: .init(current: old)).reseal() == (resealed: 0, unreadable: 2))
        }
    }
}
