import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlazaAPI

/// The answers to requests sent with an `Idempotency-Key`, per person, for 24 hours
/// (Migration037): a request sent again — an app retrying after the network dropped, or replaying
/// its offline queue — gets the first answer instead of doing the work twice. The database holds
/// them, so every app server sees every key.
package struct IdempotencyStore: Sendable {
    let db: Database
    /// How long a key is kept.
    static let lifetimeMillis: Int64 = 24 * 3_600_000

    /// What a key's row says about a request.
    enum Claim: Equatable {
        /// The key is new (or its first request died unanswered): this request does the work,
        /// and records or releases its answer with this claim.
        case started(claim: String)
        /// The key answered the same request: this answer, again.
        case answered(status: Int, contentType: String?, body: String)
        /// The key was used for another request.
        case reused
        /// The same request is still being answered.
        case inProgress
    }

    /// Claims `key` for the request `fingerprint` names. A first request still unanswered after
    /// `lease` milliseconds (its server stopped) gives the key up to this one; it can then
    /// neither record nor release it.
    func claim(user: Int64, key: String, fingerprint: String, lease: Int64, now: Int64 = Timestamp.now.milliseconds)
        async throws -> Claim
    {
        let claim = ByteText.hex((0..<12).map { _ in UInt8.random(in: 0...255) })
        return try await db.write { db in
            let inserted = try await db.first(
                """
                INSERT INTO idempotency_keys (user_id, idempotency_key, fingerprint, claim, status, created_at)
                VALUES (\(bind: user), \(bind: key), \(bind: fingerprint), \(bind: claim), 0, \(bind: now))
                ON CONFLICT (user_id, idempotency_key) DO NOTHING RETURNING 1 AS claimed
                """)
            if inserted != nil { return .started(claim: claim) }
            guard let row = try await db.first(Self.lookupSQL(user: user, key: key)) else { return .inProgress }
            let status = try row.decode(column: "status", as: Int.self)
            let previous = try row.decode(column: "claim", as: String.self)
            let createdAt = try row.decode(column: "created_at", as: Int64.self)
            if createdAt < now - (status == 0 ? lease : Self.lifetimeMillis) {
                // Compare-and-set on the row's claim: of two requests taking it over, one does.
                let taken = try await db.first(
                    """
                    UPDATE idempotency_keys SET fingerprint = \(bind: fingerprint), claim = \(bind: claim), status = 0,
                        content_type = NULL, body = NULL, created_at = \(bind: now)
                    WHERE user_id = \(bind: user) AND idempotency_key = \(bind: key) AND claim = \(bind: previous)
                    RETURNING 1 AS claimed
                    """)
                return taken == nil ? .inProgress : .started(claim: claim)
            }
            guard try row.decode(column: "fingerprint", as: String.self) == fingerprint else { return .reused }
            guard status != 0 else { return .inProgress }
            return .answered(
                status: status, contentType: try row.decode(column: "content_type", as: String?.self),
                body: try row.decode(column: "body", as: String?.self) ?? "")
        }
    }

    /// Keeps the answer the key's request got, if its claim still holds the key.
    func record(user: Int64, key: String, claim: String, status: Int, contentType: String?, body: String)
        async throws
    {
        try await db.write { db in
            try await db.exec(
                """
                UPDATE idempotency_keys SET status = \(bind: status), content_type = \(bind: contentType),
                    body = \(bind: body)
                WHERE user_id = \(bind: user) AND idempotency_key = \(bind: key) AND claim = \(bind: claim)
                """)
        }
    }

    /// Lets the key go, if its claim still holds it: its request failed, changed nothing, and
    /// may be sent again.
    func release(user: Int64, key: String, claim: String) async throws {
        try await db.write { db in
            try await db.exec(
                """
                DELETE FROM idempotency_keys
                WHERE user_id = \(bind: user) AND idempotency_key = \(bind: key) AND claim = \(bind: claim) AND status = 0
                """)
        }
    }

    /// Drops the keys past their 24 hours (the maintenance round).
    func prune(now: Int64) async throws {
        try await db.write { db in try await db.exec(Self.pruneSQL(now: now)) }
    }

    static func lookupSQL(user: Int64, key: String) -> SQL {
        """
        SELECT fingerprint, claim, status, content_type, body, created_at FROM idempotency_keys
        WHERE user_id = \(bind: user) AND idempotency_key = \(bind: key)
        """
    }

    static func pruneSQL(now: Int64) -> SQL {
        "DELETE FROM idempotency_keys WHERE created_at < \(bind: now - lifetimeMillis)"
    }
}

/// `Idempotency-Key` on the creating and toggling requests of a signed-in person (POST and PUT):
/// the same key with the same request within 24 hours answers the first answer again, with
/// `Idempotent-Replayed: true`, and does nothing; with another request it is a 422
/// `idempotency_key_reused`; while the first is still being answered, a 409
/// `idempotency_key_in_use` (Retry-After: 1). A request is its method, path and body; an upload's
/// body is named by its multipart boundary and length, which an app replaying the same bytes
/// keeps. Only successful answers are kept: a failed request changed nothing, and its retry runs
/// again. A success whose answer cannot be kept (no length, too large, not text) is recorded
/// with its status and no body, so a retry learns it was done without doing it again. Routes
/// whose answers carry secrets (sign-in, passwords, two-factor, invite codes, an app's client
/// secret) keep nothing; there the key is ignored. The route decides, not the path as sent.
package struct IdempotencyMiddleware: RouterMiddleware {
    package typealias Context = PlazaContext
    let store: IdempotencyStore
    /// How long a first request may go unanswered before a retry takes its key over.
    let leaseMillis: Int64
    /// Mastodon's apps send keys of any shape (Mastodon keeps them whole): those that are not 1–64
    /// printable ASCII characters are kept as their SHA-256 instead of refused.
    let acceptsAnyKey: Bool

    static let keyHeader = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!
    /// Larger answers are not kept (none of the creating requests' answers comes near).
    static let maxStoredBody = 256 * 1024

    package init(store: IdempotencyStore, leaseMillis: Int64, acceptsAnyKey: Bool = false) {
        self.store = store
        self.leaseMillis = leaseMillis
        self.acceptsAnyKey = acceptsAnyKey
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.method == .post || request.method == .put, let raw = request.headers[Self.keyHeader],
            let user = context.identity?.userID,
            !Self.carriesSecrets(context.endpointPath ?? request.uri.path)
        else { return try await next(request, context) }
        let key = acceptsAnyKey ? Self.anyKey(raw) : try Self.validKey(raw)
        var request = request
        let fingerprint = try await Self.fingerprint(&request, limit: context.bodyLimit)
        switch try await store.claim(user: user, key: key, fingerprint: fingerprint, lease: leaseMillis) {
        case .answered(let status, let contentType, let body):
            var headers: HTTPFields = [Self.replayedHeader: "true"]
            if let contentType { headers[.contentType] = contentType }
            return Response(
                status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        case .reused:
            throw PlazaError(
                .unprocessableContent, "idempotency_key_reused",
                "This Idempotency-Key was used for another request. Use a new key for each request.")
        case .inProgress:
            throw PlazaError(
                .conflict, "idempotency_key_in_use",
                "A request with this Idempotency-Key is still being answered. Try again in a moment.",
                headers: [.retryAfter: "1"])
        case .started(let claim):
            return try await answer(
                request, context: context, key: (user: user, key: key, claim: claim), next: next)
        }
    }

    /// Runs the request and keeps its answer when it succeeded; lets the key go otherwise.
    private func answer(
        _ request: Request, context: Context, key: (user: Int64, key: String, claim: String),
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            try? await store.release(user: key.user, key: key.key, claim: key.claim)
            throw error
        }
        guard (200..<300).contains(response.status.code) else {
            try? await store.release(user: key.user, key: key.key, claim: key.claim)
            return response
        }
        // Kept when it is text no larger than the limit (every creating request's answer is).
        let body = try await response.collectedBody(upTo: Self.maxStoredBody).flatMap {
            String(validating: $0.readableBytesView, as: UTF8.self)
        }
        // The work is done: a failure to record it is logged, and the answer still goes out.
        for attempt in 1...2 {
            do {
                try await store.record(
                    user: key.user, key: key.key, claim: key.claim, status: response.status.code,
                    contentType: body == nil ? nil : response.headers[.contentType], body: body ?? "")
                break
            } catch {
                context.logger.error(
                    "Could not keep an Idempotency-Key's answer (attempt \(attempt)): \(error)")
            }
        }
        return response
    }

    /// A key of any shape, for Mastodon's apps: as sent when it is a valid key, else its SHA-256.
    static func anyKey(_ raw: String) -> String {
        if let key = try? validKey(raw) { return key }
        return "sha256:" + ByteText.hex(SHA256.hash(data: Array(raw.utf8)))
    }

    /// A key: 1–64 printable ASCII characters.
    static func validKey(_ raw: String) throws -> String {
        let bytes = Array(raw.utf8)
        guard (1...64).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw PlazaError(
                .badRequest, "invalid_idempotency_key", "Idempotency-Key must be 1 to 64 printable ASCII characters.")
        }
        return raw
    }

    /// Routes whose answers carry secrets, never stored (`path`: the route's, or the request's
    /// with empty segments dropped as the router drops them).
    static func carriesSecrets(_ path: String) -> Bool {
        let path = "/" + path.split(separator: "/").joined(separator: "/")
        return ["/api/v1/auth/", "/api/v1/me/password", "/api/v1/me/two-factor"].contains { path.hasPrefix($0) }
            || path.hasSuffix("/invites") || path == "/api/v1/apps"
    }

    /// 32 hex digits of SHA-256 over the method, the path with its query, and the body (which
    /// stays in `request`), or for a multipart upload its Content-Type (with the boundary) and length.
    static func fingerprint(_ request: inout Request, limit: Int) async throws -> String {
        var hash = SHA256()
        hash.update(data: Array("\(request.method.rawValue) \(request.uri.description)\n".utf8))
        let type = request.headers[.contentType] ?? ""
        if type.lowercased().hasPrefix("multipart/") {
            hash.update(data: Array("\(type)\n\(request.headers[.contentLength] ?? "")".utf8))
        } else {
            let body = try await request.collectBody(upTo: limit)
            body.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
        }
        return ByteText.hex(hash.finalize().prefix(16))
    }

}

extension Response {
    /// The body, gathered and left in the response to be sent; nil when its length is unknown (a
    /// stream, left as it is) or larger than `limit`. The idempotency store keeps it; an ETag is
    /// made of it.
    mutating func collectedBody(upTo limit: Int) async throws -> ByteBuffer? {
        guard let length = body.contentLength, length <= limit else { return nil }
        let collector = CollectingWriter()
        try await body.write(collector)
        let bytes = collector.bytes.buffer
        body = .init(byteBuffer: bytes)
        return bytes
    }
}

/// A response body's bytes, gathered (answers to API requests are small).
struct CollectingWriter: ResponseBodyWriter {
    final class Bytes: @unchecked Sendable {
        var buffer = ByteBuffer()
    }
    let bytes = Bytes()

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        bytes.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
