import NIOConcurrencyHelpers
import ServiceLifecycle

/// Wakes a background worker (link previews, mail) when work is queued in this process. Other
/// app servers' workers find it on their next poll.
final class WorkSignal: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
        var open = false
    }
    private let state = NIOLockedValueBox(State())

    /// Lets the worker start: called once the migrations have run.
    func open() {
        state.withLockedValue { $0.open = true }
        wake()
    }

    var isOpen: Bool { state.withLockedValue { $0.open } }

    /// A worker's life: once open, runs `batch` when woken or every `pollInterval`, again and
    /// again while it finds work (returns true), until the server shuts down.
    func work(pollInterval: Duration, _ batch: () async -> Bool) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await cancelWhenGracefulShutdown { await self.wait(timeout: pollInterval) }
            guard isOpen else { continue }
            while !Task.isShuttingDownGracefully, await batch() {}
        }
    }

    func wake() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.signalled = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when woken, after `timeout`, or on cancellation.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { self.wake() }
            }
            group.addTask {
                await withTaskCancellationHandler {
                    await self.nextSignal()
                } onCancel: {
                    self.wake()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func nextSignal() async {
        await withCheckedContinuation { continuation in
            let now = state.withLockedValue { state in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
