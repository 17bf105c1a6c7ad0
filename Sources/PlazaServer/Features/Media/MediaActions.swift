import Foundation
import Logging
import PlazaAPI

/// What people do with their media, decided once for every door: uploads (Plaza's API and
/// Mastodon's), their alt text, avatars. Each checks the person's quotas and removes the files
/// nothing uses any more once the change is committed.
package struct MediaActions: Sendable {
    let media: MediaStore
    let storage: any MediaStorage
    let ingest: MediaIngest
    let ids: IDGenerator
    /// Where uploads wait while they are processed.
    let uploadDirectory: String
    let quotas: Quotas

    /// An upload by `owner`. Refused before anything is received when their storage is full
    /// (413 `storage_quota_exceeded`) or today's uploads are used up (429
    /// `daily_upload_limit`); `receive` writes the upload's bytes into the file it is given (the
    /// door's body reader, which enforces the sizes); the quota is checked again with the
    /// processed size when it is stored. A photo is ready at once; a video is probed and its
    /// poster made, then processed in the background (`state: processing`).
    package func upload(
        by owner: Int64, logger: Logger, receive: (_ path: String) async throws -> [String: String]
    ) async throws -> MediaRecord {
        try await media.checkRoom(owner: owner, quota: quotas.storageBytes)
        try await media.chargeUpload(owner: owner, cap: quotas.uploadsPerDay)
        let id = ids.next()
        let work = "\(uploadDirectory)/upload-\(id)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let path = work + "/file"
        let description = try Self.altText(try await receive(path)["description"])
        return try await ingest.ingestUpload(
            path: path, id: id, owner: owner, description: description, quota: quotas.storageBytes,
            workDirectory: work, logger: logger)
    }

    /// Sets (or with nil or blank text, removes) the alt text of one of `owner`'s uploads, on
    /// the posts that show it too; 404 for media that is not theirs.
    package func describe(_ id: Int64, by owner: Int64, as text: String?) async throws -> MediaRecord {
        try await media.describe(id: id, owner: owner, as: try Self.altText(text))
    }

    /// The longest alt text, as Mastodon allows.
    static let maxAltTextLength = 1_500

    static func altText(_ text: String?) throws -> String? {
        try Validate.text(text, field: "description", max: maxAltTextLength)
    }

    /// Reads a form whose file is kept in scratch space while `body` runs, before anything is
    /// charged (a door's form that may or may not carry a picture among other fields).
    package func withScratchFile<T>(_ body: (_ path: String) async throws -> T) async throws -> T {
        let work = "\(uploadDirectory)/form-\(ids.next())"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        return try await body(work + "/file")
    }

    /// Makes the photo at `file` (a door's scratch file, moved away) `person`'s avatar: an upload
    /// like any other, with its quotas and processing.
    package func setAvatar(of person: Int64, fromFile file: String, logger: Logger) async throws {
        let record = try await upload(by: person, logger: logger) { path in
            try FileManager.default.moveItem(atPath: file, toPath: path)
            return [:]
        }
        try await setAvatar(of: person, to: record.id, logger: logger)
    }

    /// Sets (or with nil, removes) `person`'s avatar to one of their uploads; the old one's
    /// files go when nothing else uses them.
    func setAvatar(of person: Int64, to mediaID: Int64?, logger: Logger) async throws {
        let unused = try await media.setAvatar(user: person, mediaID: mediaID)
        await storage.deleteFiles(ofMedia: unused, logger: logger)
    }
}
