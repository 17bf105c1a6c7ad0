import Foundation
import NIOConcurrencyHelpers

/// The instance's name as its admins set it (`PATCH /admin/instance`), for what is written
/// without a database read of its own: page titles, mails and pushes. It starts as
/// `PLAZA_INSTANCE_NAME`; `InstanceStore` sets it whenever it reads or writes the settings, and
/// pages ask for it `refreshed()`, which reads it again when it is older than `maxAge`, so
/// another app server's change shows here within that.
final class InstanceName: Sendable {
    static let maxAge: Duration = .seconds(10)

    private struct State {
        var name: String
        var readAt: ContinuousClock.Instant?
    }
    private let state: NIOLockedValueBox<State>

    init(_ initial: String) {
        state = NIOLockedValueBox(State(name: initial, readAt: nil))
    }

    /// The name last read (the environment's before any read).
    var current: String { state.withLockedValue { $0.name } }

    func set(_ name: String) {
        state.withLockedValue { $0 = State(name: name, readAt: .now) }
    }

    /// Whether the name was read less than `maxAge` ago.
    var isFresh: Bool {
        state.withLockedValue { state in state.readAt.map { $0.duration(to: .now) < Self.maxAge } ?? false }
    }
}
