import Foundation
import Hummingbird

/// Streams the `file` part of a multipart/form-data request into a temporary file, counting
/// bytes as they arrive: an upload over the cap is refused with 413 as soon as it crosses it,
/// and never more than one chunk of it is in memory.
package enum MultipartUpload {
    package struct Limits {
        package var maxFileBytes: Int
        /// The cap for a file whose first bytes are a video's (`VideoFormat`); nil: `maxFileBytes`.
        package var maxVideoBytes: Int? = nil
        /// Form fields other than `file`, boundaries and part headers.
        var maxOverheadBytes = 64 * 1024
    }

    /// Receives the file into `path` (created or truncated). The caller deletes it.
    package static func receive(_ request: Request, into path: String, limits: Limits) async throws {
        let largest = max(limits.maxFileBytes, limits.maxVideoBytes ?? 0)
        let maxTotal = largest + limits.maxOverheadBytes
        let boundary = try checkedBoundary(request, maxTotal: maxTotal, limits: limits)
        let file = try create(path)
        defer { try? file.close() }

        var parser = MultipartParser(boundary: boundary)
        var inFile = false
        var sawFile = false
        var fileBytes = 0
        var total = 0
        // The file's cap, known once its first bytes say whether it is a video.
        var head: [UInt8] = []
        var cap: Int? = limits.maxVideoBytes == nil ? limits.maxFileBytes : nil
        for try await chunk in request.body {
            total += chunk.readableBytes
            if total > maxTotal { throw tooLarge(limits) }
            let events: [MultipartParser.Event]
            do {
                events = try parser.feed(Array(chunk.readableBytesView))
            } catch {
                throw PlazaError.malformed("The multipart body is malformed: \(error.reason).")
            }
            for event in events {
                switch event {
                case .headers(let headers):
                    inFile = !sawFile && Self.isFilePart(headers)
                    sawFile = sawFile || inFile
                case .body(let bytes) where inFile:
                    fileBytes += bytes.count
                    if cap == nil {
                        head += bytes.prefix(ImageFormat.signatureLength - head.count)
                        if head.count >= ImageFormat.signatureLength {
                            cap = Self.cap(for: head, limits)
                        }
                    }
                    if fileBytes > cap ?? largest { throw tooLarge(limits, cap: cap ?? largest) }
                    try file.write(contentsOf: bytes)
                case .body:
                    break
                case .partEnd:
                    inFile = false
                }
            }
        }
        guard sawFile else { throw PlazaError.invalid("file", "The form needs a file field with the photo or video.") }
        do {
            try parser.finish()
        } catch {
            throw PlazaError.malformed("The multipart body is malformed: \(error.reason).")
        }
        guard fileBytes > 0 else { throw PlazaError.invalid("file", "The file is empty.") }
        if fileBytes > Self.cap(for: head, limits) { throw tooLarge(limits, cap: Self.cap(for: head, limits)) }
    }

    /// The form's boundary: 415 for a body that is not multipart/form-data, 413 for one that says
    /// it is longer than the caps allow.
    private static func checkedBoundary(_ request: Request, maxTotal: Int, limits: Limits) throws -> String {
        guard let contentType = request.headers[.contentType], let boundary = Self.boundary(of: contentType) else {
            throw PlazaError(
                .unsupportedMediaType, "unsupported_media_type",
                "Upload the photo or video as multipart/form-data with a file field.")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxTotal {
            throw tooLarge(limits)
        }
        return boundary
    }

    /// An empty file at `path` to write the upload into.
    private static func create(_ path: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else {
            throw PlazaError(.internalServerError, "storage_failed", "The upload could not be stored.")
        }
        return file
    }

    /// A video's cap when the first bytes are a video's, else the photo cap.
    static func cap(for head: [UInt8], _ limits: Limits) -> Int {
        guard let video = limits.maxVideoBytes, ImageFormat.sniff(head) == nil, VideoFormat.sniff(head) != nil else {
            return limits.maxFileBytes
        }
        return video
    }

    static func tooLarge(_ limits: Limits, cap: Int? = nil) -> PlazaError {
        let cap = cap ?? max(limits.maxFileBytes, limits.maxVideoBytes ?? 0)
        return PlazaError(
            .contentTooLarge, "payload_too_large", "The file is larger than \(cap / (1024 * 1024)) MB.",
            field: "file")
    }

    /// The boundary of a `multipart/form-data` content type, if it is a valid one.
    static func boundary(of contentType: String) -> String? {
        guard let type = HeaderParameters(contentType), type.value == "multipart/form-data",
            let boundary = type.parameters["boundary"], MultipartParser.isValidBoundary(boundary)
        else { return nil }
        return boundary
    }

    /// True for a part whose Content-Disposition is `form-data` naming the field `file`.
    static func isFilePart(_ headers: [MultipartParser.Header]) -> Bool {
        guard
            let disposition = headers.first(where: { $0.name == "content-disposition" }).flatMap({
                HeaderParameters($0.value)
            })
        else {
            return false
        }
        return disposition.value == "form-data" && disposition.parameters["name"] == "file"
    }
}
