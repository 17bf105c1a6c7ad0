import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a file (`flock`), held while this lives: one `WriteQueue` at a time in
/// a folder, across processes (an app and its extension, two runs of a command-line tool).
final class DirectoryLock: Sendable {
    private let descriptor: Int32

    /// Locks `file` (made if need be); with `waiting`, waits for another holder to let go, else
    /// throws `WriteQueue.OpenError.inUse`.
    init(_ file: URL, waiting: Bool) throws {
        let descriptor = open(file.path, O_CREAT | O_RDWR, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path]) }
        guard flock(descriptor, LOCK_EX | (waiting ? 0 : LOCK_NB)) == 0 else {
            close(descriptor)
            throw WriteQueue.OpenError.inUse
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A multipart form with one file, as Plaza's uploads take it.
enum MultipartForm {
    static func parts(filename: String, contentType: String, description: String?) -> (
        head: Data, tail: Data, contentType: String
    ) {
        let boundary = "plaza-\(UUID().uuidString)"
        let name = filename.replacingOccurrences(of: "\"", with: "").replacingOccurrences(of: "\r", with: "")
            .replacingOccurrences(of: "\n", with: "")
        var head = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n".utf8)
        head.append(Data("Content-Type: \(contentType)\r\n\r\n".utf8))
        var tail = Data()
        if let description {
            tail.append(Data("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\n".utf8))
            tail.append(Data(description.utf8))
        }
        tail.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return (head, tail, "multipart/form-data; boundary=\(boundary)")
    }

    /// The form around `data`, in memory.
    static func upload(_ data: Data, filename: String, contentType: String, description: String?)
        -> (data: Data, contentType: String)
    {
        let parts = parts(filename: filename, contentType: contentType, description: description)
        return (parts.head + data + parts.tail, parts.contentType)
    }

    /// The form around the file `source`, written to `destination` a megabyte at a time (a video
    /// is never whole in memory); its Content-Type.
    static func write(
        _ source: URL, filename: String, contentType: String, description: String?, to destination: URL
    ) throws -> String {
        let parts = parts(filename: filename, contentType: contentType, description: description)
        guard FileManager.default.createFile(atPath: destination.path, contents: parts.head) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: destination.path])
        }
        let output = try FileHandle(forWritingTo: destination)
        defer { try? output.close() }
        try output.seekToEnd()
        let input = try FileHandle(forReadingFrom: source)
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
        try output.write(contentsOf: parts.tail)
        try output.synchronize()
        return parts.contentType
    }
}
