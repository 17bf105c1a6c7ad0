import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A file sent as a response body from an open descriptor, so the file may be unlinked before
/// the first byte goes (a download made for one request leaves nothing behind, whether the
/// client reads it all or goes away).
struct FileDownload: Sendable {
    let body: ResponseBody
    let size: Int

    static func open(_ path: String, unlinking: Bool, threadPool: NIOThreadPool = .singleton) async throws
        -> FileDownload
    {
        let (handle, size) = try await threadPool.runIfActive { () throws -> (FileHandle, Int) in
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            if unlinking { unlink(path) }
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: 0)
            return (handle, Int(size))
        }
        let body = ResponseBody(contentLength: size) { writer in
            defer { try? handle.close() }
            while true {
                let chunk = try await threadPool.runIfActive { try handle.read(upToCount: 1 << 16) }
                guard let chunk, !chunk.isEmpty else { break }
                try await writer.write(ByteBuffer(bytes: chunk))
            }
            try await writer.finish(nil)
        }
        return FileDownload(body: body, size: size)
    }
}

/// At most `limit` holders at once; `enter` says no rather than wait.
final class ConcurrencyGate: Sendable {
    private let inside = NIOLockedValueBox(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func enter() -> Bool {
        inside.withLockedValue { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { inside.withLockedValue { $0 -= 1 } }
}
