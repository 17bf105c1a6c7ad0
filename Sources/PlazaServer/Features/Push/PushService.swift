import Foundation
import Logging
import PlazaAPI
import ServiceLifecycle

/// How pushes are sent.
public struct PushSettings: Sendable {
    /// The CIDR blocks Web Push endpoints may be at although they are private; plain http is
    /// allowed to these only (`PLAZA_PUSH_ALLOW`, the format of `PLAZA_LINK_PREVIEW_ALLOW`). Parsed
    /// once, when the configuration is read (a bad entry stops start-up), and used as it is by the
    /// device registration and the sender.
    package var allowed = AddressPolicy()
    /// False: push only to allow-listed addresses and look up no host name but `localhost`
    /// (closed networks, test runs that must stay on loopback), `PLAZA_PUSH_PUBLIC=off`.
    public var publicAddresses = true
    /// nil: no pushes to Apple devices (registering one is refused).
    public var apns: APNsSettings?
    /// The VAPID contact; by default the public URL when it is https, else the mail sender.
    public var vapidSubject: String?
    /// How often the queue is checked for retries and for pushes other app servers queued.
    public var pollInterval: Duration = .seconds(5)
    public var timeout: Duration = .seconds(10)
    public init() {}
}

/// The pushes of subscriptions an app made through another door (Mastodon's
/// `/api/v1/push/subscription`): that door stored its settings with the subscription and says
/// from them what each push carries.
package protocol AppPushFormat: Sendable {
    /// The push's plaintext for `notification` and whether it goes out in the legacy `aesgcm`
    /// encoding (else RFC 8291's `aes128gcm`); nil when the app does not want this one.
    /// `accessToken` is the token that made the subscription (opened from its sealed copy), or
    /// nil when it has none or it no longer opens.
    func payload(
        settings: String?, accessToken: String?, _ notification: PlazaAPI.Notification, message: PushMessage
    ) -> (bytes: [UInt8], legacy: Bool)?
}

/// Background worker: sends the pushes `PushOutbox` holds, a few at a time, woken after each
/// commit that recorded a notification. Each push is rendered when it is sent, from the
/// notification as its recipient may see it then: a block or a narrowed audience since, a
/// read notification, a kind turned off, or a device that moved to someone else sends nothing.
struct PushService: Service {
    let outbox: PushOutbox
    let notifications: NotificationStore
    let webPush: WebPushSender
    let apns: APNsSender?
    /// How the subscriptions another door made want their pushes (Mastodon's), if one did.
    let appPushes: (any AppPushFormat)?
    /// Opens the access tokens those subscriptions keep sealed.
    let appTokens: AppPushTokens
    let signal: WorkSignal
    let instanceName: InstanceName
    let pollInterval: Duration
    let leaseMillis: Int64
    let logger: Logger
    static let concurrency = 16

    func run() async throws {
        await signal.work(pollInterval: pollInterval) { await runOnce() }
        await apns?.shutdown()
        await webPush.fetcher.clients?.shutdown()
    }

    /// Sends every due push, up to `concurrency` at a time: a slot that frees takes the next
    /// due one, so a slow push service holds one slot, not the whole batch. Returns when nothing
    /// is due or in flight; false (the loop then waits for a wake-up or the next poll).
    @discardableResult
    func runOnce() async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            while !Task.isShuttingDownGracefully {
                let free = Self.concurrency - running
                if free > 0 {
                    let jobs = await claim(limit: free)
                    if !jobs.isEmpty {
                        for (job, notification) in await render(jobs) {
                            group.addTask { await deliver(job, notification: notification) }
                            running += 1
                        }
                        continue
                    }
                }
                guard running > 0 else { break }
                await group.next()
                running -= 1
            }
        }
        return false
    }

    private func claim(limit: Int) async -> [PushOutbox.Job] {
        do {
            return try await outbox.claimDue(
                now: Timestamp.now.milliseconds, limit: limit, leaseMillis: leaseMillis)
        } catch {
            logger.warning("Push queue unreadable: \(String(reflecting: error))")
            return []
        }
    }

    /// Each recipient's notifications, rendered in one read; a job whose recipient's read failed
    /// is tried again later (a render that failed is not a notification that is gone).
    private func render(_ jobs: [PushOutbox.Job]) async -> [(PushOutbox.Job, PlazaAPI.Notification?)] {
        var out: [(PushOutbox.Job, PlazaAPI.Notification?)] = []
        for (recipient, group) in Dictionary(grouping: jobs, by: \.recipient) {
            do {
                let rendered = try await notifications.notifications(
                    ids: group.map(\.notification), recipient: recipient)
                out += group.map { ($0, rendered[$0.notification]) }
            } catch {
                logger.warning("Push not rendered: \(String(reflecting: error))")
                for job in group { try? await outbox.record(.retry("\(error)", afterMillis: nil), for: job) }
            }
        }
        return out
    }

    func deliver(_ job: PushOutbox.Job, notification: PlazaAPI.Notification?) async {
        let outcome: PushOutbox.Outcome
        if let reason = Self.mootReason(job, notification: notification) {
            outcome = .moot(reason)
        } else if let notification {
            let message = PushMessage(
                notification, instanceName: await instanceName.fresh(), badge: job.unread,
                t: MessageCatalog.localizer(Language(preferences: job.preferences)))
            switch job.platform {
            case .webpush where job.appSettings != nil:
                let token = await appTokens.open(job.appToken, device: job.device)
                if let payload = appPushes?.payload(
                    settings: job.appSettings, accessToken: token, notification, message: message)
                {
                    outcome = await webPush.send(message, to: job, payload: payload.bytes, legacy: payload.legacy)
                } else {
                    outcome = .moot("not among the app's alerts")
                }
            case .webpush: outcome = await webPush.send(message, to: job)
            case .apns:
                if let apns {
                    outcome = await apns.send(message, to: job)
                } else {
                    outcome = .failed("APNs is not configured on this server")
                }
            }
        } else {
            outcome = .moot("not shown")
        }
        let level: Logger.Level =
            switch outcome {
            case .sent, .moot: .debug
            default: .warning
            }
        logger.log(
            level: level, "Push \(outcome)",
            metadata: [
                "notification": "\(job.notification)", "device": "\(job.device)",
                "platform": "\(job.platform.rawValue)",
                "attempt": "\(job.attempts + 1)",
            ])
        do {
            try await outbox.record(outcome, for: job)
        } catch {
            logger.warning("Push outcome not recorded: \(String(reflecting: error))")
        }
    }

    /// Why nothing is to be sent, or nil.
    static func mootReason(_ job: PushOutbox.Job, notification: PlazaAPI.Notification?) -> String? {
        guard job.owner == job.recipient else { return "the device belongs to someone else now" }
        guard let notification else { return "the notification is gone or hidden from its recipient" }
        guard !notification.read else { return "already read" }
        guard PushPreferences(json: job.preferences).wants(notification.kind) else { return "turned off" }
        if [.comment, .reply].contains(notification.kind), notification.comment == nil { return "the comment is gone" }
        return nil
    }
}

/// The person's per-kind push switches, `preferences.push` (`{"like": false, …}`); a kind not
/// named is on.
struct PushPreferences: Equatable {
    var off: Set<NotificationKind> = []

    init(json: String) { self.init(value: AccountStore.decodePreferences(json)) }

    init(value: JSONValue) {
        guard case .object(let preferences) = value, case .object(let push)? = preferences["push"] else { return }
        for (key, value) in push {
            if let kind = NotificationKind(rawValue: key), case .bool(false) = value { off.insert(kind) }
        }
    }

    func wants(_ kind: NotificationKind) -> Bool { !off.contains(kind) }
}
