/// What keeps an open stream's memory small. A Swift task keeps the most memory its calls ever
/// took at once until it ends (its allocator reuses that memory but does not give it back), and a
/// stream's task lives as long as the stream. So a stream's request is answered in a task of its
/// own (`DoorDispatch`), deep work a stream does later (a replay's database reads, a reader's own
/// media URLs) runs in one too, and a stream's loop keeps per-event work in functions that are not
/// inlined into it (a synchronous function's locals are on the thread's stack, not in the task).
/// Measured with bench/streams.py, docs/realtime.md.
package enum StreamMemory {
    /// Runs `work` in a task of its own and returns its result; cancelling the caller cancels it.
    /// Not an `async let`: that child task is allocated from its parent's task memory, which
    /// keeps the space after it ends (6 MB more at 10,000 open streams).
    package static func separately<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Whether a request for `path` may become a long-lived stream: Plaza's `/api/v1/stream` and
    /// Mastodon's Server-Sent Events under `/api/v1/streaming`.
    static func mayStream(path: String) -> Bool {
        path.hasPrefix("/api/v1/stream")
    }
}
