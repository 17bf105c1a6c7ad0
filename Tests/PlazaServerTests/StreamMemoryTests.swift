import Testing

@testable import PlazaServer

/// `StreamMemory.separately` runs work in a task of its own; to its caller it must behave as a
/// direct call: the value, the error, the task-local values, and cancellation all carry over.
@Suite("A stream's work in a task of its own")
struct StreamMemoryTests {
    @TaskLocal static var requestName = "none"

    struct Refused: Error, Equatable {}

    @Test func theCallerGetsTheValueOrTheError() async throws {
        #expect(try await StreamMemory.separately { 42 } == 42)
        await #expect(throws: Refused.self) {
            try await StreamMemory.separately { () async throws -> Int in throw Refused() }
        }
    }

    @Test func theWorkSeesTheCallersTaskLocals() async throws {
        let seen = try await Self.$requestName.withValue("stream") {
            try await StreamMemory.separately { Self.requestName }
        }
        #expect(seen == "stream")
    }

    /// Cancelling the caller (the connection closed) cancels the work, which ends with it.
    @Test func cancellingTheCallerCancelsTheWork() async throws {
        let (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        let caller = Task {
            try await StreamMemory.separately { () async throws -> Bool in
                startedSink.yield()
                // Sleeps until cancelled: an hour stands for "never" here.
                try await Task.sleep(for: .seconds(3600))
                return false
            }
        }
        for await _ in started { break }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}
