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

    /// The path of `program` on `PATH` (and the usual bin folders), if it is there and executable.
    static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"])
            .map { "\($0)/\(program)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func run(
        _ command: [String], timeout: Duration, errorLog: String, environment: [String] = [],
        threadPool: NIOThreadPool = threadPool, onLine: @escaping @Sendable (Substring) -> Void = { _ in }
    ) async throws -> Outcome {
        try await threadPool.runIfActive {
            try runBlocking(command, timeout: timeout, errorLog: errorLog, environment: environment, onLine: onLine)
        }
    }

    /// Runs `command` to its end on the calling thread (a pool thread, or a test's).
    static func runBlocking(
        _ command: [String], timeout: Duration, errorLog: String, environment: [String] = [],
        onLine: (Substring) -> Void = { _ in }
    ) throws -> Outcome {
        guard !command.isEmpty else { throw SpawnError(program: "", code: EINVAL) }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { throw SpawnError(program: command[0], code: errno) }
        let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
        // Not for other children (each is also started with every descriptor past 2 closed).
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        defer { close(readEnd) }
        let child: Spawned
        do {
            child = try Spawned(command, stdout: writeEnd, stderrPath: errorLog, environment: environment)
            close(writeEnd)
        } catch {
            close(writeEnd)
            throw error
        }
        let pid = child.pid
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
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                onLine(Substring(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
            if pending.count > 64 * 1024 { pending.removeAll() }
        }
        // Waited for without reaping, so the deadline cannot kill a reused pid once it has ended.
        child.waitForExit()
        finished.withLockedValue { $0 = true }
        killer.cancel()
        return Outcome(
            status: child.reap(), timedOut: timedOut.withLockedValue { $0 }, errorTail: tail(of: errorLog))
    }

    struct SpawnError: Error, CustomStringConvertible {
        let program: String
        let code: Int32
        var description: String { "\(program) could not be started: \(String(cString: strerror(code)))" }
    }

    /// A child started with `posix_spawn`, not Foundation's `Process`: in Swift 6.3 on Linux
    /// `Process.run()` reads past a buffer while it lists /proc/self/fd, and now and then kills
    /// the whole server with SIGSEGV (swift-corelibs-foundation pull request 5472). The child gets
    /// standard input from /dev/null, `stdout` as its standard output, `stderrPath` (created
    /// or emptied) as its standard error, no other descriptor, no blocked or ignored signal, and
    /// an environment of its own (`PATH`, `LC_ALL=C`, and `environment`'s `NAME=value` entries).
    struct Spawned {
        let pid: pid_t

        init(_ command: [String], stdout: Int32, stderrPath: String, environment extra: [String] = []) throws {
            let argv = command.map { strdup($0) } + [nil]
            let environment = ["PATH=/usr/bin:/bin:/usr/local/bin:/opt/homebrew/bin", "LC_ALL=C"] + extra
            let envp = environment.map { strdup($0) } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            #if canImport(Glibc)
                var actions = posix_spawn_file_actions_t()
                var attributes = posix_spawnattr_t()
            #else
                var actions: posix_spawn_file_actions_t?
                var attributes: posix_spawnattr_t?
            #endif
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            #if canImport(Glibc)
                // glibc 2.34+ has it; Swift's Glibc module does not declare it.
                typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
                if let symbol = Self.closeFrom { _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3) }
            #endif
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var noSignals = sigset_t()
            sigemptyset(&noSignals)
            var allSignals = sigset_t()
            sigfillset(&allSignals)
            posix_spawnattr_setsigmask(&attributes, &noSignals)
            posix_spawnattr_setsigdefault(&attributes, &allSignals)
            var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
            #if canImport(Darwin)
                flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
            #endif
            posix_spawnattr_setflags(&attributes, Int16(flags))
            var pid: pid_t = 0
            let failed = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
            guard failed == 0 else { throw SpawnError(program: command[0], code: failed) }
            self.pid = pid
        }

        #if canImport(Glibc)
            /// `posix_spawn_file_actions_addclosefrom_np`, where glibc has it (2.34+); without it
            /// the child still gets only descriptors without close-on-exec, as NIO's and ours are.
            nonisolated(unsafe) static let closeFrom = dlsym(
                UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        #endif

        /// Blocks until the child has ended, leaving it to `reap()`.
        func waitForExit() {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        }

        /// Its exit status (128 + the signal when a signal ended it), and it is gone.
        func reap() -> Int32 {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 {
                guard errno == EINTR else { return -1 }
            }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
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
