import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ServiceLifecycle

/// SQLite in WAL mode: one writer connection that takes every write in turn (so load never
/// surfaces SQLITE_BUSY), and a small set of read-only connections.
///
/// Writes that arrive while one is running are committed together (group commit): each runs
/// in its own savepoint, so a failing one is rolled back alone, and each caller returns only
/// once the shared COMMIT is done. A commit writes every page a write touched to the WAL, and
/// consecutive writes touch the same pages (the tails of the same indexes), so sharing it
/// is most of what the writer saves under load. A write that finds the writer idle commits alone.
final class SQLiteDriver: DatabaseDriver {
    let kind = DatabaseKind.sqlite
    private let writer: ResourcePool<Connection>
    private let readers: ResourcePool<Connection>
    /// The connection that copies the WAL back into the database file while the writer goes
    /// on (see `checkpointWhileWriting`), used only from the one thread of `run()`'s pool.
    private let checkpointer: SQLiteHandle
    /// Yields after each commit; yields that arrive while the checkpointer works fold into one.
    private let commits: AsyncStream<Void>
    private let committed: AsyncStream<Void>.Continuation
    private let queue = NIOLockedValueBox(WriteQueue())
    private let metrics: PlazaMetrics?
    /// At most this many writes share a commit.
    static let maxBatch = 64
    /// The WAL pages after which the writer checkpoints itself. Most of the copying is done by
    /// the checkpointer by then, so this is what lets the WAL start over from its beginning
    /// under steady writes (SQLite restarts it only once a checkpoint has copied all of it).
    /// 8,192 pages is 32 MB of WAL with 4 KB pages.
    static let checkpointPages = 8_192

    private struct WriteQueue {
        var pending: [PendingWrite] = []
        var draining = false
    }

    /// A write waiting for its batch: `execute` runs it on the writer, `complete` answers its caller.
    private struct PendingWrite: Sendable {
        let execute: @Sendable (Connection) async throws -> Void
        let complete: @Sendable ((any Error)?) -> Void
    }

    private init(writer: Connection, readers: [Connection], checkpointer: SQLiteHandle, metrics: PlazaMetrics?) {
        self.metrics = metrics
        self.writer = ResourcePool([writer])
        self.readers = ResourcePool(readers)
        self.checkpointer = checkpointer
        (commits, committed) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    static func open(
        path: String, readers readerCount: Int, synchronous: String, metrics: PlazaMetrics? = nil, logger: Logger
    ) async throws
        -> SQLiteDriver
    {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let sync = synchronous.uppercased() == "FULL" ? "FULL" : "NORMAL"
        func open(readOnly: Bool) throws -> SQLiteHandle {
            let handle = try SQLiteHandle(path: path)
            // busy_timeout first: another process (plaza migrate) may hold the write lock.
            try handle.execute(script: "PRAGMA busy_timeout = 10000")
            if !readOnly {
                try handle.execute(script: "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = \(checkpointPages)")
            }
            // 2 MB of page cache per connection; the OS file cache holds the rest (a page SQLite
            // has not cached costs a pread from it). 8 MB each made the five connections' caches
            // 20 MB of the server's resident memory after a few seconds of load, for no throughput
            // measurable here. No mmap: mapped pages count as resident memory too.
            try handle.execute(
                script: """
                    PRAGMA foreign_keys = ON;
                    PRAGMA synchronous = \(sync);
                    PRAGMA temp_store = MEMORY;
                    PRAGMA cache_size = -2000;
                    """)
            // Readers open read-write and refuse writes themselves: a read-only open cannot
            // recover the WAL index when it is the first to open the file after a crash.
            if readOnly { try handle.execute(script: "PRAGMA query_only = ON") }
            return handle
        }
        // The writer first: it creates the file and switches it to WAL before the others open it.
        let writer = Connection(sqlite: try open(readOnly: false), logger: logger)
        let readers = try (0..<max(1, readerCount)).map { _ in
            Connection(sqlite: try open(readOnly: true), logger: logger)
        }
        // The checkpointer never waits for a lock: a checkpoint that would wait is tried again later.
        let checkpointer = try open(readOnly: false)
        try checkpointer.execute(script: "PRAGMA busy_timeout = 0")
        return SQLiteDriver(writer: writer, readers: readers, checkpointer: checkpointer, metrics: metrics)
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        try await readers.withResource(body)
    }

    /// Writes queued for the writer, not yet in a commit.
    var queuedWrites: Int { queue.withLockedValue { $0.pending.count } }

    func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let result = NIOLockedValueBox<T?>(nil)
            submit(
                PendingWrite(
                    execute: { connection in
                        let value = try await body(connection)
                        result.withLockedValue { $0 = value }
                    },
                    complete: { error in
                        if let error { return continuation.resume(throwing: error) }
                        continuation.resume(returning: result.withLockedValue { $0! })
                    }))
        }
    }

    private func submit(_ write: PendingWrite) {
        let start = queue.withLockedValue { queue in
            queue.pending.append(write)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { Task { await self.drain() } }
    }

    /// Commits the queued writes, a batch at a time, until none are left.
    private func drain() async {
        while true {
            let batch = queue.withLockedValue { queue in
                let batch = Array(queue.pending.prefix(Self.maxBatch))
                queue.pending.removeFirst(batch.count)
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            metrics?.sqliteBatch(batch.count)
            await writer.withResource { connection in await Self.commit(batch, on: connection) }
            committed.yield()
        }
    }

    private static func commit(_ batch: [PendingWrite], on connection: Connection) async {
        guard !batch.isEmpty else { return }
        do {
            try await connection.exec("BEGIN IMMEDIATE")
        } catch {
            for write in batch { write.complete(error) }
            return
        }
        var written: [PendingWrite] = []
        for (index, write) in batch.enumerated() {
            do {
                try await connection.exec("SAVEPOINT plaza_write")
                try await write.execute(connection)
                try await connection.exec("RELEASE plaza_write")
                written.append(write)
            } catch {
                if !connection.isInTransaction {
                    // SQLite rolled the whole transaction back itself (IOERR, FULL, NOMEM): what
                    // the batch wrote so far is gone, and the writes not yet run start a new one
                    // rather than run outside any transaction.
                    for done in written { done.complete(error) }
                    write.complete(error)
                    return await commit(Array(batch[(index + 1)...]), on: connection)
                }
                try? await connection.exec("ROLLBACK TO plaza_write")
                try? await connection.exec("RELEASE plaza_write")
                write.complete(error)
            }
        }
        do {
            try await connection.exec("COMMIT")
            for write in written { write.complete(nil) }
        } catch {
            try? await connection.exec("ROLLBACK")
            for write in written { write.complete(error) }
        }
    }

    /// Runs `writes` as one batch on the writer, as group commit does when they arrive together,
    /// and returns what each caller is told (tests use it to make a batch of their choosing).
    func commitTogether(_ writes: [@Sendable (Connection) async throws -> Void]) async -> [Result<Void, any Error>] {
        let outcomes = NIOLockedValueBox([Int: Result<Void, any Error>]())
        let batch = writes.enumerated().map { index, write in
            PendingWrite(
                execute: write,
                complete: { error in outcomes.withLockedValue { $0[index] = error.map { .failure($0) } ?? .success(()) }
                })
        }
        await writer.withResource { connection in await Self.commit(batch, on: connection) }
        return outcomes.withLockedValue { outcomes in
            writes.indices.map { outcomes[$0] ?? .failure(CancellationError()) }
        }
    }

    func write(_ statement: SQL) async throws -> [Row] {
        defer { committed.yield() }
        return try await writer.withResource { try await $0.rows(statement) }
    }

    /// Once the database has had no reads or writes for a second after some use, copies the WAL
    /// back into the database file and truncates it, drops every connection's cached pages (the
    /// OS file cache keeps them) and hands the freed memory back to the system: a server that
    /// has gone quiet goes back to about the memory and disk it started with.
    /// Returns when cancelled.
    private func releaseWhenIdle(checkpointing thread: NIOThreadPool) async {
        let lends = { [writer, readers] in writer.lends + readers.lends }
        var seen = lends()
        var released = true
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let now = lends()
            if now != seen {
                (seen, released) = (now, false)
            } else if !released {
                // It ends in fsyncs, so it runs on the checkpointer's thread rather than one the
                // server shares. While a read or write is still running it gives up at once
                // (busy), and the whole release waits for the next quiet second.
                guard (try? await checkpoint("TRUNCATE", on: thread))?.busy == false else { continue }
                for pool in [writer, readers] { await pool.withEach { try? await $0.exec("PRAGMA shrink_memory") } }
                FreeHeap.release()
                (seen, released) = (lends(), true)
            }
        }
    }

    /// One process owns a SQLite database, so there is no other server to hear from.
    func listen(channel: String, _ handler: @escaping @Sendable (String?) -> Void) async throws {}

    /// While writes come in, copies what they appended to the WAL back into the database file,
    /// on a thread of its own: a passive checkpoint, which waits for no one, after each commit
    /// (commits made while one runs are taken by the next). A checkpoint copies pages and ends
    /// in two fsyncs, of the WAL and of the database file; done by the writer, as SQLite does by
    /// default every 1,000 pages, it stalls every write queued behind it (checkpoints took a
    /// quarter of the server's CPU time during a run of likes). Returns when cancelled.
    ///
    /// Once the WAL has reached `checkpointPages`, it skips one turn: the writer's own checkpoint
    /// at its next commit would find the checkpoint lock taken if this one held it, and only the
    /// writer's (done between its commit and its next write) lets the WAL start over.
    private func checkpointWhileWriting(on thread: NIOThreadPool) async {
        var walPages = 0
        for await _ in commits {
            if walPages >= Self.checkpointPages {
                walPages = 0
                continue
            }
            walPages = (try? await checkpoint("PASSIVE", on: thread))?.walPages ?? 0
        }
    }

    /// Runs `PRAGMA wal_checkpoint(mode)` on the checkpointer, on `thread` (the one thread that
    /// uses it): whether it gave up for a lock, and the pages in the WAL.
    private func checkpoint(_ mode: String, on thread: NIOThreadPool) async throws -> (busy: Bool, walPages: Int) {
        try await thread.runIfActive { [checkpointer] in
            guard let row = try checkpointer.rows("PRAGMA wal_checkpoint(\(mode))", []).first else { return (true, 0) }
            return (try row.decode(column: "busy", as: Int.self) != 0, try row.decode(column: "log", as: Int.self))
        }
    }

    func run() async throws {
        let checkpointing = NIOThreadPool(numberOfThreads: 1)
        checkpointing.start()
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.checkpointWhileWriting(on: checkpointing) }
                group.addTask { await self.releaseWhenIdle(checkpointing: checkpointing) }
            }
        }
        try? await checkpointing.shutdownGracefully()
        // Finishing must not be cut short when shutdown came as cancellation, so it runs in its
        // own task; the handles close when the driver is released.
        await Task {
            await writer.withResource { writer in try? await writer.exec("PRAGMA optimize") }
        }.value
    }
}
