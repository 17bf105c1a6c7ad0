import Foundation
import Hummingbird

/// Streams the `file` part of a multipart/form-data request into a temporary file, counting
/// bytes as they arrive: an upload over the cap is refused with 413 as soon as it crosses it,
/// and never more than one chunk of it is in memory.
enum MultipartUpload {
    struct Limits {
        var maxFileBytes: Int
        /// Form fields other than `file`, boundaries and part headers.
        var maxOverheadBytes = 64 * 1024
    }

    /// Receives the file into `path` (created or truncated). The caller deletes it.
    static func receive(_ request: Request, into path: String, limits: Limits) async throws {
        guard let contentType = request.headers[.contentType], let boundary = Self.boundary(of: contentType) else {
            throw PlazaError(
                .unsupportedMediaType, "unsupported_media_type",
                "Upload the image as multipart/form-data with a file field.")
        }
        let maxTotal = limits.maxFileBytes + limits.maxOverheadBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxTotal {
            throw tooLarge(limits)
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path)
        else {
            throw PlazaError(.internalServerError, "storage_failed", "The upload could not be stored.")
        }
        defer { try? file.close() }

        var parser = MultipartParser(boundary: boundary)
        var inFile = false
        var sawFile = false
        var fileBytes = 0
        var total = 0
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
                    if fileBytes > limits.maxFileBytes { throw tooLarge(limits) }
                    try file.write(contentsOf: bytes)
                case .body:
                    break
                case .partEnd:
                    inFile = false
                }
            }
        }
        guard sawFile else { throw PlazaError.invalid("file", "The form needs a file field with the image.") }
        do {
            try parser.finish()
        } catch {
            throw PlazaError.malformed("The multipart body is malformed: \(error.reason).")
        }
        guard fileBytes > 0 else { throw PlazaError.invalid("file", "The file is empty.") }
    }

    static func tooLarge(_ limits: Limits) -> PlazaError {
        PlazaError(
            .contentTooLarge, "payload_too_large", "The file is larger than \(limits.maxFileBytes / (1024 * 1024)) MB.",
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
