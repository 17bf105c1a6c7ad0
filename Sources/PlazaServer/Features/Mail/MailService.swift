import Foundation
import Logging
import PlazaAPI
import ServiceLifecycle

/// How mail leaves Plaza: over SMTP, or, with no SMTP server configured, into a folder (one
/// `.eml` file a message) and the log, so a server run offline still shows its links.
enum MailTransport: Sendable {
    case smtp(SMTPClient)
    case folder(String)

    /// Delivers one rendered message; a thrown `SMTPError` that is `permanent` is not retried.
    func deliver(_ bytes: [UInt8], message: MailMessage, from sender: String, id: Int64, logger: Logger)
        async throws
    {
        switch self {
        case .smtp(let client):
            try await client.send(bytes, from: sender, to: message.to)
        case .folder(let path):
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let file = (path as NSString).appendingPathComponent("\(id).eml")
            let temporary = file + ".tmp"
            guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
                throw SMTPError.protocolError("cannot write \(temporary)")
            }
            guard rename(temporary, file) == 0 else { throw SMTPError.protocolError("cannot write \(file)") }
            logger.notice(
                "Mail not sent (no SMTP server configured), written to \(file):\nTo: \(message.to)\nSubject: \(message.subject)\n\n\(message.text)"
            )
        }
    }
}

/// How the mail worker runs.
public struct MailSettings: Sendable {
    /// nil: write mail to `<data-dir>/outbox/` and the log instead of sending it.
    public var smtp: SMTPSettings?
    /// The sender, `PLAZA_MAIL_FROM`; by default `<instance name> <noreply@host of the public URL>`.
    public var from: String?
    /// How often the outbox is checked for retries and for mail other app servers queued.
    public var pollInterval: Duration = .seconds(15)
    public init() {}
}

/// Background worker: sends what `MailOutbox` holds, a few messages at a time, and records
/// each outcome (sent; tried again later; given up on a permanent refusal or after
/// `MailOutbox.maxAttempts`).
struct MailService: Service {
    let outbox: MailOutbox
    let transport: MailTransport
    let sender: MailAddress
    let signal: WorkSignal
    /// Kept fresh each round: the mails this process writes are signed with the name admins set.
    let name: InstanceName?
    let pollInterval: Duration
    /// The time a delivery may take before its claim lapses and another worker may try.
    let leaseMillis: Int64
    let logger: Logger
    static let concurrency = 4

    func run() async throws {
        await signal.work(pollInterval: pollInterval) {
            _ = await name?.fresh()
            return await runOnce()
        }
    }

    /// Sends one batch of due messages; false when none was due.
    @discardableResult
    func runOnce(now: Int64 = Timestamp.now.milliseconds) async -> Bool {
        let jobs: [MailOutbox.Job]
        do {
            jobs = try await outbox.claimDue(now: now, limit: Self.concurrency, leaseMillis: leaseMillis)
        } catch {
            logger.warning("Mail outbox unreadable: \(String(reflecting: error))")
            return false
        }
        guard !jobs.isEmpty else { return false }
        await withTaskGroup(of: Void.self) { group in
            for job in jobs { group.addTask { await deliver(job) } }
        }
        return true
    }

    func deliver(_ job: MailOutbox.Job) async {
        let message = job.message
        do {
            guard MIME.isDeliverable(message.to) else {
                throw SMTPError.rejected(code: 553, text: "Plaza cannot send to this address", during: "RCPT")
            }
            let domain = sender.address.split(separator: "@").last.map(String.init) ?? "localhost"
            let bytes = MIME.render(
                message, from: sender, messageID: "\(job.id).\(job.attempts)@\(domain)", date: Date(),
                boundary: "plaza-\(ByteText.hex(ByteText.randomBytes(12)))")
            try await transport.deliver(bytes, message: message, from: sender.address, id: job.id, logger: logger)
            try await outbox.markSent(job.id)
            logger.info("Mail sent", metadata: ["kind": "\(message.kind.rawValue)", "mail": "\(job.id)"])
        } catch {
            let permanent = (error as? SMTPError)?.permanent ?? false
            logger.warning(
                "Mail not sent",
                metadata: [
                    "kind": "\(message.kind.rawValue)", "mail": "\(job.id)", "attempt": "\(job.attempts + 1)",
                    "error": "\(error)", "permanent": "\(permanent)",
                ])
            do {
                try await outbox.markFailed(job, error: "\(error)", permanent: permanent)
            } catch {
                logger.warning("Mail outcome not recorded: \(String(reflecting: error))")
            }
        }
    }
}
