import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import NIOConcurrencyHelpers
import PlazaAPI
import Testing

@testable import PlazaServer

@Suite("Push: devices, Web Push and APNs, the push queue", .serialized)
struct PushTests {
    static let apnsKey = P256.Signing.PrivateKey()

    /// An app whose pushes go to `base` (the loopback push services), checked every 100 ms.
    static func configure(_ config: inout PlazaConfig, base: String?) {
        config.push.allowed = AddressPolicy(allowing: [IPBlock("127.0.0.1")!])
        config.push.pollInterval = .milliseconds(100)
        var apns = APNsSettings(
            keyPEM: apnsKey.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456", topic: "com.example.plaza")
        apns.productionURL = base ?? "http://127.0.0.1:9"
        apns.sandboxURL = base ?? "http://127.0.0.1:9"
        config.push.apns = apns
    }

    static func withPushApp(_ body: @Sendable (TestAPI, PushServices, String) async throws -> Void) async throws {
        let services = PushServices()
        try await FixtureServer.serve(services.router) { base in
            try await withApp({ Self.configure(&$0, base: base) }) { api in try await body(api, services, base) }
        }
    }

    struct Delivery: Sendable {
        var state: String
        var attempts: Int
        var next: Int64
        var sent: Int64?
        var notification: Int64
        var error: String?
    }

    /// The recipient's latest delivery row.
    static func delivery(_ api: TestAPI, recipient: Account) async throws -> Delivery? {
        try await api.withDatabase { db in
            try await db.read { db in
                try await db.first(
                    """
                    SELECT state, attempts, next_attempt_at, sent_at, notification_id, last_error FROM push_deliveries
                    WHERE recipient_id = \(bind: Int64(recipient.id) ?? 0) ORDER BY created_at DESC LIMIT 1
                    """
                ).map {
                    Delivery(
                        state: try $0.decode(column: "state", as: String.self),
                        attempts: try $0.decode(column: "attempts", as: Int.self),
                        next: try $0.decode(column: "next_attempt_at", as: Int64.self),
                        sent: try $0.decode(column: "sent_at", as: Int64?.self),
                        notification: try $0.decode(column: "notification_id", as: Int64.self),
                        error: try $0.decode(column: "last_error", as: String?.self))
                }
            }
        }
    }

    /// Waits (cheap looks, up to a minute) until the recipient's latest delivery is in `state`
    /// and passes `also`.
    static func waitForDelivery(
        _ api: TestAPI, recipient: Account, state: String, also: @Sendable (Delivery) -> Bool = { _ in true }
    ) async throws -> Delivery {
        for _ in 0..<1_200 {
            if let row = try await delivery(api, recipient: recipient), row.state == state, also(row) { return row }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PushServices.PushWaitTimedOut(prefix: "delivery \(state)", count: 1, got: [])
    }

    /// The person's devices once none is left, or after a minute of cheap looks (a device the
    /// push service called gone is removed by the worker beside the test).
    static func devicesLeft(_ api: TestAPI, _ account: Account) async throws -> [PushDevice] {
        var left = [PushDevice]()
        for _ in 0..<1_200 {
            left = try await api.page("/me/push-devices", as: account, of: PushDevice.self).items
            if left.isEmpty { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return left
    }

    static func like(_ api: TestAPI, _ post: Post, by account: Account) async throws {
        #expect(try await api.call(.put, "/posts/\(post.id)/like", as: account).status == .ok)
    }

    // MARK: encryption

    /// RFC 8291, Appendix A: the same keys and salt give the same bytes.
    @Test func encryptionMatchesRFC8291sExample() throws {
        func bytes(_ text: String) throws -> [UInt8] { try #require(ByteText.bytes(base64url: text)) }
        let body = try WebPushCrypto.encrypt(
            Array("When I grow up, I want to be a watermelon".utf8),
            p256dh: try bytes(
                "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
            auth: try bytes("BTBZMqHH6r4Tts7J_aSIgg"),
            serverKey: try P256.KeyAgreement.PrivateKey(
                rawRepresentation: try bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")),
            salt: try bytes("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(
            ByteText.base64url(body)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        )
        // And a browser's side reads what Plaza writes with fresh keys.
        let browser = TestBrowser()
        let message = Array("{\"hello\":\"ana\"}".utf8)
        let encrypted = try WebPushCrypto.encrypt(
            message, p256dh: Array(browser.key.publicKey.x963Representation), auth: browser.auth)
        #expect(try browser.decrypt(encrypted) == message)
        #expect(throws: WebPushCrypto.Failure.self) {
            try WebPushCrypto.encrypt(
                [UInt8](repeating: 1, count: WebPushCrypto.maxPlaintext + 1),
                p256dh: Array(browser.key.publicKey.x963Representation), auth: browser.auth)
        }
    }

    // MARK: devices

    @Test func devicesAreEachPersonsOwnAndGoWithTheirSession() async throws {
        try await withApp({ Self.configure(&$0, base: nil) }) { api in
            let token = String(repeating: "ab12", count: 16)
            #expect(
                try await api.call(.post, "/me/push-devices", json: RegisterPushDeviceRequest.apns(token: token)).status
                    == .unauthorized)
            #expect(try await api.get("/me/push-devices").status == .unauthorized)
            let key = try await api.get("/push/web-push-key").decode(WebPushKey.self)
            #expect(ByteText.bytes(base64url: key.publicKey)?.count == 65)

            let (ana, bob) = try await api.register("ana", "bob")
            let first = try await api.call(
                .post, "/me/push-devices", as: ana, json: RegisterPushDeviceRequest.apns(token: token.uppercased()))
            #expect(first.status == .created)
            let device = try first.decode(PushDevice.self)
            #expect(
                device.platform == .apns && device.environment == "production" && device.label == "…" + token.suffix(8))
            #expect(device.thisSession)
            // The same device again is the same device.
            let again = try await api.call(
                .post, "/me/push-devices", as: ana, json: RegisterPushDeviceRequest.apns(token: token))
            #expect(again.status == .ok)
            #expect(try again.decode(PushDevice.self).id == device.id)
            #expect(try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items.map(\.id) == [device.id])
            // Bob signs in on Ana's phone: the device is his now.
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: bob, json: RegisterPushDeviceRequest.apns(token: token)
                ).status == .created)
            #expect(try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items.isEmpty)
            #expect(try await api.page("/me/push-devices", as: bob, of: PushDevice.self).items.count == 1)

            // Only its owner removes it; another person's id is not found.
            let browser = TestBrowser()
            let subscribed = try await api.call(
                .post, "/me/push-devices", as: ana,
                json: browser.subscription(endpoint: "https://push.example.com/wp/1"))
            #expect(subscribed.status == .created)
            let webDevice = try subscribed.decode(PushDevice.self)
            #expect(webDevice.label == "https://push.example.com" && webDevice.environment == nil)
            #expect(try await api.call(.delete, "/me/push-devices/\(webDevice.id)", as: bob).status == .notFound)
            #expect(try await api.call(.delete, "/me/push-devices/\(webDevice.id)").status == .unauthorized)
            #expect(try await api.call(.delete, "/me/push-devices/\(webDevice.id)", as: ana).status == .noContent)
            #expect(try await api.call(.delete, "/me/push-devices/\(webDevice.id)", as: ana).status == .notFound)

            // Twenty devices at most: the twenty-first pushes out the one unused longest.
            var ids: [String] = []
            for n in 0..<(PushDeviceStore.maxPerPerson + 1) {
                let made = try await api.call(
                    .post, "/me/push-devices", as: ana,
                    json: RegisterPushDeviceRequest.apns(token: String(format: "%064x", n + 1)))
                #expect(made.status == .created)
                ids.append(try made.decode(PushDevice.self).id)
            }
            let kept = try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items.map(\.id)
            #expect(kept == Array(ids.dropFirst()))
            for id in kept {
                #expect(try await api.call(.delete, "/me/push-devices/\(id)", as: ana).status == .noContent)
            }

            // A device registered by a session goes when that session signs out.
            let login = try await api.logIn(ana)
            let phone = try login.decode(AuthResponse.self).token
            #expect(
                try await api.call(
                    .post, "/me/push-devices", token: phone,
                    json: RegisterPushDeviceRequest.apns(
                        token: String(repeating: "cd", count: 32), environment: "sandbox", bundleId: "com.example.other"
                    )
                ).status == .created)
            let listed = try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items
            #expect(listed.map(\.thisSession) == [false] && listed.first?.bundleId == "com.example.other")
            #expect(try await api.call(.post, "/auth/logout", token: phone).status == .noContent)
            #expect(try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items.isEmpty)
        }
    }

    @Test(arguments: [
        (#"{"platform":"apns","token":"xyz"}"#, "token"),
        (#"{"platform":"apns","token":"\#(String(repeating: "a", count: 63))"}"#, "token"),
        (#"{"platform":"apns","token":"\#(String(repeating: "a", count: 64))","environment":"dev"}"#, "environment"),
        (#"{"platform":"apns","token":"\#(String(repeating: "a", count: 64))","bundleId":"com/evil"}"#, "bundleId"),
        (
            #"{"platform":"webpush","endpoint":"http://push.example.com/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
            "endpoint"
        ),
        (#"{"platform":"webpush","endpoint":"https://10.0.0.1/x","keys":{"p256dh":"AA","auth":"AA"}}"#, "endpoint"),
        (#"{"platform":"webpush","endpoint":"https://[::1]/x","keys":{"p256dh":"AA","auth":"AA"}}"#, "endpoint"),
        (
            #"{"platform":"webpush","endpoint":"https://169.254.169.254/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
            "endpoint"
        ),
        (
            #"{"platform":"webpush","endpoint":"https://u:p@push.example.com/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
            "endpoint"
        ),
        (
            #"{"platform":"webpush","endpoint":"ftp://push.example.com/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
            "endpoint"
        ),
        (
            #"{"platform":"webpush","endpoint":"https://push.example.com/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
            "keys.p256dh"
        ),
        (#"{"platform":"webpush","endpoint":"https://push.example.com/x"}"#, "keys.p256dh"),
        (#"{"platform":"webpush","token":"\#(String(repeating: "a", count: 64))"}"#, "platform"),
    ])
    func badDevicesAre422(body: String, field: String) async throws {
        try await withApp({ Self.configure(&$0, base: nil) }) { api in
            let ana = try await api.register("ana")
            let response = try await api.call(.post, "/me/push-devices", as: ana, raw: body)
            #expect(response.status == .unprocessableContent, "\(body): \(response.text)")
            #expect(response.error?.field == field, "\(body): \(response.text)")
            #expect(try await api.page("/me/push-devices", as: ana, of: PushDevice.self).items.isEmpty)
        }
    }

    @Test func badKeysAndUnknownPlatformsAreRefused() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            let browser = TestBrowser()
            var request = browser.subscription(endpoint: "https://push.example.com/wp/1")
            request.keys?.auth = ByteText.base64url(ByteText.randomBytes(15))
            #expect(try await api.call(.post, "/me/push-devices", as: ana, json: request).error?.field == "keys.auth")
            // 65 bytes that are not a point on the curve.
            request = browser.subscription(endpoint: "https://push.example.com/wp/1")
            request.keys?.p256dh = ByteText.base64url([4] + [UInt8](repeating: 7, count: 64))
            #expect(try await api.call(.post, "/me/push-devices", as: ana, json: request).error?.field == "keys.p256dh")
            #expect(
                try await api.call(.post, "/me/push-devices", as: ana, raw: #"{"platform":"fcm"}"#).error?.field
                    == "platform")
            // Without APNs settings, Apple devices cannot be registered.
            let apns = try await api.call(
                .post, "/me/push-devices", as: ana,
                json: RegisterPushDeviceRequest.apns(token: String(repeating: "ab", count: 32)))
            #expect(apns.status == .unprocessableContent && apns.error?.code == "push_unavailable")
        }
    }

    @Test func pushPreferencesMergeAndAreChecked() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            #expect(try await api.call(.put, "/me/preferences", as: ana, raw: #"{"lastSpace":"cs101"}"#).status == .ok)
            let patched = try await api.call(.patch, "/me/preferences", as: ana, raw: #"{"push":{"like":false}}"#)
            #expect(patched.status == .ok)
            #expect(
                try patched.decode(JSONValue.self)
                    == .object(["lastSpace": .string("cs101"), "push": .object(["like": .bool(false)])]))
            let more = try await api.call(
                .patch, "/me/preferences", as: ana, raw: #"{"push":{"follow":false},"lastSpace":null}"#)
            #expect(
                try more.decode(JSONValue.self)
                    == .object(["push": .object(["like": .bool(false), "follow": .bool(false)])]))
            for bad in [#"{"push":{"like":"no"}}"#, #"{"push":{"poke":true}}"#, #"{"push":true}"#, "[1]"] {
                let response = try await api.call(.patch, "/me/preferences", as: ana, raw: bad)
                #expect(response.status == .unprocessableContent, "\(bad): \(response.text)")
            }
            #expect(
                try await api.call(.put, "/me/preferences", as: ana, raw: #"{"push":{"like":1}}"#).status
                    == .unprocessableContent)
            #expect(try await api.call(.patch, "/me/preferences", raw: #"{"push":{}}"#).status == .unauthorized)
            #expect(
                try await api.get("/me/preferences", as: ana).decode(JSONValue.self)
                    == .object(["push": .object(["like": .bool(false), "follow": .bool(false)])]))
        }
    }

    // MARK: delivery

    /// A push says what the web app's notification list says, in the recipient's language.
    @Test func aPushSpeaksItsRecipientsLanguage() async throws {
        try await Self.withPushApp { api, services, base in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(try await api.call(.patch, "/me/preferences", as: ana, json: ["language": "de"]).status == .ok)
            let browser = TestBrowser()
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana, json: browser.subscription(endpoint: base + "/wp/ana")
                ).status == .created)
            let post = try await api.textPost(ana, "hallo von ana")
            try await Self.like(api, post, by: bob)
            let push = try #require(try await services.pushes(to: "/wp/ana").first)
            #expect(try browser.payload(push).body == "bob gefällt dein Beitrag: „hallo von ana“")
        }
    }

    @Test func webPushesAreEncryptedSignedAndABurstIsOnePush() async throws {
        try await Self.withPushApp { api, services, base in
            let (ana, bob) = try await api.register("ana", "bob")
            let browser = TestBrowser()
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana, json: browser.subscription(endpoint: base + "/wp/ana")
                ).status == .created)
            let post = try await api.textPost(ana, "hello from ana")
            try await Self.like(api, post, by: bob)
            let push = try #require(try await services.pushes(to: "/wp/ana").first)
            let payload = try browser.payload(push)
            #expect(payload.body == "bob liked your post: “hello from ana”")
            #expect(
                payload.url == "/p/\(post.id)" && payload.kind == "like" && payload.title == api.config.instanceName)
            #expect(payload.badge == 1)
            #expect(push.header("Content-Encoding") == "aes128gcm" && push.header("TTL") == "86400")
            #expect(push.header("Urgency") == "normal" && push.header("Topic") == payload.tag)
            // The VAPID token is the server's, for this push service's origin.
            let key = try await api.get("/push/web-push-key").decode(WebPushKey.self).publicKey
            let authorization = try #require(push.header("Authorization"))
            #expect(authorization.hasPrefix("vapid t=") && authorization.hasSuffix(", k=\(key)"))
            let jwt = String(authorization.dropFirst("vapid t=".count).prefix { $0 != "," })
            let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(ByteText.bytes(base64url: key)))
            let keys = await JWTKeyCollection().add(ecdsa: try ES256PublicKey(backing: publicKey))
            let claims = try await keys.verify(jwt, as: VAPIDClaims.self)
            #expect(claims.aud.value == [base] && claims.sub.value.hasPrefix("mailto:"))

            // More likes after it went out: one more push, a minute after the first, for all of them.
            let sent = try await Self.waitForDelivery(api, recipient: ana, state: "sent")
            let (carl, dave) = try await api.register("carl", "dave")
            try await Self.like(api, post, by: carl)
            try await Self.like(api, post, by: dave)
            let waiting = try #require(try await Self.delivery(api, recipient: ana))
            #expect(waiting.state == "pending" && waiting.notification == sent.notification)
            #expect(waiting.next >= (sent.sent ?? 0) + PushOutbox.coalesceMillis)
            #expect(services.all.count == 1)
            // A minute later (moved, not waited for):
            _ = try await api.withDatabase { db in try await db.write("UPDATE push_deliveries SET next_attempt_at = 0")
            }
            let second = try #require(try await services.pushes(to: "/wp/ana", count: 2).last)
            let burst = try browser.payload(second)
            #expect(burst.body == "dave and 2 others liked your post: “hello from ana”" && burst.badge == 1)
            #expect(second.header("Topic") == push.header("Topic"))
        }
    }

    @Test func goneSubscriptionsAreRemovedAndFailuresRetried() async throws {
        try await Self.withPushApp { api, services, base in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana,
                    json: TestBrowser().subscription(endpoint: base + "/wp/gone-ana")
                ).status == .created)
            try await api.follow(bob, "ana")
            _ = try await services.pushes(to: "/wp/gone-ana")
            #expect(try await Self.devicesLeft(api, ana).isEmpty)

            // A push service that fails once: tried again after the wait.
            let browser = TestBrowser()
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana, json: browser.subscription(endpoint: base + "/wp/flaky-ana")
                ).status == .created)
            let carl = try await api.register("carl")
            try await api.follow(carl, "ana")
            _ = try await services.pushes(to: "/wp/flaky-ana")
            // Recorded as failed once, and due again after the first wait (15 s), not the lease's.
            let before = Timestamp.now.milliseconds
            let failed = try await Self.waitForDelivery(api, recipient: ana, state: "pending") { $0.error != nil }
            #expect(failed.attempts == 1 && failed.error == "HTTP 503")
            #expect(
                failed.next > before
                    && failed.next <= Timestamp.now.milliseconds + PushOutbox.retryDelayMillis(afterAttempt: 1))
            _ = try await api.withDatabase { db in
                try await db.write("UPDATE push_deliveries SET next_attempt_at = 0 WHERE state = 'pending'")
            }
            let retried = try await services.pushes(to: "/wp/flaky-ana", count: 2)
            #expect(try browser.payload(retried[1]).body == "carl and 1 other followed you")
            #expect(try await Self.waitForDelivery(api, recipient: ana, state: "sent").attempts == 2)
        }
    }

    @Test func nothingIsPushedThatTheRecipientTurnedOffOrCannotSee() async throws {
        try await Self.withPushApp { api, services, base in
            let (ana, bob, carl) = try await api.register("ana", "bob", "carl")
            let browser = TestBrowser()
            #expect(
                try await api.call(.patch, "/me/preferences", as: ana, raw: #"{"push":{"like":false}}"#).status == .ok)
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana, json: browser.subscription(endpoint: base + "/wp/flaky-ana")
                ).status == .created)
            let post = try await api.textPost(ana, "ana's post")
            try await Self.like(api, post, by: bob)
            #expect(try await Self.waitForDelivery(api, recipient: ana, state: "moot").attempts == 1)
            #expect(services.all.isEmpty)
            // A comment is pushed; its first attempt fails; then Ana blocks its author: the retry never comes.
            #expect(
                try await api.call(
                    .post, "/posts/\(post.id)/comments", as: carl, json: CreateCommentRequest(body: "carl's reply")
                ).status == .created)
            _ = try await services.pushes(to: "/wp/flaky-ana")
            let pending = try await Self.waitForDelivery(api, recipient: ana, state: "pending") { $0.error != nil }
            #expect(try await api.call(.put, "/users/carl/block", as: ana).status == .ok)
            let left = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.rows(
                        "SELECT state FROM push_deliveries WHERE notification_id = \(bind: pending.notification)")
                }
            }
            #expect(left.isEmpty)
            // The next notification goes out, and it is the only other push.
            #expect(
                try await api.call(
                    .post, "/posts/\(post.id)/comments", as: bob, json: CreateCommentRequest(body: "bob's reply")
                ).status == .created)
            let pushes = try await services.pushes(to: "/wp/flaky-ana", count: 2)
            #expect(
                try pushes.map { try browser.payload($0).body } == [
                    "carl commented on your post: “carl's reply”", "bob commented on your post: “bob's reply”",
                ])
        }
    }

    @Test func apnsPushesCarryTheProviderTokenTopicAndCollapseID() async throws {
        try await Self.withPushApp { api, services, base in
            let (ana, bob) = try await api.register("ana", "bob")
            let token = String(repeating: "ab", count: 32)
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana, json: RegisterPushDeviceRequest.apns(token: token)
                ).status == .created)
            let post = try await api.textPost(ana, "a photo of ramen")
            try await Self.like(api, post, by: bob)
            let push = try #require(try await services.pushes(to: "/3/device/\(token)").first)
            #expect(push.header("apns-topic") == "com.example.plaza" && push.header("apns-push-type") == "alert")
            #expect(push.header("apns-priority") == "10")
            let notifications = try await api.page("/me/notifications", as: ana, of: PlazaAPI.Notification.self).items
            #expect(push.header("apns-collapse-id") == "n\(notifications.first?.id ?? "")")
            let bearer = try #require(push.header("authorization"))
            let keys = await JWTKeyCollection().add(
                ecdsa: try ES256PublicKey(backing: Self.apnsKey.publicKey), kid: JWKIdentifier(string: "KEY1234567"))
            let claims = try await keys.verify(String(bearer.dropFirst("bearer ".count)), as: APNsClaims.self)
            #expect(claims.iss.value == "TEAM123456")
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(push.body)) as? [String: Any])
            let aps = try #require(payload["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["body"] as? String == "bob liked your post: “a photo of ramen”")
            #expect(aps["badge"] as? Int == 1)
            #expect((payload["plaza"] as? [String: Any])?["path"] as? String == "/p/\(post.id)")
            #expect(push.body.count < 4096)

            // A token Apple says is unregistered is forgotten.
            let dead = "dead" + String(repeating: "0", count: 60)
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: bob, json: RegisterPushDeviceRequest.apns(token: dead)
                ).status == .created)
            try await api.follow(ana, "bob")
            _ = try await services.pushes(to: "/3/device/dead")
            #expect(try await Self.devicesLeft(api, bob).isEmpty)
            _ = base
        }
    }

    /// An HTTP/2 connection the server is closing fails a request handed to it as `cancelled`
    /// before writing it (found when the retry after Apple's 429 met the server's keep-alive end
    /// and waited a whole backoff): such a push is sent again at once. The same error for a
    /// send that was itself cancelled (the server shutting down) is not sent again.
    @Test func apnsSendsAgainWhatAClosingConnectionNeverSent() async throws {
        let message = PushMessage(
            title: "Plaza", body: "bob followed you", path: "/u/bob", notificationID: "1", kind: .follow, badge: 1)
        let job = PushOutbox.Job(
            notification: 1, device: 1, recipient: 1, attempts: 0, generation: 0, claim: 1, platform: .apns,
            address: String(repeating: "ab", count: 32), owner: 1, preferences: "{}", unread: 1)
        var settings = APNsSettings(
            keyPEM: Self.apnsKey.pemRepresentation, keyID: "KEY1234567", teamID: "TEAM123456",
            topic: "com.example.plaza")
        settings.productionURL = "https://127.0.0.1:9"
        let closing = NIOLockedValueBox(0)
        let sender = try await APNsSender(settings: settings) { _ in
            // The first request meets a closing connection; the next one a fresh connection.
            guard
                closing.withLockedValue({
                    $0 += 1
                    return $0
                }) > 1
            else { throw HTTPClientError.cancelled }
            return HTTPClientResponse(status: .ok)
        }
        #expect(await sender.send(message, to: job) == .sent)
        #expect(closing.withLockedValue { $0 } == 2)

        let sends = NIOLockedValueBox(0)
        let stopping = try await APNsSender(settings: settings) { _ in
            sends.withLockedValue { $0 += 1 }
            throw HTTPClientError.cancelled
        }
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await stopping.send(message, to: job)
        }
        guard case .retry = await cancelled.value else {
            Issue.record("a cancelled send is tried again later, not at once")
            return
        }
        #expect(sends.withLockedValue { $0 } == 1)
    }

    /// With `PLAZA_PUSH_PUBLIC=off` (as every test runs) a push service named by a host name is
    /// never looked up: the push is refused before any connection, and the device forgotten.
    /// `PLAZA_PUSH_ALLOW` is parsed once, when the configuration is read: a bad entry stops
    /// start-up naming the setting and the entry; a good list is what registrations are checked against.
    @Test func theAllowListIsParsedWhenTheConfigurationIsRead() async throws {
        #expect {
            try PlazaConfig(reader: IdentityTests.reader(["plaza.push.allow": "127.0.0.1, 10.0.0.0/99"]))
        } throws: { error in
            "\(error)".contains("PLAZA_PUSH_ALLOW") && "\(error)".contains("\"10.0.0.0/99\"")
        }
        let parsed = try PlazaConfig(reader: IdentityTests.reader(["plaza.push.allow": " 127.0.0.1 ,, ::1"])).push
        #expect(parsed.allowed.allowed == [IPBlock("127.0.0.1")!, IPBlock("::1")!])
        #expect(try PlazaConfig(reader: IdentityTests.reader([:])).push.allowed.allowed.isEmpty)
        let endpoint = TestBrowser().subscription(endpoint: "http://127.0.0.1:9/wp/ana")
        for allowed in [true, false] {
            try await withApp({ $0.push.allowed = allowed ? parsed.allowed : AddressPolicy() }) { api in
                let ana = try await api.register("ana")
                let status = try await api.call(.post, "/me/push-devices", as: ana, json: endpoint).status
                #expect(status == (allowed ? .created : .unprocessableContent))
            }
        }
    }

    @Test func namedPushServicesAreRefusedWhenOnlyTheAllowListCounts() async throws {
        try await Self.withPushApp { api, services, _ in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana,
                    json: TestBrowser().subscription(endpoint: "https://push.example.com/wp/ana")
                ).status == .created)
            try await api.follow(bob, "ana")
            #expect(try await Self.devicesLeft(api, ana).isEmpty)
            #expect(services.all.isEmpty)
        }
    }

    /// A notification that changes while its push is out gets another push a minute later; a
    /// worker whose claim lapsed (and was taken again) records nothing.
    @Test func aChangeDuringASendIsPushedTooAndLapsedClaimsRecordNothing() async throws {
        try await withDatabase { db, _ in
            try await db.write { conn in
                for (id, name) in [(1, "ana"), (2, "bob")] {
                    try await conn.exec(
                        """
                        INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, created_at)
                        VALUES (\(bind: id), \(bind: name), \(bind: name), \(bind: name + "@example.com"), \(bind: name + "@example.com"), 'x', \(bind: name), 0)
                        """)
                }
                try await conn.exec(
                    "INSERT INTO sessions (id, user_id, token_hash, created_at, last_used_at) VALUES (5, 1, 'h', 0, 0)")
                try await conn.exec(
                    """
                    INSERT INTO push_devices (id, user_id, session_id, platform, address, created_at)
                    VALUES (6, 1, 5, 'apns', \(bind: String(repeating: "ab", count: 32)), 0)
                    """)
                try await conn.exec(
                    """
                    INSERT INTO notifications (id, recipient_id, kind, group_key, actor_id, sort_id, updated_at)
                    VALUES (10, 1, 'follow', 'follow', 2, 10, 0)
                    """)
            }
            let outbox = PushOutbox(db: db)
            func row() async throws -> (state: String, attempts: Int, next: Int64, sent: Int64?) {
                try await db.read { db in
                    let row = try #require(
                        try await db.first(
                            "SELECT state, attempts, next_attempt_at, sent_at FROM push_deliveries WHERE notification_id = 10"
                        ))
                    return (
                        try row.decode(column: "state", as: String.self),
                        try row.decode(column: "attempts", as: Int.self),
                        try row.decode(column: "next_attempt_at", as: Int64.self),
                        try row.decode(column: "sent_at", as: Int64?.self)
                    )
                }
            }
            try await db.write { try await PushOutbox.enqueue(notification: 10, recipient: 1, now: 0, on: $0) }
            let first = try #require(try await outbox.claimDue(now: 1_000, limit: 10, leaseMillis: 60_000).first)
            // Someone joins while that push is being sent: it keeps its time, and is not marked done.
            try await db.write { try await PushOutbox.enqueue(notification: 10, recipient: 1, now: 2_000, on: $0) }
            #expect(try await row().next == 61_000)
            try await outbox.record(.sent, for: first, now: 3_000)
            var now = try await row()
            #expect(now.state == "pending" && now.sent == 3_000 && now.next == 3_000 + PushOutbox.coalesceMillis)
            #expect(try await outbox.claimDue(now: 10_000, limit: 10, leaseMillis: 60_000).isEmpty)
            // A minute later it goes again; the first claim's late answer changes nothing.
            let second = try #require(try await outbox.claimDue(now: 63_000, limit: 10, leaseMillis: 60_000).first)
            try await outbox.record(.failed("too late"), for: first, now: 64_000)
            #expect(try await row().state == "pending")
            try await outbox.record(.sent, for: second, now: 64_000)
            now = try await row()
            #expect(now.state == "sent" && now.sent == 64_000)
            // Joined after it went out: due a minute after that push.
            try await db.write { try await PushOutbox.enqueue(notification: 10, recipient: 1, now: 70_000, on: $0) }
            now = try await row()
            #expect(now.state == "pending" && now.attempts == 0 && now.next == 64_000 + PushOutbox.coalesceMillis)
            // A lease that lapses: claimed again by another worker, whose outcome counts.
            let third = try #require(try await outbox.claimDue(now: 130_000, limit: 10, leaseMillis: 1_000).first)
            let fourth = try #require(try await outbox.claimDue(now: 131_001, limit: 10, leaseMillis: 60_000).first)
            try await outbox.record(.gone("no"), for: fourth, now: 131_002)
            try await outbox.record(.sent, for: third, now: 131_003)
            let devices = try await db.read { db in try await db.rows("SELECT id FROM push_devices") }
            #expect(devices.isEmpty)
        }
    }

    /// Apple's and the push services' answers, as the senders read them.
    @Test func answersMeanWhatTheServicesSay() {
        #expect(APNsSender.outcome(status: 200, reason: "", retryAfter: nil) == .sent)
        #expect(
            APNsSender.outcome(status: 410, reason: "Unregistered", retryAfter: nil) == .gone("HTTP 410 Unregistered"))
        #expect(
            APNsSender.outcome(status: 400, reason: "BadDeviceToken", retryAfter: nil)
                == .gone("HTTP 400 BadDeviceToken"))
        #expect(
            APNsSender.outcome(status: 429, reason: "TooManyRequests", retryAfter: 5000)
                == .retry("HTTP 429 TooManyRequests", afterMillis: 5000))
        #expect(
            APNsSender.outcome(status: 403, reason: "ExpiredProviderToken", retryAfter: nil)
                == .retry("HTTP 403 ExpiredProviderToken", afterMillis: nil))
        #expect(
            APNsSender.outcome(status: 413, reason: "PayloadTooLarge", retryAfter: nil)
                == .failed("HTTP 413 PayloadTooLarge"))
        #expect(WebPushSender.outcome(status: 201, retryAfter: nil) == .sent)
        #expect(WebPushSender.outcome(status: 404, retryAfter: nil) != .sent)
        #expect(APNsSender.retryAfterMillis("99999999999") == 3_600_000 && APNsSender.retryAfterMillis("-1") == nil)
        #expect(APNsSender.retryAfterMillis("Wed, 21 Oct 2026 07:28:00 GMT") == nil)
        if case .gone = WebPushSender.outcome(status: 403, retryAfter: nil) {} else { Issue.record("403 is gone") }
        if case .gone = WebPushSender.outcome(status: 410, retryAfter: nil) {} else { Issue.record("410 is gone") }
        if case .retry = WebPushSender.outcome(status: 503, retryAfter: nil) {} else { Issue.record("503 is retried") }
        if case .failed = WebPushSender.outcome(status: 400, retryAfter: nil) {} else { Issue.record("400 fails") }
        // Retry waits grow and stop at an hour.
        #expect(
            (1..<PushOutbox.maxAttempts).map(PushOutbox.retryDelayMillis(afterAttempt:)) == [
                15_000, 60_000, 240_000, 960_000, 3_600_000, 3_600_000, 3_600_000,
            ])
    }

    @Test func messagesNameTheActorsAndQuoteBriefly() {
        #expect(PushMessage.quote(String(repeating: "word ", count: 60)).count <= PushMessage.maxQuote + 1)
        #expect(PushMessage.quote("two\n\nlines  here") == "two lines here")
        // A character of many combining marks counts its bytes.
        let heavy = "e" + String(repeating: "\u{301}", count: 2_000)
        #expect(PushMessage.quote(String(repeating: heavy + " ", count: 50)).utf8.count <= 4 * PushMessage.maxQuote + 4)
        #expect(PushMessage.prefix("añb", bytes: 2) == "a" && PushMessage.prefix("añb", bytes: 3) == "añ")
    }
}

@Suite("Web app: installable, offline, share target")
struct WebInstallTests {
    @Test func theManifestAndServiceWorkerAreServedForInstalling() async throws {
        try await withApp({ $0.instanceName = "Ramen Club" }) { api in
            let manifest = try await api.page(.get, "/manifest.webmanifest")
            #expect(manifest.status == .ok && manifest.headers[.contentType] == "application/manifest+json")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(manifest.body.readableBytesView)) as? [String: Any])
            #expect(json["name"] as? String == "Ramen Club" && json["display"] as? String == "standalone")
            #expect(json["start_url"] as? String == "/" && json["scope"] as? String == "/")
            let icons = try #require(json["icons"] as? [[String: Any]])
            #expect(icons.contains { $0["sizes"] as? String == "512x512" && $0["type"] as? String == "image/png" })
            for icon in icons {
                let src = try #require(icon["src"] as? String)
                let file = try await api.page(.get, src)
                #expect(file.status == .ok && file.body.readableBytes > 100, "\(src)")
            }
            let share = try #require(json["share_target"] as? [String: Any])
            #expect(share["action"] as? String == "/share" && share["method"] as? String == "GET")
            #expect(share["params"] as? [String: String] == ["title": "title", "text": "text", "url": "url"])

            let worker = try await api.page(.get, "/sw.js")
            #expect(worker.status == .ok && worker.headers[.contentType]?.hasPrefix("text/javascript") == true)
            #expect(worker.headers[.cacheControl] == "no-cache")
            #expect(worker.text.contains("addEventListener('push'") && worker.text.contains("notificationclick"))
            // Pages link the manifest; the policy lets the worker and the manifest load from here only.
            let home = try await api.page(.get, "/login")
            #expect(home.text.contains(#"<link rel="manifest" href="/manifest.webmanifest">"#))
            let policy = home.headers[.contentSecurityPolicy] ?? ""
            // Whose page it is, for the offline copies.
            #expect(home.headers[WebController.viewerHeader] == "anonymous")
            #expect(policy.contains("manifest-src 'self'") && policy.contains("script-src 'self'"))
        }
    }

    @Test func aSharedLinkIsSavedToAChosenOrNewCollection() async throws {
        try await withApp { api in
            // Anonymous: to the sign-in page, and back here after.
            let anonymous = try await api.page(.get, "/share?url=https%3A%2F%2Fexample.com%2Fa")
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location]?.hasPrefix("/login?next=") == true)

            let (ana, bob) = try await api.register("ana", "bob")
            #expect(
                try await api.page(.get, "/", cookie: ana.cookie).headers[WebController.viewerHeader] == ana.id)
            // Android shares text with the link inside it.
            let page = try await api.page(
                .get,
                "/share?title=Ramen&text="
                    + formEncode(["t": "look at this https://example.com/ramen now"]).dropFirst(2),
                cookie: ana.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains(#"name="url" value="https://example.com/ramen""#))
            #expect(page.text.contains(#"value="new" checked"#))
            // A new collection, named in the same step.
            let saved = try await api.page(
                .post, "/share", cookie: ana.cookie,
                form: formEncode([
                    "_csrf": ana.csrf, "url": "https://example.com/ramen", "collection": "new", "newName": "Food",
                    "note": "for friday",
                ]))
            #expect(saved.status == .seeOther, "\(saved.text)")
            let collections = try await api.page("/collections", as: ana, of: SavedCollection.self).items
            #expect(collections.map(\.name) == ["Food"])
            let food = try #require(collections.first)
            #expect(saved.headers[.location] == "/collections/\(food.id)")
            let items = try await api.page("/collections/\(food.id)/items", as: ana, of: CollectionItem.self).items
            #expect(items.map(\.note) == ["for friday"])
            // Next time the collection is offered, chosen first.
            let again = try await api.page(.get, "/share?url=https%3A%2F%2Fexample.com%2Fb", cookie: ana.cookie)
            #expect(again.text.contains(#"value="\#(food.id)" checked"#))
            #expect(
                try await api.page(
                    .post, "/share", cookie: ana.cookie,
                    form: formEncode(["_csrf": ana.csrf, "url": "https://example.com/b", "collection": food.id])
                ).status == .seeOther)
            #expect(
                try await api.page("/collections/\(food.id)/items", as: ana, of: CollectionItem.self).items.count == 2)

            // Someone else's collection is not found; a bad link or no name is said, and nothing is saved.
            let others = try await api.page(
                .post, "/share", cookie: bob.cookie,
                form: formEncode(["_csrf": bob.csrf, "url": "https://example.com/c", "collection": food.id]))
            #expect(others.status == .notFound)
            let badURL = try await api.page(
                .post, "/share", cookie: bob.cookie,
                form: formEncode(["_csrf": bob.csrf, "url": "javascript:alert(1)", "collection": "new", "newName": "x"])
            )
            #expect(badURL.status == .unprocessableContent && badURL.text.contains(#"class="error""#))
            #expect(!badURL.text.contains("javascript:"))
            let noName = try await api.page(
                .post, "/share", cookie: bob.cookie,
                form: formEncode([
                    "_csrf": bob.csrf, "url": "https://example.com/c", "collection": "new", "newName": "",
                ]))
            #expect(noName.status == .unprocessableContent)
            #expect(try await api.page("/collections", as: bob, of: SavedCollection.self).items.isEmpty)
            // Without the form's token, nothing happens.
            let forged = try await api.page(
                .post, "/share", cookie: bob.cookie,
                form: formEncode(["url": "https://example.com/c", "collection": "new", "newName": "x"]))
            #expect(forged.status == .forbidden)
            #expect(try await api.page("/collections", as: bob, of: SavedCollection.self).items.isEmpty)
            // Nothing with a link in it: said so.
            let nothing = try await api.page(.get, "/share?text=hello", cookie: bob.cookie)
            #expect(nothing.text.contains("has no web link"))
        }
    }

    @Test func settingsShowPushSwitchesAndDevices() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            #expect(
                try await api.call(.patch, "/me/preferences", as: ana, raw: #"{"push":{"like":false}}"#).status == .ok)
            let browser = TestBrowser()
            #expect(
                try await api.call(
                    .post, "/me/push-devices", as: ana,
                    json: browser.subscription(endpoint: "https://push.example.com/wp/9")
                ).status == .created)
            let settings = try await api.page(.get, "/settings", cookie: ana.cookie)
            #expect(settings.text.contains(#"data-push-kind="like">"#))
            #expect(settings.text.contains(#"data-push-kind="comment" checked>"#))
            #expect(settings.text.contains("Browser · https://push.example.com"))
        }
    }
}
