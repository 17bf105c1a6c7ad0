/// A string-keyed table of at most `capacity` entries in least-recently-used order, for the
/// rate limiter's buckets and the sign-in throttle's entries. Every operation is O(1): a
/// dictionary finds a slot; the slots form a doubly linked list (most recent at the head), so the
/// least recently used entry is always at hand and nothing ever scans the table.
///
/// Entries that no longer matter (a refilled bucket, an expired throttle entry) are dropped from
/// the cold end as requests pass (`dropStale`); only when the table is full of live entries does
/// an insert push out the least recently used one.
struct LRUTable<Value: Sendable>: Sendable {
    private struct Slot {
        var key: String
        var value: Value
        var newer: Int
        var older: Int
    }

    let capacity: Int
    private var index: [String: Int] = [:]
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    /// Most and least recently used slots; -1 when empty.
    private var newest = -1
    private var oldest = -1
    /// Live entries pushed out because the table was full (an operator sees it in the log).
    private(set) var evictions = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        index.reserveCapacity(min(self.capacity, 1024))
    }

    var count: Int { index.count }

    /// The value for `key`, without changing its recency.
    func peek(_ key: String) -> Value? {
        index[key].map { slots[$0].value }
    }

    /// The value for `key`, marked most recently used.
    mutating func get(_ key: String) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return slots[slot].value
    }

    /// Runs `body` on `key`'s value (or `initial` when there is none), stored back as the most
    /// recently used entry: one hash lookup when the key is there.
    mutating func update<R>(_ key: String, initial: () -> Value, _ body: (inout Value) -> R) -> R {
        if let slot = index[key] {
            moveToFront(slot)
            return body(&slots[slot].value)
        }
        var value = initial()
        let result = body(&value)
        set(key, value)
        return result
    }

    /// Stores `value` for `key` as the most recently used entry, pushing out the least recently
    /// used one when the table is full.
    mutating func set(_ key: String, _ value: Value) {
        if let slot = index[key] {
            slots[slot].value = value
            moveToFront(slot)
            return
        }
        if index.count >= capacity, oldest >= 0 {
            evictions += 1
            remove(slot: oldest)
        }
        let slot: Int
        let fresh = Slot(key: key, value: value, newer: -1, older: newest)
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = fresh
        } else {
            slot = slots.count
            slots.append(fresh)
        }
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        index[key] = slot
    }

    @discardableResult
    mutating func removeValue(forKey key: String) -> Value? {
        guard let slot = index[key] else { return nil }
        let value = slots[slot].value
        remove(slot: slot)
        return value
    }

    /// Drops up to `limit` entries from the least recently used end while `isStale` says they no
    /// longer matter. Called on every request with a small limit, so the work per request is constant.
    mutating func dropStale(limit: Int = 2, _ isStale: (Value) -> Bool) {
        var dropped = 0
        while dropped < limit, oldest >= 0, isStale(slots[oldest].value) {
            remove(slot: oldest)
            dropped += 1
        }
    }

    /// The keys from most to least recently used (for tests).
    var keysByRecency: [String] {
        var keys: [String] = []
        var slot = newest
        while slot >= 0 {
            keys.append(slots[slot].key)
            slot = slots[slot].older
        }
        return keys
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        slots[slot].older = newest
        slots[slot].newer = -1
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
    }

    private mutating func remove(slot: Int) {
        unlink(slot)
        index[slots[slot].key] = nil
        slots[slot].key = ""
        freeSlots.append(slot)
    }
}
