import Foundation
import Logging
import PlazaAPI
import ServiceLifecycle

/// Periodic clean-up: sessions idle past their lifetime, uploads nothing used within a day,
/// link-preview images nothing shows, past days' usage counts, events older than the log's
/// retention, mail sent or given up on more than 30 days ago, pushes finished a week ago,
/// expired keyword filters, idempotency keys past their day, and work files a stopped process left in the uploads folder (a
/// killed server's transcode, say).
struct MaintenanceService: Service {
    let accounts: AccountStore
    let media: MediaStore
    let mediaStorage: any MediaStorage
    let events: EventFeed
    let outbox: MailOutbox
    let pushes: PushOutbox
    let eventRetentionMillis: Int64
    /// PostgreSQL's shared rate buckets and throttle entries, and the ages past which they no longer matter.
    var limits: PostgresLimitStore? = nil
    var limitAges: (buckets: Int64, throttle: Int64) = (3_600_000, 3_600_000)
    /// The uploads folder, and the age past which nothing there is still being worked on.
    var scratch: (directory: String, lifetime: Duration)? = nil
    /// Deletes the accounts whose owners asked for it once their grace period is over.
    var deletions: AccountDeletion? = nil
    /// Removes keyword filters past their expiry (they apply no more from that moment anyway).
    var filters: KeywordFilterStore? = nil
    /// Drops the answers kept for `Idempotency-Key`s past their 24 hours.
    var idempotency: IdempotencyStore? = nil
    let logger: Logger
    var interval: Duration = .seconds(3600)
    static let unusedMediaLifetime: Int64 = 24 * 3_600_000

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            await runOnce()
        }
    }

    func runOnce(now: Int64 = Timestamp.now.milliseconds) async {
        do {
            try await accounts.deleteIdleSessions()
        } catch {
            logger.warning("Session clean-up failed: \(error)")
        }
        do {
            while let deletions, try await deletions.purgeDue(now: now, logger: logger) > 0 {}
        } catch {
            logger.warning("Account deletion failed: \(error)")
        }
        do {
            while true {
                let unused = try await media.deleteUnused(createdBefore: now - Self.unusedMediaLifetime)
                await mediaStorage.deleteFiles(ofMedia: unused, logger: logger)
                if unused.count < MediaStore.cleanupBatch { break }
            }
        } catch {
            logger.warning("Media clean-up failed: \(error)")
        }
        do {
            while true {
                let released = try await media.releaseUnusedPreviewImages(now: now)
                await mediaStorage.deleteFiles(ofMedia: released, logger: logger)
                if released.count < MediaStore.cleanupBatch { break }
            }
            try await DailyUsage.prune(now: now, on: media.db)
            try await Trends.prune(now: now, on: media.db)
        } catch {
            logger.warning("Link-preview image and usage clean-up failed: \(error)")
        }
        do {
            try await events.prune(before: now - eventRetentionMillis)
        } catch {
            logger.warning("Event log clean-up failed: \(error)")
        }
        do {
            try await outbox.prune(now: now)
        } catch {
            logger.warning("Mail outbox clean-up failed: \(error)")
        }
        do {
            try await pushes.prune(now: now)
        } catch {
            logger.warning("Push queue clean-up failed: \(error)")
        }
        do {
            try await limits?.prune(now: now, bucketAge: limitAges.buckets, throttleAge: limitAges.throttle)
            try await filters?.pruneExpired(now: now)
            try await idempotency?.prune(now: now)
        } catch {
            logger.warning("Rate limit, expired filter or idempotency key clean-up failed: \(error)")
        }
        if let scratch {
            let removed = Self.sweep(scratch.directory, olderThan: now - scratch.lifetime.milliseconds)
            if removed > 0 { logger.info("Removed \(removed) leftover work files from \(scratch.directory)") }
        }
    }

    /// Removes the entries of `directory` last changed before `cutoff` (milliseconds); how many.
    static func sweep(_ directory: String, olderThan cutoff: Int64) -> Int {
        let files = FileManager.default
        guard let names = try? files.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let changed = (try? files.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                Int64(changed.timeIntervalSince1970 * 1000) < cutoff, (try? files.removeItem(atPath: path)) != nil
            else { continue }
            removed += 1
        }
        return removed
    }
}
