import Foundation
import Hummingbird

/// Streams the `file` part of a multipart/form-data request into a temporary file, counting
/// bytes as they arrive: an upload over the cap is refused with 413 as soon as it crosses it,
/// and never more than one chunk of it is in memory. The text fields named in `textFields`
/// (the alt text) are kept, together at most `maxTextBytes`.
package enum MultipartUpload {
    /// The text fields an upload form may carry besides its file.
    static let textFields: Set<String> = ["description"]
    /// What those may hold together: room for the longest alt text in any script.
    static let maxTextBytes = 16 * 1024

    package struct Limits {
        package var maxFileBytes: Int
        /// The cap for a file whose first bytes are a video's (`VideoFormat`); nil: `maxFileBytes`.
        package var maxVideoBytes: Int? = nil
        /// Form fields other than `file`, boundaries and part headers.
        var maxOverheadBytes = 64 * 1024
    }

    /// Receives the file into `path` (created or truncated), and returns the form's text fields
    /// (422 for one that is not UTF-8). The caller deletes the file.
    package static func receive(_ request: Request, into path: String, limits: Limits) async throws
        -> [String: String]
    {
        let form = try await receiveForm(request, into: path, limits: limits, fileFields: ["file"]) {
            textFields.contains($0)
        }
        guard form.file != nil else {
            throw PlazaError.invalid("file", "The form needs a file field with the photo or video.")
        }
        return form.texts
    }

    /// What a form held: its text fields, the name of the file field it kept if it had one, and
    /// every file field it sent (the second file of a form is not kept).
    package struct Form: Sendable {
        package var texts: [String: String]
        package var file: String?
        package var fileFields: Set<String> = []
    }

    /// Reads a form whose one file (the first part named one of `fileFields`) goes to `path`,
    /// and whose text fields named so that `isTextField` takes them are kept, together at most
    /// `maxTextBytes`; other parts are skipped. A form may have no file (`file` is nil); an
    /// empty one is a 422.
    package static func receiveForm(
        _ request: Request, into path: String, limits: Limits, fileFields: Set<String>,
        isTextField: (String) -> Bool
    ) async throws -> Form {
        let largest = max(limits.maxFileBytes, limits.maxVideoBytes ?? 0)
        let maxTotal = largest + limits.maxOverheadBytes
        let boundary = try checkedBoundary(request, maxTotal: maxTotal, limits: limits)
        let file = try create(path)
        defer { try? file.close() }

        var parser = MultipartParser(boundary: boundary)
        var inFile = false
        var fileField: String?
        var sentFiles: Set<String> = []
        var textField: String?
        var texts: [String: [UInt8]] = [:]
        var (textBytes, fileBytes, total) = (0, 0, 0)
        // The file's cap, known once its first bytes say whether it is a video.
        var head: [UInt8] = []
        var cap: Int? = limits.maxVideoBytes == nil ? limits.maxFileBytes : nil
        for try await chunk in request.body {
            total += chunk.readableBytes
            if total > maxTotal { throw tooLarge(limits) }
            for event in try malformedIfThrows({ try parser.feed(Array(chunk.readableBytesView)) }) {
                switch event {
                case .headers(let headers):
                    let name = Self.fieldName(headers)
                    if let name, fileFields.contains(name) { sentFiles.insert(name) }
                    inFile = fileField == nil && name.map(fileFields.contains) == true
                    if inFile { fileField = name }
                    textField = name.flatMap { !inFile && isTextField($0) && texts[$0] == nil ? $0 : nil }
                    if let textField { texts[textField] = [] }
                case .body(let bytes) where inFile:
                    fileBytes += bytes.count
                    if cap == nil {
                        head += bytes.prefix(ImageFormat.signatureLength - head.count)
                        if head.count >= ImageFormat.signatureLength { cap = Self.cap(for: head, limits) }
                    }
                    if fileBytes > cap ?? largest { throw tooLarge(limits, cap: cap ?? largest) }
                    try file.write(contentsOf: bytes)
                case .body(let bytes):
                    guard let textField else { break }
                    textBytes += bytes.count
                    if textBytes > maxTextBytes { throw Self.textTooLong }
                    texts[textField, default: []] += bytes
                case .partEnd:
                    inFile = false
                    textField = nil
                }
            }
        }
        try malformedIfThrows { try parser.finish() }
        if let fileField {
            guard fileBytes > 0 else { throw PlazaError.invalid(fileField, "The file is empty.") }
            if fileBytes > Self.cap(for: head, limits) { throw tooLarge(limits, cap: Self.cap(for: head, limits)) }
        }
        return Form(texts: try strings(texts), file: fileField, fileFields: sentFiles)
    }

    /// The text fields as text; 422 for one that is not UTF-8.
    private static func strings(_ texts: [String: [UInt8]]) throws -> [String: String] {
        try texts.mapValues { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw PlazaError.invalid("description", "The form's text fields must be UTF-8.")
            }
            return text
        }
    }

    static let textTooLong = PlazaError.invalid(
        "description", "The form's text fields may hold at most \(maxTextBytes / 1024) KB together.")

    /// `step`'s result; its parser error as a 400.
    private static func malformedIfThrows<T>(_ step: () throws -> T) throws -> T {
        do {
            return try step()
        } catch let error as MultipartParser.Malformed {
            throw PlazaError.malformed("The multipart body is malformed: \(error.reason).")
        }
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
    package static func boundary(of contentType: String) -> String? {
        guard let type = HeaderParameters(contentType), type.value == "multipart/form-data",
            let boundary = type.parameters["boundary"], MultipartParser.isValidBoundary(boundary)
        else { return nil }
        return boundary
    }

    /// The field a part's Content-Disposition (`form-data`) names, if any.
    static func fieldName(_ headers: [MultipartParser.Header]) -> String? {
        guard
            let disposition = headers.first(where: { $0.name == "content-disposition" }).flatMap({
                HeaderParameters($0.value)
            }), disposition.value == "form-data"
        else {
            return nil
        }
        return disposition.parameters["name"]
    }
}
