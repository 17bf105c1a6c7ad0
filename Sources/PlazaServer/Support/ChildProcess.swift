import Foundation
import NIOConcurrencyHelpers
import NIOPosix

/// Runs a program (ffmpeg) as a child process on a thread pool of its own, with a deadline
/// after which it is killed. Its standard output is handed over line by line; its standard
/// error goes to a file, so a chatty child can never block on a full pipe, and its last lines
/// come back for the log.
enum ChildProcess {
    struct Outcome: Sendable {
        var status: Int32
        var timedOut: Bool
        /// The end of what it wrote to standard error.
        var errorTail: String
    }

    /// The threads that wait for children: separate from NIO's shared pool (files, images), which
    /// a long transcoding would otherwise hold a thread of. Its callers cap how many run at once.
    static let threadPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 8)
        pool.start()
        return pool
    }()

    static func run(
        _ command: [String], timeout: Duration, errorLog: String, threadPool: NIOThreadPool = threadPool,
        onLine: @escaping @Sendable (Substring) -> Void = { _ in }
    ) async throws -> Outcome {
        try await threadPool.runIfActive {
            try runBlocking(command, timeout: timeout, errorLog: errorLog, onLine: onLine)
        }
    }

    private static func runBlocking(
        _ command: [String], timeout: Duration, errorLog: String, onLine: (Substring) -> Void
    ) throws -> Outcome {
        guard let executable = command.first else { throw CocoaError(.executableNotLoadable) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.dropFirst())
        process.environment = ["PATH": "/usr/bin:/bin:/usr/local/bin:/opt/homebrew/bin", "LC_ALL": "C"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        guard FileManager.default.createFile(atPath: errorLog, contents: nil),
            let errors = FileHandle(forWritingAtPath: errorLog)
        else { throw CocoaError(.fileWriteUnknown) }
        defer { try? errors.close() }
        process.standardError = errors
        try process.run()
        let pid = process.processIdentifier
        let timedOut = NIOLockedValueBox(false)
        let finished = NIOLockedValueBox(false)
        let killer = DispatchWorkItem {
            finished.withLockedValue { done in
                guard !done else { return }
                timedOut.withLockedValue { $0 = true }
                kill(pid, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeout.milliseconds)), execute: killer)
        var pending = [UInt8]()
        let reader = output.fileHandleForReading
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending.append(contentsOf: chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                onLine(Substring(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            if pending.count > 64 * 1024 { pending.removeAll() }
        }
        process.waitUntilExit()
        finished.withLockedValue { $0 = true }
        killer.cancel()
        return Outcome(
            status: process.terminationStatus, timedOut: timedOut.withLockedValue { $0 },
            errorTail: tail(of: errorLog))
    }

    /// The last 2 KB of the file, as text.
    static func tail(of path: String) -> String {
        guard let file = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? file.close() }
        let end = (try? file.seekToEnd()) ?? 0
        try? file.seek(toOffset: end > 2048 ? end - 2048 : 0)
        let data = (try? file.readToEnd()) ?? Data()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
