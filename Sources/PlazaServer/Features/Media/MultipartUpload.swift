import Foundation
import Hummingbird
import MultipartKit

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
            throw PlazaError(.unsupportedMediaType, "unsupported_media_type", "Upload the image as multipart/form-data with a file field.")
        }
        let maxTotal = limits.maxFileBytes + limits.maxOverheadBytes
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxTotal {
            throw tooLarge(limits)
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw PlazaError(.internalServerError, "storage_failed", "The upload could not be stored.")
        }
        defer { try? file.close() }

        let parser = MultipartParser(boundary: boundary)
        var guardrail = HeaderNameGuard(boundary: boundary)
        var headers: [(String, String)] = []
        var inFile = false
        var sawFile = false
        var finished = false
        var fileBytes = 0
        var pending: [UInt8] = []
        parser.onHeader = { name, value in headers.append((name, value)) }
        parser.onBody = { buffer in
            if !inFile {
                inFile = !sawFile && Self.isFilePart(headers)
                sawFile = sawFile || inFile
            }
            if inFile {
                fileBytes += buffer.readableBytes
                pending.append(contentsOf: buffer.readableBytesView)
            }
        }
        parser.onPartComplete = {
            if !inFile && !sawFile && Self.isFilePart(headers) { sawFile = true }  // an empty file part
            if inFile { finished = true }
            inFile = false
            headers = []
        }
        var total = 0
        for try await chunk in request.body {
            total += chunk.readableBytes
            if total > maxTotal { throw tooLarge(limits) }
            guard guardrail.allows(chunk.readableBytesView) else {
                throw PlazaError.malformed("A part header's name has a character that is not ASCII.")
            }
            do {
                try parser.execute(chunk)
            } catch {
                throw PlazaError.malformed("The multipart body is malformed.")
            }
            if fileBytes > limits.maxFileBytes { throw tooLarge(limits) }
            if !pending.isEmpty {
                try file.write(contentsOf: pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        guard sawFile else { throw PlazaError.invalid("file", "The form needs a file field with the image.") }
        guard finished else { throw PlazaError.malformed("The multipart body ended before the file did.") }
        guard fileBytes > 0 else { throw PlazaError.invalid("file", "The file is empty.") }
    }

    /// MultipartKit 4.7.1 traps (index out of range) on a byte of 128 or more in a part
    /// header's name, which would let any signed-in user stop the server. This follows the
    /// body's lines as the parser does, a little more strictly (a boundary need not follow a
    /// line break here; a bare LF ends a line), and refuses such a byte before the parser sees it.
    struct HeaderNameGuard {
        private enum Place { case body, boundaryLine, name, value, epilogue }
        private var place = Place.body
        private let delimiter: [UInt8]
        /// For each prefix of `delimiter`, the longest proper prefix that is also its suffix.
        private let fallback: [Int]
        private var matched = 0
        private var lineIsEmpty = true

        init(boundary: String) {
            delimiter = Array("--\(boundary)".utf8)
            var fallback = [0], k = 0
            for i in 1..<delimiter.count {
                while k > 0, delimiter[i] != delimiter[k] { k = fallback[k - 1] }
                if delimiter[i] == delimiter[k] { k += 1 }
                fallback.append(k)
            }
            self.fallback = fallback
        }

        mutating func allows(_ bytes: some Sequence<UInt8>) -> Bool {
            for byte in bytes {
                switch place {
                case .body:
                    while matched > 0, byte != delimiter[matched] { matched = fallback[matched - 1] }
                    if byte == delimiter[matched] { matched += 1 }
                    if matched == delimiter.count { (place, matched, lineIsEmpty) = (.boundaryLine, 0, true) }
                case .boundaryLine:
                    if byte == UInt8(ascii: "-"), lineIsEmpty { place = .epilogue }
                    lineIsEmpty = false
                    if byte == UInt8(ascii: "\n") { (place, lineIsEmpty) = (.name, true) }
                case .name:
                    if byte >= 0x80 { return false }
                    if byte == UInt8(ascii: ":") {
                        place = .value
                    } else if byte == UInt8(ascii: "\n") {
                        place = lineIsEmpty ? .body : .name
                        lineIsEmpty = true
                    } else if byte != UInt8(ascii: "\r") {
                        lineIsEmpty = false
                    }
                case .value:
                    if byte == UInt8(ascii: "\n") { (place, lineIsEmpty) = (.name, true) }
                case .epilogue:
                    return true
                }
            }
            return true
        }
    }

    static func tooLarge(_ limits: Limits) -> PlazaError {
        PlazaError(.contentTooLarge, "payload_too_large", "The file is larger than \(limits.maxFileBytes / (1024 * 1024)) MB.", field: "file")
    }

    static func boundary(of contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// True for a part whose Content-Disposition names the field `file`.
    static func isFilePart(_ headers: [(String, String)]) -> Bool {
        guard let disposition = headers.first(where: { $0.0.lowercased() == "content-disposition" })?.1 else { return false }
        return disposition.split(separator: ";").contains { parameter in
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            return pair.count == 2 && pair[0].lowercased() == "name" && pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == "file"
        }
    }
}
