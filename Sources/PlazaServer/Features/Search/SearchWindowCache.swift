import NIOConcurrencyHelpers
import PlazaAPI

/// The ranked windows of recent word searches, so that a query many people run is ranked about
/// once a second rather than on every request (the ranking reads every match's index entries;
/// the page is then only a look-up of its posts). Requests that miss at the same moment each
/// rank it; any post write on this server clears every window. Like a search engine's refresh interval, results
/// are near-real-time: a post written, edited or deleted on this server clears the cache at once;
/// on other app servers (PostgreSQL) it shows within `ttlMillis`.
///
/// A window holds every post of the ranking in order, before anyone's blocks: blocks, the cursor
/// and the page are applied per request.
final class SearchWindowCache: Sendable {
    struct Hit: Sendable, Equatable {
        var id: Int64
        var score: Double
    }

    private struct Entry {
        var hits: [Hit]
        var cachedAt: Int64
    }

    private struct State {
        var generation: UInt64 = 0
        var entries: [String: Entry] = [:]
    }

    let ttlMillis: Int64
    let capacity: Int
    private let state = NIOLockedValueBox(State())

    /// 256 windows of at most `SearchStore.rankedWindow` hits: at most about 4 MB, and far less
    /// in practice (most words match far fewer posts).
    init(ttlMillis: Int64 = 1_000, capacity: Int = 256) {
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }

    /// The cached window for `key`, or nil with the generation to hand to `put` once it is ranked.
    func get(_ key: String, now: Int64) -> (hits: [Hit]?, generation: UInt64) {
        state.withLockedValue { state in
            guard let entry = state.entries[key], now - entry.cachedAt < ttlMillis else {
                return (nil, state.generation)
            }
            return (entry.hits, state.generation)
        }
    }

    /// Keeps a window ranked at `generation`, unless a write has cleared the cache since (the
    /// window may predate that write).
    func put(_ key: String, _ hits: [Hit], generation: UInt64, now: Int64) {
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries[key] == nil, state.entries.count >= capacity {
                state.entries = state.entries.filter { now - $0.value.cachedAt < ttlMillis }
                if state.entries.count >= capacity,
                    let oldest = state.entries.min(by: { $0.value.cachedAt < $1.value.cachedAt })
                {
                    state.entries[oldest.key] = nil
                }
            }
            state.entries[key] = Entry(hits: hits, cachedAt: now)
        }
    }

    /// Forgets every window: posts were written, edited or deleted.
    func clear() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries.removeAll(keepingCapacity: true)
        }
    }
}
