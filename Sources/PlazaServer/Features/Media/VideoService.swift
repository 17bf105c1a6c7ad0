import Foundation
import Logging
import NIOConcurrencyHelpers
import PlazaAPI
import ServiceLifecycle

/// Background worker: transcodes the videos `VideoStore` queues, one at a time per server (a
/// transcoding takes the cores it is given for as long as the video lasts). Woken by uploads
/// on this server, it also polls for videos other servers took in and for those whose worker
/// died (its lease ran out); such a video is tried `VideoStore.maxAttempts` times.
struct VideoService: Service {
    let store: VideoStore
    let pipeline: VideoPipeline
    let storage: any MediaStorage
    let signal: WorkSignal
    /// Where the work files of the video in hand are kept (removed when it ends).
    let workDirectory: String
    let logger: Logger

    /// A claim lasts this long past the last progress reported.
    var leaseMillis: Int64 { 120_000 }

    func run() async throws {
        await signal.work(pollInterval: pipeline.settings.pollInterval) { await runOnce() }
    }

    /// Processes one queued video; false when there was none.
    @discardableResult
    func runOnce(now: Int64 = Timestamp.now.milliseconds) async -> Bool {
        let job: VideoStore.Job?
        do {
            job = try await store.claim(now: now, leaseMillis: leaseMillis + pipeline.settings.timeout.milliseconds)
        } catch {
            logger.warning("Video queue unreadable: \(String(reflecting: error))")
            return false
        }
        guard let job else { return false }
        await process(job)
        return true
    }

    private func process(_ job: VideoStore.Job) async {
        let work = "\(workDirectory)/video-\(job.id)"
        defer { try? FileManager.default.removeItem(atPath: work) }
        do {
            guard job.attempts <= VideoStore.maxAttempts else {
                try await end(job, .failure("Processing the video stopped \(job.attempts - 1) times.", source: nil))
                return
            }
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            let source = work + "/source"
            guard try await storage.get("\(job.id)/\(MediaFile.source)", into: source) else {
                try await end(job, .failure("The uploaded file is missing.", source: nil))
                return
            }
            let format = VideoFormat.sniff(try MediaIngest.firstBytes(of: source)) ?? .mov
            let output = work + "/video.mp4"
            let start = ContinuousClock.now
            let outcome = try await transcode(job, source: source, format: format, output: output)
            store.db.metrics?.mediaProcessed("video", .now - start)
            guard outcome.status == 0, !outcome.timedOut,
                let size = try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int, size > 0
            else {
                let reason =
                    outcome.timedOut
                    ? "Processing the video took longer than \(pipeline.settings.timeout.components.seconds) seconds."
                    : "The video could not be processed; it may be truncated or corrupt."
                logger.notice("Video \(job.id) failed: \(outcome.errorTail)")
                try await end(job, .failure(reason, source: source))
                return
            }
            // A worker that stalled past its lease leaves the video to the one that took it over.
            guard try await store.holds(job) else { return }
            try await storage.put(
                "\(job.id)/\(ImagePipeline.Variant.original.rawValue)", file: output,
                contentType: VideoPipeline.contentType)
            let sourceSize = (try? FileManager.default.attributesOfItem(atPath: source)[.size] as? Int) ?? 0
            try await end(job, .transcoded(bytesChange: Int64(size - sourceSize)))
        } catch {
            // A failure of storage or database: the lease runs out and the video is tried again.
            logger.warning("Video \(job.id) not processed: \(String(reflecting: error))")
        }
    }

    private enum Result {
        case transcoded(bytesChange: Int64)
        /// `source`: the upload's copy here, whose size leaves the owner's storage with it.
        case failure(String, source: String?)
    }

    /// Records the end; the upload goes, and everything goes when the video was deleted meanwhile.
    private func end(_ job: VideoStore.Job, _ result: Result) async throws {
        let ending: VideoStore.Ending
        switch result {
        case .transcoded(let change):
            ending = try await store.finish(job.id, bytesChange: change)
        case .failure(let reason, let source):
            let size = source.flatMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int } ?? 0
            ending = try await store.fail(job.id, reason: reason, bytesChange: -Int64(size))
        }
        if ending == .gone {
            await storage.deleteFiles(ofMedia: [job.id], logger: logger)
        } else {
            try await storage.delete(["\(job.id)/\(MediaFile.source)"])
        }
    }

    /// Runs ffmpeg, writing its progress to the row every second or so (which keeps the lease).
    private func transcode(_ job: VideoStore.Job, source: String, format: VideoFormat, output: String) async throws
        -> ChildProcess.Outcome
    {
        let latest = NIOLockedValueBox<Int?>(nil)
        return try await withThrowingTaskGroup(of: ChildProcess.Outcome?.self) { group in
            group.addTask {
                var written: Int?
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    let percent = latest.withLockedValue { $0 }
                    if let percent, percent != written {
                        written = percent
                        try? await store.progress(
                            job.id, percent: percent,
                            leaseUntil: Timestamp.now.milliseconds + leaseMillis
                                + pipeline.settings.timeout.milliseconds)
                    }
                }
                return nil
            }
            group.addTask {
                try await pipeline.transcode(
                    source, format: format, probe: job.probe, to: output,
                    workDirectory: (output as NSString).deletingLastPathComponent
                ) { percent in latest.withLockedValue { $0 = percent } }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let outcome = next { return outcome }
            }
            throw CancellationError()
        }
    }
}
