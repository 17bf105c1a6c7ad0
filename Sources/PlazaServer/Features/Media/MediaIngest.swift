import Foundation
import Logging

/// Turns an uploaded file into stored media: sniffed, processed (a photo by libvips at once; a
/// video probed, its poster made, and queued for `VideoService`), every file stored, and the
/// row written. Used by uploads and by link previews (photos only).
struct MediaIngest: Sendable {
    let media: MediaStore
    let storage: any MediaStorage
    let pipeline: ImagePipeline
    /// nil when this server has no ffmpeg: videos are refused.
    var video: VideoPipeline? = nil
    /// Wakes this server's `VideoService` when a video is queued.
    var videoQueue = WorkSignal()

    static let unsupported = PlazaError(
        .unsupportedMediaType, "unsupported_media_type", "The file is not a JPEG, PNG, WebP, GIF or HEIC image.",
        field: "file")

    static let unsupportedUpload = PlazaError(
        .unsupportedMediaType, "unsupported_media_type",
        "The file is not a JPEG, PNG, WebP, GIF or HEIC image, nor an MP4, MOV or WebM video.", field: "file")

    static let videosUnavailable = PlazaError(
        .unsupportedMediaType, "unsupported_media_type", "This server does not take videos (it has no ffmpeg).",
        field: "file")

    /// What an upload's first bytes say it is.
    enum Kind {
        case image(ImageFormat)
        case video(VideoFormat)
    }

    /// The kind of the file at `path` (a photo or a video), or nil.
    static func sniff(path: String) throws -> Kind? {
        let bytes = try firstBytes(of: path)
        if let format = ImageFormat.sniff(bytes) { return .image(format) }
        return VideoFormat.sniff(bytes).map(Kind.video)
    }

    /// Ingests the image at `path` as media `id` of `owner`: an upload, or a link preview's
    /// image (in use at once, so the clean-up of unclaimed uploads leaves it alone). 413
    /// `storage_quota_exceeded`, with nothing kept, when the owner's media would pass `quota`.
    func ingest(path: String, id: Int64, owner: Int64, linkPreview: Bool, quota: Int64, logger: Logger) async throws
        -> MediaRecord
    {
        guard let format = ImageFormat.sniff(try Self.firstBytes(of: path)) else { throw Self.unsupported }
        return try await ingest(
            image: path, format: format, id: id, owner: owner, linkPreview: linkPreview, quota: quota, logger: logger)
    }

    /// Ingests an upload: a photo, or a video (recorded `processing`), with its alt text.
    func ingestUpload(
        path: String, id: Int64, owner: Int64, description: String?, quota: Int64, workDirectory: String,
        logger: Logger
    ) async throws -> MediaRecord {
        switch try Self.sniff(path: path) {
        case .image(let format):
            return try await ingest(
                image: path, format: format, id: id, owner: owner, linkPreview: false, description: description,
                quota: quota, logger: logger)
        case .video(let format):
            return try await ingest(
                video: path, format: format, id: id, owner: owner, description: description, quota: quota,
                workDirectory: workDirectory, logger: logger)
        case nil:
            throw Self.unsupportedUpload
        }
    }

    private func ingest(
        image path: String, format: ImageFormat, id: Int64, owner: Int64, linkPreview: Bool,
        description: String? = nil, quota: Int64, logger: Logger
    ) async throws -> MediaRecord {
        let start = ContinuousClock.now
        let result = try await pipeline.process(path: path, format: format)
        media.db.metrics?.mediaProcessed("image", .now - start)
        return try await store(id: id, logger: logger, files: result.variants.map { ($0.key.rawValue, $0.value) }) {
            try await media.create(
                id: id, owner: owner, result, linkPreview: linkPreview, description: description, quota: quota)
        }
    }

    /// Probes the video (422 when it is not one Plaza takes), makes its poster, stores the
    /// poster's variants and the upload itself, records it `processing` and wakes the worker.
    private func ingest(
        video path: String, format: VideoFormat, id: Int64, owner: Int64, description: String?, quota: Int64,
        workDirectory: String, logger: Logger
    ) async throws -> MediaRecord {
        guard let video else { throw Self.videosUnavailable }
        let png = workDirectory + "/poster.png"
        let probe = try await video.withUploadPermit {
            let probe = try await video.probe(path, format: format, workDirectory: workDirectory)
            try await video.poster(path, format: format, probe: probe, to: png, workDirectory: workDirectory)
            return probe
        }
        let poster = try await pipeline.process(path: png, format: .png)
        let sourceBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let files = poster.variants.filter { $0.key != .original }.map { ($0.key.rawValue, $0.value) }
        let record = try await store(id: id, logger: logger, files: files) {
            try await storage.put("\(id)/\(MediaFile.source)", file: path, contentType: "application/octet-stream")
            return try await media.create(
                id: id, owner: owner, poster, linkPreview: false, description: description, quota: quota,
                video: (probe, sourceBytes))
        }
        videoQueue.wake()
        return record
    }

    /// Stores `files` (variant name, bytes) then runs `record`; on any failure deletes what was stored.
    private func store(
        id: Int64, logger: Logger, files: [(String, ImagePipeline.Output)],
        record: () async throws -> MediaRecord
    ) async throws -> MediaRecord {
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (name, output) in files {
                    group.addTask {
                        try await storage.put("\(id)/\(name)", bytes: output.bytes, contentType: output.contentType)
                    }
                }
                try await group.waitForAll()
            }
            return try await record()
        } catch {
            await storage.deleteFiles(ofMedia: [id], logger: logger)
            throw error
        }
    }

    static func firstBytes(of path: String) throws -> [UInt8] {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw PlazaError.invalid("file", "The file could not be read.")
        }
        defer { try? file.close() }
        return [UInt8](try file.read(upToCount: ImageFormat.signatureLength) ?? Data())
    }
}
