import PlazaAPI
import SQLKit

/// `Idempotency-Key`s of new posts (Mastodon apps send one with each status): the post a key
/// already made is answered again instead of posting twice. Kept an hour, as Mastodon does; the
/// maintenance service drops older ones (`AccountStore.deleteIdleSessions`).
extension PostStore {
    static let idempotencyMillis: Int64 = 3_600_000

    /// The post `user`'s `key` made within the hour, if any.
    package func idempotentPost(key: String, user: Int64) async throws -> Int64? {
        let since = Timestamp.now.milliseconds - Self.idempotencyMillis
        return try await db.read { db in
            try await db.first(
                """
                SELECT status_id FROM mastodon_idempotency
                WHERE user_id = \(bind: user) AND idempotency_key = \(bind: key) AND created_at > \(bind: since)
                """)
        }.map { try $0.decode(column: "status_id", as: Int64.self) }
    }

    /// Keeps the post `user`'s `key` made.
    package func rememberIdempotent(key: String, user: Int64, post: Int64) async throws {
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            try await db.exec(
                """
                INSERT INTO mastodon_idempotency (user_id, idempotency_key, status_id, created_at)
                VALUES (\(bind: user), \(bind: key), \(bind: post), \(bind: now))
                ON CONFLICT (user_id, idempotency_key) DO UPDATE SET status_id = excluded.status_id, created_at = excluded.created_at
                """)
        }
    }

    /// The creation time of the post `id` (a cursor's time), nil when it is gone.
    package func creationTime(of id: Int64) async throws -> Int64? {
        try await db.read { db in
            try await db.first("SELECT created_at FROM posts WHERE id = \(bind: id)")
        }.map { try $0.decode(column: "created_at", as: Int64.self) }
    }
}
