/// What keeps an open stream's memory small. A Swift task keeps the most memory its calls ever
/// took at once until it ends (its allocator reuses that memory but does not give it back), and a
/// stream's task lives as long as the stream. So a stream's request is answered in a child task
/// (`DoorDispatch`), and deep work a stream does later (a replay's database reads) runs in one
/// too: its memory goes back when it ends. Measured with bench/streams.py, docs/realtime.md.
package enum StreamMemory {
    /// Runs `work` in a child task and returns its result.
    package static func separately<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        async let value = work()
        return try await value
    }

    /// Whether a request for `path` may become a long-lived stream: Plaza's `/api/v1/stream` and
    /// Mastodon's Server-Sent Events under `/api/v1/streaming`.
    static func mayStream(path: String) -> Bool {
        path.hasPrefix("/api/v1/stream")
    }
}
