import Foundation
import Testing

@testable import PlazaKit
@testable import PlazaKitCore

/// Push devices and switches through the SDK, against a real `plaza serve` (without APNs settings).
@Suite("PlazaKit push devices and preferences against a running plaza serve")
struct PushDeviceTests {
    @Test func devicesAndSwitchesAreEachPersonsOwn() async throws {
        try await withServer { server in
            let ana = try await signedUp("ana", on: server)
            let bob = try await signedUp("bob", on: server)
            // This server has no APNs key: an iPhone's token is refused, saying why.
            do {
                try await ana.registerForPush(deviceToken: Data((0..<32).map { UInt8($0) }))
                Issue.record("APNs is not configured here")
            } catch let error as PlazaClientError {
                #expect(error.status == 422 && error.code == "push_unavailable")
            }
            // A browser's subscription (keys as a browser makes them), then gone again.
            let key = try await ana.webPushKey().publicKey
            #expect(key.count == 87)
            let subscription = RegisterPushDeviceRequest.webPush(
                endpoint: "https://push.example.com/send/abc",
                p256dh: "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
                auth: "BTBZMqHH6r4Tts7J_aSIgg")
            let device = try await ana.registerPushDevice(subscription)
            #expect(device.platform == .webpush && device.thisSession)
            #expect(try await ana.pushDevices().items.map(\.id) == [device.id])
            #expect(try await bob.pushDevices().items.isEmpty)
            do {
                try await bob.removePushDevice(device.id)
                Issue.record("not Bob's device")
            } catch let error as PlazaClientError {
                #expect(error.status == 404)
            }
            try await ana.removePushDevice(device.id)
            #expect(try await ana.pushDevices().items.isEmpty)

            let preferences = try await ana.setPushNotifications([.like: false, .mention: true])
            #expect(preferences["push"] == .object(["like": .bool(false), "mention": .bool(true)]))
            #expect(
                try await ana.updatePreferences(.object(["push": .object(["like": .null])]))["push"]
                    == .object(["mention": .bool(true)]))
            // Signing up sent the device's time zone and language.
            #expect(preferences["timeZone"]?.stringValue == TimeZone.current.identifier)
            #expect(preferences["language"]?.stringValue == Locale.preferredLanguages.first)
        }
    }
}
