import Foundation
import Logging
import NIOConcurrencyHelpers
import PlazaAPI

/// Slows down password guessing (sign-in, and every check of a signed-in person's current
/// password) without letting one attacker lock anyone out.
///
/// It follows OWASP's device-cookie design. A client that signed in to an account before holds a
/// signed device token for it (`DeviceTokens`); such a trusted device has its own small failure
/// budget and is not refused because of anyone else's failures. Every other client is untrusted
/// and is counted three ways, each with its own budget in a window:
/// - per account and address (5): one address guessing one account;
/// - per address (30): one address trying many accounts (credential stuffing);
/// - per account over all addresses (20): guessing spread over many addresses. One address
///   cannot reach it alone (its own lockouts hold it to about 9 failures in a window), so a
///   lockout here means a distributed attack, and it refuses untrusted clients only.
/// Past a budget, each further attempt waits a lockout that doubles from `baseLockout` up to
/// `maxLockout`; nothing locks for good, and an entry resets when its window passes. A success
/// clears the succeeding client's own entries. The account is its id when it exists, else the
/// normalised login, so a username and an email address count as one account.
///
/// On SQLite the entries live in memory; on PostgreSQL in the shared `login_throttle` table, so
/// the budgets hold across app servers.
public final class LoginThrottle: Sendable {
    public struct Policy: Sendable {
        /// Failures from one address on one account.
        public var freeFailuresPerAccount: Int
        /// Failures from one address over all accounts.
        public var freeFailuresPerAddress: Int
        /// Failures on one account from untrusted clients anywhere.
        public var freeFailuresPerAccountAllAddresses: Int
        /// Failures from one trusted device.
        public var freeFailuresPerDevice: Int
        public var windowSeconds: Int64
        public var baseLockoutSeconds: Int64
        public var maxLockoutSeconds: Int64

        public init(
            freeFailuresPerAccount: Int, freeFailuresPerAddress: Int, freeFailuresPerAccountAllAddresses: Int = 20,
            freeFailuresPerDevice: Int = 5,
            windowSeconds: Int64, baseLockoutSeconds: Int64, maxLockoutSeconds: Int64
        ) {
            self.freeFailuresPerAccount = freeFailuresPerAccount
            self.freeFailuresPerAddress = freeFailuresPerAddress
            self.freeFailuresPerAccountAllAddresses = freeFailuresPerAccountAllAddresses
            self.freeFailuresPerDevice = freeFailuresPerDevice
            self.windowSeconds = windowSeconds
            self.baseLockoutSeconds = baseLockoutSeconds
            self.maxLockoutSeconds = maxLockoutSeconds
        }

        public static let standard = Policy(
            freeFailuresPerAccount: 5, freeFailuresPerAddress: 30, freeFailuresPerAccountAllAddresses: 20,
            freeFailuresPerDevice: 5,
            windowSeconds: 900, baseLockoutSeconds: 30, maxLockoutSeconds: 900)

        /// An entry untouched this long has no effect any more.
        var staleAfterMillis: Int64 { (windowSeconds + maxLockoutSeconds) * 1000 }
    }

    /// Who is trying: a device that signed in to this account before, or anyone else from an address.
    enum Client: Sendable, Equatable {
        case trustedDevice(String)
        case untrusted(address: String)
    }

    let policy: Policy
    let store: any ThrottleStore

    /// Entries in memory (at most `capacity`), or `store` when given.
    public convenience init(policy: Policy, capacity: Int = 100_000) {
        self.init(
            policy: policy, store: MemoryThrottleEntries(capacity: capacity, staleAfterMillis: policy.staleAfterMillis))
    }

    init(policy: Policy, store: any ThrottleStore) {
        self.policy = policy
        self.store = store
    }

    /// The normalised account key: the account's id when it exists, else the login as typed
    /// (trimmed, lower-cased), so unknown logins are throttled exactly like known ones.
    static func account(id: Int64?, login: String) -> String {
        id.map { "id:\($0)" } ?? "login:" + login.trimmingCharacters(in: .whitespaces).lowercased()
    }

    private func budgets(account: String, client: Client) -> [ThrottleKey] {
        switch client {
        case .trustedDevice(let device):
            return [ThrottleKey(key: "dev:" + device, free: policy.freeFailuresPerDevice)]
        case .untrusted(let address):
            return [
                ThrottleKey(key: "acct:" + account, free: policy.freeFailuresPerAccountAllAddresses),
                ThrottleKey(key: "pair:" + account + "|" + address, free: policy.freeFailuresPerAccount),
                ThrottleKey(key: "addr:" + address, free: policy.freeFailuresPerAddress),
            ]
        }
    }

    /// Seconds to wait before `client` may try `account` again, or nil if it may try now.
    func retryAfter(account: String, client: Client, now: Timestamp = .now) async throws -> Int? {
        let keys = budgets(account: account, client: client).map(\.key)
        guard let until = try await store.lockedUntil(keys, now: now.milliseconds), until > now.milliseconds else {
            return nil
        }
        return Int((until - now.milliseconds + 999) / 1000)
    }

    func recordFailure(account: String, client: Client, now: Timestamp = .now) async throws {
        try await store.recordFailure(budgets(account: account, client: client), policy: policy, now: now.milliseconds)
    }

    /// Clears what the succeeding client itself ran up: its device's entry, or its address's
    /// entry for this account. The account-wide and per-address counts of a wider attack stay.
    func recordSuccess(account: String, client: Client) async throws {
        let keys = budgets(account: account, client: client).map(\.key).filter {
            $0.hasPrefix("dev:") || $0.hasPrefix("pair:")
        }
        try await store.remove(keys)
    }
}

/// One budget a failure counts against.
struct ThrottleKey: Sendable, Equatable {
    var key: String
    var free: Int
}

/// One throttle entry: failures in the current window, and the lockout they earned.
struct ThrottleEntry: Sendable, Equatable {
    var failures: Int64
    var windowStart: Int64
    var lockedUntil: Int64

    /// The entry after one more failure. `PostgresLimitStore.recordFailure` is the same rule in SQL.
    func failing(free: Int, policy: LoginThrottle.Policy, now: Int64) -> ThrottleEntry {
        var entry = self
        if now - entry.windowStart >= policy.windowSeconds * 1000, entry.lockedUntil <= now {
            entry = ThrottleEntry(failures: 0, windowStart: now, lockedUntil: 0)
        }
        entry.failures += 1
        if entry.failures >= Int64(free) {
            let doublings = min(entry.failures - Int64(free), 20)
            let lockout = min(policy.baseLockoutSeconds << doublings, policy.maxLockoutSeconds)
            entry.lockedUntil = now + lockout * 1000
            entry.windowStart = now
        }
        return entry
    }
}

/// Where the throttle's entries live.
protocol ThrottleStore: Sendable {
    /// The latest lockout among `keys`, if any.
    func lockedUntil(_ keys: [String], now: Int64) async throws -> Int64?
    func recordFailure(_ keys: [ThrottleKey], policy: LoginThrottle.Policy, now: Int64) async throws
    func remove(_ keys: [String]) async throws
}

/// Entries in memory, in an LRU table; entries past their window and lockout are dropped as
/// attempts pass, and a full table pushes out the least recently touched entry.
final class MemoryThrottleEntries: ThrottleStore {
    private let table: NIOLockedValueBox<LRUTable<ThrottleEntry>>
    private let staleAfterMillis: Int64

    init(capacity: Int, staleAfterMillis: Int64) {
        table = NIOLockedValueBox(LRUTable(capacity: capacity))
        self.staleAfterMillis = staleAfterMillis
    }

    var count: Int { table.withLockedValue { $0.count } }

    func lockedUntil(_ keys: [String], now: Int64) -> Int64? {
        table.withLockedValue { table in keys.compactMap { table.peek($0)?.lockedUntil }.max() }
    }

    func recordFailure(_ keys: [ThrottleKey], policy: LoginThrottle.Policy, now: Int64) {
        table.withLockedValue { table in
            // Entries are touched in time order, so the least recent is the first to go stale.
            table.dropStale { now - max($0.windowStart, $0.lockedUntil) > staleAfterMillis }
            for budget in keys {
                table.update(budget.key, initial: { ThrottleEntry(failures: 0, windowStart: now, lockedUntil: 0) }) {
                    entry in
                    entry = entry.failing(free: budget.free, policy: policy, now: now)
                }
            }
        }
    }

    func remove(_ keys: [String]) {
        table.withLockedValue { table in
            for key in keys { table.removeValue(forKey: key) }
        }
    }
}
