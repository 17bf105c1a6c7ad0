import Foundation
import PlazaAPI

/// The `link_previews` table: one row per URL, which is both the fetch queue (with retries)
/// and the result that every post and saved item showing the URL copies when it is ready.
struct LinkPreviewStore: Sendable {
    let db: Database

    /// A preview as the rows that show it store it. `state` is `pending`, `ready` or `failed`.
    struct Preview: Sendable, Equatable {
        var state: String
        var title: String?
        var description: String?
        var imageURL: String?
        var siteName: String?
        var fetchedAt: Int64?

        static let pending = Preview(state: "pending")

        /// The fallback when no preview can be made: the page's domain (the URL is shown anyway).
        static func failed(url: String, at time: Int64) -> Preview {
            Preview(state: "failed", siteName: URLComponents(string: url)?.host, fetchedAt: time)
        }
    }

    /// A ready preview is reused this long before a new save fetches it again.
    static let readyReuseMillis: Int64 = 7 * 86_400_000
    /// A failed one, this long.
    static let failedReuseMillis: Int64 = 3_600_000

    /// Asks for the preview of `url` inside the saving transaction: a known, recent result is
    /// returned to be copied at once; otherwise the URL is queued (again) and `pending` returned.
    /// On PostgreSQL the row stays locked until the saving transaction commits, so a worker
    /// finishing the URL meanwhile waits, then sees (and fills in) the new post or item.
    /// Every fetch queued counts against the person's `cap` of fetches a day (429
    /// `daily_link_preview_limit` past it, and nothing is saved); a known URL costs nothing.
    static func request(_ url: String, by user: Int64, now: Int64, cap: Int, on db: Connection) async throws -> Preview
    {
        let inserted = try await db.first(
            """
            INSERT INTO link_previews (url, state, next_attempt_at, requested_by, created_at)
            VALUES (\(bind: url), 'pending', \(bind: now), \(bind: user), \(bind: now)) ON CONFLICT (url) DO NOTHING RETURNING url
            """)
        if inserted != nil {
            try await DailyUsage.charge(.linkPreview, user: user, cap: cap, now: now, on: db)
            return .pending
        }
        let lock = db.dialect.rowLock(.update) ?? ""
        guard
            let row = try await db.first(
                "SELECT state, title, description, image_url, site_name, fetched_at FROM link_previews WHERE url = \(bind: url)\(lock)"
            )
        else { return .pending }
        let state = try row.decode(column: "state", as: String.self)
        if state == "pending" { return .pending }
        let fetchedAt = try row.decode(column: "fetched_at", as: Int64?.self) ?? 0
        if now - fetchedAt < (state == "ready" ? readyReuseMillis : failedReuseMillis) {
            return Preview(
                state: state, title: try row.decode(column: "title", as: String?.self),
                description: try row.decode(column: "description", as: String?.self),
                imageURL: try row.decode(column: "image_url", as: String?.self),
                siteName: try row.decode(column: "site_name", as: String?.self),
                fetchedAt: fetchedAt)
        }
        try await DailyUsage.charge(.linkPreview, user: user, cap: cap, now: now, on: db)
        try await db.exec(
            """
            UPDATE link_previews SET state = 'pending', attempts = 0, next_attempt_at = \(bind: now), requested_by = \(bind: user)
            WHERE url = \(bind: url)
            """)
        return .pending
    }

    /// The ready preview of `url`, if one was fetched (read only: nothing is queued or charged).
    func known(_ url: String) async throws -> LinkPreview? {
        guard
            let row = try await db.read({ db in
                try await db.first(
                    """
                    SELECT title, description, image_url, site_name, fetched_at FROM link_previews
                    WHERE url = \(bind: url) AND state = 'ready'
                    """)
            })
        else { return nil }
        return LinkPreview(
            url: url, title: try row.decode(column: "title", as: String?.self),
            description: try row.decode(column: "description", as: String?.self),
            imageURL: try row.decode(column: "image_url", as: String?.self),
            siteName: try row.decode(column: "site_name", as: String?.self),
            fetchedAt: try row.decode(column: "fetched_at", as: Int64?.self).map(Timestamp.init(milliseconds:)))
    }

    /// A URL taken off the queue by a worker.
    struct Job: Sendable {
        var url: String
        var requestedBy: Int64
        /// Attempts before this one.
        var attempts: Int
    }

    /// Takes up to `limit` due URLs, leasing each for `leaseMillis` so that another worker (or
    /// another app server: PostgreSQL skips the rows one is taking) does not fetch it at the same
    /// time. The attempt is counted here, so a URL that brings the server down is not retried
    /// for ever.
    func claimDue(now: Int64, limit: Int, leaseMillis: Int64) async throws -> [Job] {
        let skipLocked = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        let rows = try await db.write(
            """
            UPDATE link_previews SET next_attempt_at = \(bind: now + leaseMillis), attempts = attempts + 1
            WHERE url IN (SELECT url FROM link_previews WHERE state = 'pending' AND next_attempt_at <= \(bind: now)
                ORDER BY next_attempt_at LIMIT \(bind: limit)\(skipLocked))
            RETURNING url, requested_by, attempts
            """)
        return try rows.map {
            Job(
                url: try $0.decode(column: "url", as: String.self),
                requestedBy: try $0.decode(column: "requested_by", as: Int64.self),
                attempts: try $0.decode(column: "attempts", as: Int.self) - 1)
        }
    }

    /// Records a preview made without fetching the page (the demo world's, from pages kept in
    /// Plaza), before anything shows the URL: a post or save of it then copies this one, and
    /// nothing is queued. A URL already known keeps what it has.
    func record(_ url: String, _ preview: Preview, requestedBy user: Int64) async throws {
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            try await db.exec(
                """
                INSERT INTO link_previews (url, state, next_attempt_at, requested_by, created_at, title, description,
                    image_url, site_name, fetched_at)
                VALUES (\(bind: url), \(bind: preview.state), \(bind: now), \(bind: user), \(bind: now), \(bind: preview.title),
                    \(bind: preview.description), \(bind: preview.imageURL), \(bind: preview.siteName), \(bind: preview.fetchedAt))
                ON CONFLICT (url) DO NOTHING
                """)
        }
    }

    /// Records the outcome and copies it onto every post and saved item waiting for the URL.
    func finish(_ url: String, with preview: Preview, error: String? = nil) async throws {
        try await db.write { db in
            try await db.exec(
                """
                UPDATE link_previews SET state = \(bind: preview.state), title = \(bind: preview.title), description = \(bind: preview.description),
                    image_url = \(bind: preview.imageURL), site_name = \(bind: preview.siteName), fetched_at = \(bind: preview.fetchedAt),
                    error = \(bind: error)
                WHERE url = \(bind: url)
                """)
            try await db.exec(
                """
                UPDATE collection_items SET link_state = \(bind: preview.state), link_title = \(bind: preview.title),
                    link_description = \(bind: preview.description), link_image_url = \(bind: preview.imageURL),
                    link_site_name = \(bind: preview.siteName), link_fetched_at = \(bind: preview.fetchedAt)
                WHERE url = \(bind: url) AND link_state = 'pending'
                """)
            try await db.exec(
                """
                UPDATE posts SET link_title = \(bind: preview.title), link_description = \(bind: preview.description),
                    link_image_url = \(bind: preview.imageURL), link_site_name = \(bind: preview.siteName), link_fetched_at = \(bind: preview.fetchedAt)
                WHERE link_url = \(bind: url) AND link_url IS NOT NULL AND link_fetched_at IS NULL
                """)
        }
    }

    /// Puts the URL back in the queue after a failure that may pass.
    func retry(_ url: String, at time: Int64, error: String) async throws {
        try await db.write(
            "UPDATE link_previews SET next_attempt_at = \(bind: time), error = \(bind: error) WHERE url = \(bind: url)")
    }

    /// The state of a URL's preview and its last error, for tests and operators.
    func status(_ url: String) async throws -> (state: String, attempts: Int, error: String?)? {
        guard
            let row = try await db.read({ db in
                try await db.first("SELECT state, attempts, error FROM link_previews WHERE url = \(bind: url)")
            })
        else { return nil }
        return (
            try row.decode(column: "state", as: String.self), try row.decode(column: "attempts", as: Int.self),
            try row.decode(column: "error", as: String?.self)
        )
    }
}
