import Hummingbird
import NIOConcurrencyHelpers
import PlazaAPI

/// Token-bucket rate limits per client (signed-in user, else address) and class of route.
/// Kept in memory per app server; with several servers each enforces its own share.
public final class RateLimiter: Sendable {
    public struct Limit: Sendable {
        public var burst: Double
        public var perSecond: Double
        public init(burst: Double, perMinute: Double) {
            self.burst = burst
            self.perSecond = perMinute / 60
        }
    }

    public struct Policy: Sendable {
        public var reads: Limit
        public var writes: Limit
        /// Account creation, per address.
        public var registrations: Limit

        public static let standard = Policy(
            reads: Limit(burst: 300, perMinute: 600),
            writes: Limit(burst: 60, perMinute: 120),
            registrations: Limit(burst: 10, perMinute: 1)
        )
    }

    struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    let policy: Policy
    private let buckets = NIOLockedValueBox([String: Bucket]())

    public init(policy: Policy) { self.policy = policy }

    /// Takes one token; returns the seconds to wait when there is none.
    func take(_ key: String, limit: Limit, now: Timestamp = .now) -> Int? {
        let ms = now.milliseconds
        return buckets.withLockedValue { buckets in
            if buckets.count > 100_000 { buckets = buckets.filter { ms - $0.value.updated < 600_000 } }
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: ms)
            bucket.tokens = min(limit.burst, bucket.tokens + Double(ms - bucket.updated) / 1000 * limit.perSecond)
            bucket.updated = ms
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return Int(((1 - bucket.tokens) / limit.perSecond).rounded(.up))
        }
    }
}

struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = PlazaContext
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let client = context.identity.map { "u\($0.userID)" } ?? "ip\(context.remoteAddress)"
        let (bucket, limit): (String, RateLimiter.Limit) =
            if request.method == .post, request.uri.path.hasSuffix("/auth/register") || request.uri.path == "/signup" {
                ("register:ip\(context.remoteAddress)", limiter.policy.registrations)
            } else if request.method == .get || request.method == .head {
                ("read:\(client)", limiter.policy.reads)
            } else {
                ("write:\(client)", limiter.policy.writes)
            }
        if let wait = limiter.take(bucket, limit: limit) {
            throw PlazaError.rateLimited(retryAfter: wait)
        }
        return try await next(request, context)
    }
}
