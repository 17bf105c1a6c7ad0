import NIOConcurrencyHelpers

/// Lends each of a fixed set of resources (database connections, permits) to one task at a
/// time, first come first served. A free one is taken under a lock without suspending; when all
/// are lent out the task waits for the next one returned.
final class ResourcePool<Resource: Sendable>: Sendable {
    private struct State {
        var free: [Resource]
        var waiting: [CheckedContinuation<Resource, Never>] = []
        var lends = 0
    }

    private let state: NIOLockedValueBox<State>
    private let count: Int

    init(_ resources: [Resource]) {
        precondition(!resources.isEmpty, "a pool needs a resource")
        state = NIOLockedValueBox(State(free: resources.reversed()))
        count = resources.count
    }

    /// How many times a resource has been lent: unchanged between two looks means nobody
    /// asked in between.
    var lends: Int { state.withLockedValue { $0.lends } }

    /// Runs `body` on every resource in turn, holding each one taken until all are done.
    func withEach(_ body: (Resource) async throws -> Void) async rethrows {
        var taken: [Resource] = []
        defer { taken.forEach(checkIn) }
        for _ in 0..<count { taken.append(await checkOut()) }
        for resource in taken { try await body(resource) }
    }

    func withResource<T>(_ body: (Resource) async throws -> T) async rethrows -> T {
        let resource = await checkOut()
        defer { checkIn(resource) }
        return try await body(resource)
    }

    private func checkOut() async -> Resource {
        let free: Resource? = state.withLockedValue { state in
            state.lends += 1
            return state.free.popLast()
        }
        if let free { return free }
        return await withCheckedContinuation { continuation in
            let resource: Resource? = state.withLockedValue { state in
                if let resource = state.free.popLast() { return resource }
                state.waiting.append(continuation)
                return nil
            }
            if let resource { continuation.resume(returning: resource) }
        }
    }

    private func checkIn(_ resource: Resource) {
        let waiter: CheckedContinuation<Resource, Never>? = state.withLockedValue { state in
            if state.waiting.isEmpty {
                state.free.append(resource)
                return nil
            }
            return state.waiting.removeFirst()
        }
        waiter?.resume(returning: resource)
    }
}
