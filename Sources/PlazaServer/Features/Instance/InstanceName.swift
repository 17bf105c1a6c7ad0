import Foundation
import NIOConcurrencyHelpers

/// The instance's name as its admins set it (`PATCH /admin/instance`), for what is written
/// without a read of its own: page titles, mails and pushes. It starts as `PLAZA_INSTANCE_NAME`;
/// it is read at start-up, set whenever `InstanceStore` reads or writes the settings, and read
/// again by `fresh()` (pages, the push and mail workers' rounds) when older than `maxAge`, so a
/// change made on another app server shows here within that.
final class InstanceName: Sendable {
    let maxAge: Duration

    private struct State {
        var name: String
        var readAt: ContinuousClock.Instant?
    }
    private let state: NIOLockedValueBox<State>
    private let db: Database
    /// The name while no admin has set one.
    let fallback: String

    init(_ fallback: String, db: Database, maxAge: Duration = .seconds(10)) {
        self.fallback = fallback
        self.db = db
        self.maxAge = maxAge
        state = NIOLockedValueBox(State(name: fallback, readAt: nil))
    }

    /// The name last read (the environment's before any read).
    var current: String { state.withLockedValue { $0.name } }

    /// Keeps a name read at `readAt`, unless a later read is already kept.
    func set(_ name: String, readAt: ContinuousClock.Instant = .now) {
        state.withLockedValue { state in
            if let kept = state.readAt, kept > readAt { return }
            state = State(name: name, readAt: readAt)
        }
    }

    /// The name, read again first when the last read is older than `maxAge` (a failed read
    /// keeps the last one).
    func fresh() async -> String {
        let stale = state.withLockedValue { state in state.readAt.map { $0.duration(to: .now) >= maxAge } ?? true }
        guard stale else { return current }
        let started = ContinuousClock.now
        do {
            let row = try await db.read { try await $0.first("SELECT value FROM instance_settings WHERE key = 'name'") }
            set(try row?.decode(column: "value", as: String.self) ?? fallback, readAt: started)
        } catch {
            // Kept as it was: a database that does not answer now changes no name.
        }
        return current
    }
}
