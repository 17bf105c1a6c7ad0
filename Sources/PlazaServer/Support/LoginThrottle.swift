import NIOConcurrencyHelpers
import PlazaAPI

/// Slows down password guessing per account and per client address, without ever locking
/// anyone out for good: after `freeFailures` failures within `window`, each further attempt
/// must wait a lockout that doubles from `baseLockout` up to `maxLockout`; it all resets when
/// the window passes or the account signs in.
public final class LoginThrottle: Sendable {
    public struct Policy: Sendable {
        public var freeFailuresPerAccount: Int
        public var freeFailuresPerAddress: Int
        public var windowSeconds: Int64
        public var baseLockoutSeconds: Int64
        public var maxLockoutSeconds: Int64

        public static let standard = Policy(
            freeFailuresPerAccount: 5, freeFailuresPerAddress: 30, windowSeconds: 900, baseLockoutSeconds: 30, maxLockoutSeconds: 900)
    }

    struct Entry {
        var failures: Int
        var windowStart: Int64
        var lockedUntil: Int64
    }

    let policy: Policy
    private let entries = NIOLockedValueBox([String: Entry]())

    public init(policy: Policy) { self.policy = policy }

    /// Seconds to wait before `account` may try again from `address`, or nil if it may try now.
    func retryAfter(account: String, address: String, now: Timestamp = .now) -> Int? {
        entries.withLockedValue { entries in
            let wait = [Self.accountKey(account), Self.addressKey(address)].compactMap { key -> Int64? in
                guard let entry = entries[key], entry.lockedUntil > now.milliseconds else { return nil }
                return entry.lockedUntil - now.milliseconds
            }.max()
            return wait.map { Int(($0 + 999) / 1000) }
        }
    }

    func recordFailure(account: String, address: String, now: Timestamp = .now) {
        let ms = now.milliseconds
        entries.withLockedValue { entries in
            if entries.count > 50_000 { entries = entries.filter { ms - $0.value.windowStart < policy.windowSeconds * 1000 } }
            for (key, free) in [(Self.accountKey(account), policy.freeFailuresPerAccount), (Self.addressKey(address), policy.freeFailuresPerAddress)] {
                var entry = entries[key] ?? Entry(failures: 0, windowStart: ms, lockedUntil: 0)
                if ms - entry.windowStart >= policy.windowSeconds * 1000, entry.lockedUntil <= ms {
                    entry = Entry(failures: 0, windowStart: ms, lockedUntil: 0)
                }
                entry.failures += 1
                if entry.failures >= free {
                    let doublings = min(entry.failures - free, 20)
                    let lockout = min(policy.baseLockoutSeconds << doublings, policy.maxLockoutSeconds)
                    entry.lockedUntil = ms + lockout * 1000
                    entry.windowStart = ms
                }
                entries[key] = entry
            }
        }
    }

    func recordSuccess(account: String) {
        _ = entries.withLockedValue { $0.removeValue(forKey: Self.accountKey(account)) }
    }

    private static func accountKey(_ account: String) -> String { "a:" + account.lowercased() }
    private static func addressKey(_ address: String) -> String { "i:" + address }
}
