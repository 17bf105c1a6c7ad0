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

    /// When trims run: a request is answered by a trim that starts after it, at most one waits,
    /// and each starts at least `spacing` after the one before.
    struct Schedule {
        /// A trim is waiting to run: later requests are answered by it.
        private(set) var scheduled = false
        private(set) var lastStart: DispatchTime?

        /// A trim is asked for at `now`: when to run one, or nil when the one waiting answers.
        mutating func request(at now: DispatchTime) -> DispatchTime? {
            guard !scheduled else { return nil }
            scheduled = true
            let earliest = lastStart.map { $0 + .milliseconds(Int(spacing.milliseconds)) } ?? now
            return max(earliest, now)
        }

        /// The waiting trim starts at `now`.
        mutating func start(at now: DispatchTime) {
            scheduled = false
            lastStart = now
        }
    }

    private static let schedule = NIOLockedValueBox(Schedule())
    private static let queue = DispatchQueue(label: "plaza.free-heap", qos: .utility)

    /// Asks for a trim that starts after this call: the next one due, scheduled if none is.
    static func release() {
        guard let due = schedule.withLockedValue({ $0.request(at: .now()) }) else { return }
        queue.asyncAfter(deadline: due) {
            schedule.withLockedValue { $0.start(at: .now()) }
            plaza_release_free_heap()
        }
    }
}
