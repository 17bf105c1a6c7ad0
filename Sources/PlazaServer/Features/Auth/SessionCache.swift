import NIOConcurrencyHelpers
import PlazaAPI

/// Remembers recently seen sessions for a few seconds so that an authenticated request does
/// not cost a database look-up. Revocations on this server take effect at once; on other app
/// servers (PostgreSQL) within `ttl`, or at once for a suspension, which they hear of through
/// `SessionRevocations`.
final class SessionCache: Sendable {
    struct Entry {
        var identity: Identity
        var lastUsed: Int64
        var createdAt: Int64
        var cachedAt: Int64
    }

    let ttlMillis: Int64
    let capacity: Int
    private let entries = NIOLockedValueBox([String: Entry]())

    init(ttlMillis: Int64 = 5_000, capacity: Int = 50_000) {
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }

    func get(_ tokenHash: String, now: Int64) -> Entry? {
        entries.withLockedValue { entries in
            guard let entry = entries[tokenHash], now - entry.cachedAt < ttlMillis else { return nil }
            return entry
        }
    }

    func put(_ tokenHash: String, _ entry: Entry) {
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[tokenHash] = entry
        }
    }

    /// Forgets every session (another server's revocations may have been missed).
    func removeAll() {
        entries.withLockedValue { $0.removeAll() }
    }

    /// Forgets sessions of `userID`: all of them, or only the one with `sessionID`, or all but `except`.
    func forget(userID: Int64, sessionID: Int64? = nil, except: Int64? = nil) {
        entries.withLockedValue { entries in
            entries = entries.filter { _, entry in
                guard entry.identity.userID == userID else { return true }
                if let sessionID { return entry.identity.sessionID != sessionID }
                if let except { return entry.identity.sessionID == except }
                return false
            }
        }
    }
}
