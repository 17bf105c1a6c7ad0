import CSQLiteShim
import Dispatch
import NIOConcurrencyHelpers

/// Hands the heap's free pages back to the system (glibc's `malloc_trim`), for the whole process:
/// on a thread of its own, one at a time, at most once per `spacing`.
///
/// A trim walks every arena, holding each one's lock while it returns that arena's free pages,
/// so a thread that allocates meanwhile waits. It must never run on a thread the server's tasks
/// share, and it must not run back to back: a process with many databases (the test suite runs
/// hundreds of servers at once) had each of them trim whenever it went quiet, and with both of
/// the cooperative pool's threads stuck in trims every task in the process stood still for
/// seconds at a time.
enum FreeHeap {
    /// The least time from the start of one trim to the start of the next.
    static let spacing: Duration = .seconds(30)

    private struct State {
        /// A trim is waiting to run: later requests are answered by it.
        var scheduled = false
        var lastStart: DispatchTime?
    }

    private static let state = NIOLockedValueBox(State())
    private static let queue = DispatchQueue(label: "plaza.free-heap", qos: .utility)

    /// Asks for a trim that starts after this call: the next one due, scheduled if none is.
    static func release() {
        let due: DispatchTime? = state.withLockedValue { state in
            guard !state.scheduled else { return nil }
            state.scheduled = true
            let earliest = state.lastStart.map { $0 + .milliseconds(Int(spacing.milliseconds)) } ?? .now()
            return max(earliest, .now())
        }
        guard let due else { return }
        queue.asyncAfter(deadline: due) {
            state.withLockedValue { state in
                state.scheduled = false
                state.lastStart = .now()
            }
            plaza_release_free_heap()
        }
    }
}
