import Foundation
import Logging

/// Turns an image file into stored media: sniffed, processed by libvips, every variant stored,
/// and the row written. Used by uploads and by link previews.
struct MediaIngest: Sendable {
    let media: MediaStore
    let storage: any MediaStorage
    let pipeline: ImagePipeline

    static let unsupported = PlazaError(
        .unsupportedMediaType, "unsupported_media_type", "The file is not a JPEG, PNG, WebP, GIF or HEIC image.",
        field: "file")

    /// Ingests the image at `path` as media `id` of `owner`: an upload, or a link preview's
    /// image (in use at once, so the clean-up of unclaimed uploads leaves it alone). 413
    /// `storage_quota_exceeded`, with nothing kept, when the owner's media would pass `quota`.
    func ingest(path: String, id: Int64, owner: Int64, linkPreview: Bool, quota: Int64, logger: Logger) async throws
        -> MediaRecord
    {
        guard let format = ImageFormat.sniff(try Self.firstBytes(of: path)) else { throw Self.unsupported }
        let result = try await pipeline.process(path: path, format: format)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (variant, output) in result.variants {
                    group.addTask {
                        try await storage.put(
                            "\(id)/\(variant.rawValue)", bytes: output.bytes, contentType: output.contentType)
                    }
                }
                try await group.waitForAll()
            }
            return try await media.create(id: id, owner: owner, result, linkPreview: linkPreview, quota: quota)
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
