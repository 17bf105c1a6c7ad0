import HTTPTypes
import PlazaAPI

/// What one person's media and link previews may cost. 0 turns a limit off.
///
/// The defaults suit a small community: 1 GiB holds about 1,000–3,000 photos as stored
/// (original re-encoded at most 4096 px, plus medium and thumbnail), and 100 people at the quota
/// stay within one ordinary disk; 200 uploads a day is a busy day of photo posts (50 posts of
/// four photos) while capping a script at 200 × the upload size limit; 500 link previews a day
/// (new URLs in posts and saved items; known URLs fetch nothing) is far above what a person
/// shares, and bounds the pages and images one account can make the server fetch.
public struct Quotas: Sendable {
    /// Bytes of stored media (every variant, link-preview images included) per person.
    public var storageBytes: Int64 = 1 << 30
    /// Uploads per person per UTC day.
    public var uploadsPerDay = 200
    /// Link-preview fetches per person per UTC day.
    public var linkPreviewsPerDay = 500
    public init() {}

    static let storageExceeded = PlazaError(
        .contentTooLarge, "storage_quota_exceeded",
        "Your media would exceed your storage quota. Remove old uploads or posts with photos first.",
        field: "file")
}

/// Per person and UTC day counts of costly actions (`daily_usage`), for the daily caps.
enum DailyUsage {
    enum Kind: String, Sendable {
        case upload
        case linkPreview = "link_preview"
        case report

        var code: String {
            switch self {
            case .upload: "daily_upload_limit"
            case .linkPreview: "daily_link_preview_limit"
            case .report: "daily_report_limit"
            }
        }
        var message: String {
            switch self {
            case .upload: "You have reached today's upload limit. Try again tomorrow (UTC)."
            case .linkPreview: "You have reached today's limit of new links to preview. Try again tomorrow (UTC)."
            case .report: "You have sent today's most reports. Try again tomorrow (UTC)."
            }
        }
    }

    static let dayMillis: Int64 = 86_400_000

    /// Counts one `kind` for `user` today, in the caller's transaction; 429 with `Retry-After`
    /// (the seconds to the next UTC midnight) when today's count is already `cap`. A cap of 0
    /// is no limit (nothing is counted).
    static func charge(_ kind: Kind, user: Int64, cap: Int, now: Int64 = Timestamp.now.milliseconds, on db: Connection)
        async throws
    {
        guard cap > 0 else { return }
        let day = now / dayMillis
        let counted = try await db.first(
            """
            INSERT INTO daily_usage (user_id, kind, day, count) VALUES (\(bind: user), \(bind: kind.rawValue), \(bind: day), 1)
            ON CONFLICT (user_id, kind, day) DO UPDATE SET count = daily_usage.count + 1 WHERE daily_usage.count < \(bind: cap)
            RETURNING count
            """)
        guard counted == nil else { return }
        let wait = Int(((day + 1) * dayMillis - now + 999) / 1000)
        throw PlazaError(.tooManyRequests, kind.code, kind.message, headers: [.retryAfter: String(max(1, wait))])
    }

    /// Forgets the counts of days before yesterday.
    static func prune(now: Int64, on db: Database) async throws {
        try await db.write("DELETE FROM daily_usage WHERE day < \(bind: now / dayMillis - 1)")
    }
}
