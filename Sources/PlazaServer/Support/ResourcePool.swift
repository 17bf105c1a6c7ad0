import NIOConcurrencyHelpers

/// Lends each of a fixed set of resources (database connections, permits) to one task at a
/// time, first come first served. A free one is taken under a lock without suspending; when all
/// are lent out the task waits for the next one returned.
final class ResourcePool<Resource: Sendable>: Sendable {
    private struct State {
        var free: [Resource]
        var waiting: [CheckedContinuation<Resource, Never>] = []
    }

    private let state: NIOLockedValueBox<State>

    init(_ resources: [Resource]) {
        precondition(!resources.isEmpty, "a pool needs a resource")
        state = NIOLockedValueBox(State(free: resources.reversed()))
    }

    func withResource<T>(_ body: (Resource) async throws -> T) async rethrows -> T {
        let resource = await checkOut()
        defer { checkIn(resource) }
        return try await body(resource)
    }

    private func checkOut() async -> Resource {
        if let resource = state.withLockedValue({ $0.free.popLast() }) { return resource }
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
