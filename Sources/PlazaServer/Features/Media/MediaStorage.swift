import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix

/// Where media bytes live: the local disk (default, one server) or an S3-compatible bucket
/// (several app servers). Keys look like `123456789/medium`; content never changes once written.
protocol MediaStorage: Sendable {
    func put(_ key: String, bytes: [UInt8], contentType: String) async throws
    /// nil when there is no such object.
    func get(_ key: String) async throws -> ByteBuffer?
    /// Deleting a missing key is not an error.
    func delete(_ keys: [String]) async throws
    /// An object to send, whole or one span of it, streamed rather than held in memory.
    func open(_ key: String, range: ByteRange?, context: some RequestContext) async throws -> StoredObject
    /// Stores the file at `path` (a video's upload), without holding it in memory where the
    /// storage allows.
    func put(_ key: String, file path: String, contentType: String) async throws
    /// Copies an object into the file at `path`; false when there is no such object.
    func get(_ key: String, into path: String) async throws -> Bool
}

/// A stored object to send.
enum StoredObject: Sendable {
    /// The bytes of `span` (the whole object when no range was asked) of an object of `total` bytes.
    case body(ResponseBody, span: ClosedRange<Int>, total: Int)
    /// The object is `total` bytes long and the span asked for lies beyond it.
    case unsatisfiable(total: Int)
    case missing
}

/// The files of one media item besides its variants: a video's upload, kept until it is transcoded.
enum MediaFile {
    static let source = "source"

    static func keys(of id: Int64) -> [String] {
        (ImagePipeline.Variant.allCases.map(\.rawValue) + [source]).map { "\(id)/\($0)" }
    }
}

extension MediaStorage {
    /// Deletes every variant of the given media; a failure is logged, not thrown: the rows are
    /// gone already, and a leftover file is only wasted space.
    func deleteFiles(ofMedia ids: [Int64], logger: Logger) async {
        guard !ids.isEmpty else { return }
        do {
            try await delete(ids.flatMap(MediaFile.keys(of:)))
        } catch {
            logger.warning("Could not delete the files of media \(ids): \(error)")
        }
    }
}

/// Files under `<data dir>/media`, spread over 256 folders by id.
struct LocalMediaStorage: MediaStorage {
    let root: String
    let threadPool: NIOThreadPool

    /// Folders are made as files are written (`put`).
    init(root: String, threadPool: NIOThreadPool = .singleton) {
        self.root = root
        self.threadPool = threadPool
    }

    /// `123456789/medium` → `<root>/15/123456789-medium` (folder = id mod 256 in hex).
    func path(for key: String) -> String {
        let parts = key.split(separator: "/", maxSplits: 1)
        let id = UInt64(parts.first ?? "") ?? 0
        let folder = String(format: "%02x", Int(id % 256))
        return "\(root)/\(folder)/\(key.replacingOccurrences(of: "/", with: "-"))"
    }

    func put(_ key: String, bytes: [UInt8], contentType: String) async throws {
        try await write(key) { try Data(bytes).write(to: URL(fileURLWithPath: $0)) }
    }

    /// Writes the file of `key` under a temporary name and renames it, so a reader never sees
    /// half a file; its folder is made as needed.
    private func write(_ key: String, _ body: @escaping @Sendable (_ temporary: String) throws -> Void) async throws {
        let path = path(for: key)
        try await threadPool.runIfActive {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let temporary = path + ".partial"
            unlink(temporary)
            try body(temporary)
            guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }
    }

    func get(_ key: String) async throws -> ByteBuffer? {
        let path = path(for: key)
        return try await threadPool.runIfActive {
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            return ByteBuffer(data: data)
        }
    }

    func delete(_ keys: [String]) async throws {
        let paths = keys.map(path(for:))
        try await threadPool.runIfActive {
            for path in paths { unlink(path) }
        }
    }

    /// Streams the file (or the span) from disk in chunks, so a video is never held in memory.
    func open(_ key: String, range: ByteRange?, context: some RequestContext) async throws -> StoredObject {
        let path = path(for: key)
        let size = try await threadPool.runIfActive { () -> Int? in
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        }
        guard let size else { return .missing }
        let span: ClosedRange<Int>
        if let range {
            guard let resolved = range.resolve(length: size) else { return .unsatisfiable(total: size) }
            span = resolved
        } else {
            guard size > 0 else { return .body(ResponseBody(), span: 0...0, total: 0) }
            span = 0...(size - 1)
        }
        let body = try await FileIO(threadPool: threadPool).loadFile(path: path, range: span, context: context)
        return .body(body, span: span, total: size)
    }

    func put(_ key: String, file source: String, contentType: String) async throws {
        try await write(key) { try FileManager.default.copyItem(atPath: source, toPath: $0) }
    }

    func get(_ key: String, into destination: String) async throws -> Bool {
        let path = path(for: key)
        return try await threadPool.runIfActive {
            guard FileManager.default.fileExists(atPath: path) else { return false }
            unlink(destination)
            try FileManager.default.copyItem(atPath: path, toPath: destination)
            return true
        }
    }
}
