import Foundation
import Logging
import PlazaAPI
import ServiceLifecycle

/// How pushes are sent.
public struct PushSettings: Sendable {
    /// CIDR blocks Web Push endpoints may be at although they are private; plain http is
    /// allowed to these only (`PLAZA_PUSH_ALLOW`, the format of `PLAZA_LINK_PREVIEW_ALLOW`).
    public var allowList = ""
    /// nil: no pushes to Apple devices (registering one is refused).
    public var apns: APNsSettings?
    /// The VAPID contact; by default the public URL when it is https, else the mail sender.
    public var vapidSubject: String?
    /// How often the queue is checked for retries and for pushes other app servers queued.
    public var pollInterval: Duration = .seconds(5)
    public var timeout: Duration = .seconds(10)
    public init() {}
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
    let signal: WorkSignal
    let instanceName: String
    let pollInterval: Duration
    let leaseMillis: Int64
    let logger: Logger
    static let concurrency = 8

    func run() async throws {
        await signal.work(pollInterval: pollInterval) { await runOnce() }
        await apns?.shutdown()
    }

    /// Sends one batch of due pushes; false when none was due.
    @discardableResult
    func runOnce(now: Int64 = Timestamp.now.milliseconds) async -> Bool {
        let jobs: [PushOutbox.Job]
        do {
            jobs = try await outbox.claimDue(now: now, limit: Self.concurrency, leaseMillis: leaseMillis)
        } catch {
            logger.warning("Push queue unreadable: \(String(reflecting: error))")
            return false
        }
        guard !jobs.isEmpty else { return false }
        // Each recipient's notifications are rendered in one read.
        var rendered: [Int64: [Int64: PlazaAPI.Notification]] = [:]
        for (recipient, group) in Dictionary(grouping: jobs, by: \.recipient) {
            rendered[recipient] =
                (try? await notifications.notifications(ids: group.map(\.notification), recipient: recipient)) ?? [:]
        }
        await withTaskGroup(of: Void.self) { tasks in
            for job in jobs {
                let notification = rendered[job.recipient]?[job.notification]
                tasks.addTask { await deliver(job, notification: notification) }
            }
        }
        return true
    }

    func deliver(_ job: PushOutbox.Job, notification: PlazaAPI.Notification?) async {
        let outcome: PushOutbox.Outcome
        if let reason = Self.mootReason(job, notification: notification) {
            outcome = .moot(reason)
        } else if let notification {
            let message = PushMessage(notification, instanceName: instanceName, badge: job.unread)
            switch job.platform {
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
