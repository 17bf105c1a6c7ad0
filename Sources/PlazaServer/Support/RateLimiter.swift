import Hummingbird
import Logging
import NIOConcurrencyHelpers
import PlazaAPI

/// Token-bucket rate limits per client (signed-in person, else address) and class of route.
///
/// On SQLite the buckets live in memory (one server); on PostgreSQL in the shared
/// `rate_buckets` table, one atomic upsert per check, so several app servers together allow the
/// configured rate and not a multiple of it.
public final class RateLimiter: Sendable {
    public struct Limit: Sendable {
        public var burst: Double
        public var perSecond: Double
        public init(burst: Double, perMinute: Double) {
            self.burst = burst
            self.perSecond = perMinute / 60
        }

        /// Milliseconds an empty bucket takes to fill up again.
        var refillMillis: Int64 { Int64((burst / perSecond * 1000).rounded(.up)) }
    }

    public struct Policy: Sendable {
        public var reads: Limit
        public var writes: Limit
        /// Account creation, per address.
        public var registrations: Limit
        /// Asking for a password-reset mail, per address (each account also gets at most one a
        /// minute and five an hour, whoever asks).
        public var mailings = Limit(burst: 5, perMinute: 1)

        public static let standard = Policy(
            reads: Limit(burst: 300, perMinute: 600),
            writes: Limit(burst: 60, perMinute: 120),
            registrations: Limit(burst: 10, perMinute: 1)
        )

        /// The longest time any bucket takes to refill: older buckets are as good as new.
        var longestRefillMillis: Int64 {
            max(reads.refillMillis, writes.refillMillis, registrations.refillMillis, mailings.refillMillis)
        }
    }

    let policy: Policy
    let store: any RateBucketStore

    /// In-memory buckets (at most `capacity` clients), or `store` when given.
    public convenience init(policy: Policy, capacity: Int = 100_000) {
        self.init(
            policy: policy, store: MemoryRateBuckets(capacity: capacity, staleAfterMillis: policy.longestRefillMillis))
    }

    init(policy: Policy, store: any RateBucketStore) {
        self.policy = policy
        self.store = store
    }

    /// Takes one token; returns the seconds to wait when there is none.
    func take(_ key: String, limit: Limit, now: Timestamp = .now) async throws -> Int? {
        try await store.take(key, limit: limit, now: now.milliseconds)
    }

    /// The seconds to wait if the bucket is empty now, without taking anything.
    func waitIfEmpty(_ key: String, limit: Limit, now: Timestamp = .now) async throws -> Int? {
        guard let bucket = try await store.peek(key) else { return nil }
        return bucket.refilled(limit: limit, now: now.milliseconds).wait(limit: limit)
    }
}

/// A bucket's state: tokens left when last touched.
struct RateBucket: Sendable, Equatable {
    var tokens: Double
    var updated: Int64

    func refilled(limit: RateLimiter.Limit, now: Int64) -> RateBucket {
        RateBucket(
            tokens: min(limit.burst, tokens + Double(max(0, now - updated)) / 1000 * limit.perSecond),
            updated: max(updated, now))
    }

    /// Seconds until one token is there, or nil when there is one now.
    func wait(limit: RateLimiter.Limit) -> Int? {
        tokens >= 1 ? nil : max(1, Int(((1 - tokens) / limit.perSecond).rounded(.up)))
    }
}

/// Where the buckets live.
protocol RateBucketStore: Sendable {
    /// Takes one token from `key`'s bucket; the seconds to wait when it is empty.
    func take(_ key: String, limit: RateLimiter.Limit, now: Int64) async throws -> Int?
    func peek(_ key: String) async throws -> RateBucket?
}

/// Buckets in memory, in an LRU table: a bucket that has refilled is the same as no bucket, so
/// those are dropped as requests pass; a full table pushes out the least recently used client.
final class MemoryRateBuckets: RateBucketStore {
    private let table: NIOLockedValueBox<LRUTable<RateBucket>>
    /// A bucket untouched this long is full whatever its limit (the policy's longest refill).
    private let staleAfterMillis: Int64

    init(capacity: Int, staleAfterMillis: Int64) {
        table = NIOLockedValueBox(LRUTable(capacity: capacity))
        self.staleAfterMillis = staleAfterMillis
    }

    var count: Int { table.withLockedValue { $0.count } }

    func take(_ key: String, limit: RateLimiter.Limit, now: Int64) -> Int? {
        // Only a bucket untouched for longer than any refill takes is surely full.
        let stale = max(staleAfterMillis, limit.refillMillis)
        return table.withLockedValue { table in
            table.dropStale { now - $0.updated > stale }
            return table.update(key, initial: { RateBucket(tokens: limit.burst, updated: now) }) { bucket in
                bucket = bucket.refilled(limit: limit, now: now)
                let wait = bucket.wait(limit: limit)
                if wait == nil { bucket.tokens -= 1 }
                return wait
            }
        }
    }

    func peek(_ key: String) -> RateBucket? {
        table.withLockedValue { $0.peek(key) }
    }
}

/// Where a request's tokens come from. Every request is charged to exactly one bucket of its
/// class (reads, writes): the signed-in person's, or else its address's (anonymous requests, a
/// stale session cookie, an invalid token). Sign-ups also take from the address's registration
/// bucket.
///
/// The limiter runs in two steps around authentication. `.beforeAuthentication` runs first:
/// anonymous requests pay their address's bucket; a request carrying a token or session cookie
/// is refused at once when its address's bad-credentials bucket is empty (so a flood of made-up
/// tokens from one address stops before any lookup), and pays that bucket and the address's
/// when its token turns out invalid. Anonymous traffic never empties the bad-credentials bucket,
/// so it cannot lock out the signed-in people who share its address (a school, a carrier's NAT).
/// `.afterAuthentication` charges a signed-in person's own bucket (many people behind one NAT
/// address do not share a budget), or the address's when a cookie turned out stale.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    enum Step: Sendable { case beforeAuthentication, afterAuthentication }
    let limiter: RateLimiter
    let step: Step

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let reading = request.method == .get || request.method == .head
        let limit = reading ? limiter.policy.reads : limiter.policy.writes
        let addressBucket = (reading ? "read:" : "write:") + "ip:" + context.clientKey
        let badCredentialsBucket = (reading ? "read:" : "write:") + "bad-credentials:ip:" + context.clientKey
        let credentials = request.headers[.authorization] != nil || WebSession.hasSessionCookie(request)
        switch step {
        case .beforeAuthentication:
            if request.method == .post, request.uri.path.hasSuffix("/auth/register") || request.uri.path == "/signup" {
                if let wait = try await limiter.take(
                    "register:ip:" + context.clientKey, limit: limiter.policy.registrations)
                {
                    throw PlazaError.rateLimited(retryAfter: wait)
                }
            }
            if request.method == .post,
                request.uri.path.hasSuffix("/auth/password/forgot") || request.uri.path == "/forgot-password"
            {
                if let wait = try await limiter.take("mail:ip:" + context.clientKey, limit: limiter.policy.mailings) {
                    throw PlazaError.rateLimited(retryAfter: wait)
                }
            }
            guard credentials else {
                if let wait = try await limiter.take(addressBucket, limit: limit) {
                    throw PlazaError.rateLimited(retryAfter: wait)
                }
                return try await next(request, context)
            }
            if let wait = try await limiter.waitIfEmpty(badCredentialsBucket, limit: limit) {
                throw PlazaError.rateLimited(retryAfter: wait)
            }
            do {
                return try await next(request, context)
            } catch let error as PlazaError where error.code == "invalid_token" {
                let paid = try await limiter.take(addressBucket, limit: limit)
                if let wait = try await limiter.take(badCredentialsBucket, limit: limit) ?? paid {
                    throw PlazaError.rateLimited(retryAfter: wait)
                }
                throw error
            }
        case .afterAuthentication:
            let bucket: String
            if let identity = context.identity {
                bucket = (reading ? "read:" : "write:") + "user:\(identity.userID)"
            } else if credentials {
                bucket = addressBucket
            } else {
                return try await next(request, context)  // paid before authentication
            }
            if let wait = try await limiter.take(bucket, limit: limit) {
                throw PlazaError.rateLimited(retryAfter: wait)
            }
            return try await next(request, context)
        }
    }
}
