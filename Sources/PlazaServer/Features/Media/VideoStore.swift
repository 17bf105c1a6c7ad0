import PlazaAPI

/// The queue of videos to transcode: the `media` rows in state `processing`, claimed by one
/// worker at a time with a lease, and what their end changes: the media row, the line of the
/// post that shows it, and, when the post's last video is ready, the post's publication.
struct VideoStore: Sendable {
    let db: Database
    let events: EventLog
    let ids: IDGenerator
    /// Cleared when a post is published (searches may find it now).
    let searchWindows: SearchWindowCache

    /// A claim that failed this often (its worker died each time) gives the video up.
    static let maxAttempts = 3

    struct Job: Sendable {
        var id: Int64
        var owner: Int64
        var probe: VideoProbe
        var attempts: Int
    }

    /// Claims the oldest processing video that no live worker holds, for `leaseMillis`.
    func claim(now: Int64, leaseMillis: Int64) async throws -> Job? {
        let skipLocked = db.dialect.rowLock(.update, skipLocked: true) ?? ""
        let row = try await db.write(
            """
            UPDATE media SET lease_until = \(bind: now + leaseMillis), attempts = attempts + 1, progress = 0
            WHERE id IN (\(Self.queueSQL(now: now))\(skipLocked))
            RETURNING id, owner_id, width, height, duration_ms, attempts
            """
        ).first
        guard let row else { return nil }
        return Job(
            id: try row.decode(column: "id", as: Int64.self), owner: try row.decode(column: "owner_id", as: Int64.self),
            probe: VideoProbe(
                width: try row.decode(column: "width", as: Int.self),
                height: try row.decode(column: "height", as: Int.self),
                durationMillis: try row.decode(column: "duration_ms", as: Int64?.self) ?? 0, hasAudio: true),
            attempts: try row.decode(column: "attempts", as: Int.self))
    }

    /// The next video no live worker holds (`media_processing`).
    static func queueSQL(now: Int64) -> SQL {
        """
        SELECT id FROM media WHERE state = 'processing' AND (lease_until IS NULL OR lease_until < \(bind: now))
        ORDER BY created_at LIMIT 1
        """
    }

    /// Records how far the transcoding is; the lease is extended with it.
    func progress(_ id: Int64, percent: Int, leaseUntil: Int64) async throws {
        try await db.write { db in
            try await db.exec(
                """
                UPDATE media SET progress = \(bind: percent), lease_until = \(bind: leaseUntil)
                WHERE id = \(bind: id) AND state = 'processing'
                """)
        }
    }

    /// The outcome of a finished job.
    enum Ending: Sendable, Equatable {
        /// The video is ready (or failed); `published` when its post appeared with it.
        case ended(published: Bool)
        /// The upload was deleted meanwhile (its post deleted, or never used): the files go.
        case gone
    }

    /// Marks the video ready, its size changed by `bytesChange` (the transcoded file replaces the
    /// upload in the owner's storage), rewrites its post's line, and publishes the post when no other of its
    /// videos is processing: its mentions are notified and its event appended then. The people
    /// to notify are locked before the media row, in the order post creation locks them.
    func finish(_ id: Int64, bytesChange: Int64) async throws -> Ending {
        try await end(id, state: .ready, failure: nil, bytesChange: bytesChange)
    }

    /// Marks the video failed (`reason` for its owner), its size changed by `bytesChange` (the
    /// upload is deleted); its post stays its author's alone.
    func fail(_ id: Int64, reason: String, bytesChange: Int64) async throws -> Ending {
        try await end(id, state: .failed, failure: String(reason.prefix(500)), bytesChange: bytesChange)
    }

    /// Whether `job`'s claim is still the latest (no other worker took the video over after
    /// this one's lease ran out), so its file may be stored.
    func holds(_ job: Job) async throws -> Bool {
        try await db.read { db in
            try await db.first(
                """
                SELECT id FROM media WHERE id = \(bind: job.id) AND state = 'processing' AND attempts = \(bind: job.attempts)
                """)
        } != nil
    }

    private func end(_ id: Int64, state: MediaState, failure: String?, bytesChange: Int64?) async throws -> Ending {
        // A post claiming the video while this runs changes its post: then read it again.
        for _ in 0..<3 {
            let ending = try await events.write { [ids] db -> Ending? in
                guard let video = try await db.first("SELECT owner_id, post_id FROM media WHERE id = \(bind: id)")
                else {
                    return .gone
                }
                let owner = try video.decode(column: "owner_id", as: Int64.self)
                let postID = try video.decode(column: "post_id", as: Int64?.self)
                // The lock order of the house (PostStore.delete): the post, then people (the
                // owner, who is its author, and those it mentions), then the media row.
                let lock = db.dialect.rowLock(.noKeyUpdate) ?? ""
                var post: Row?
                if let postID {
                    post = try await db.first(
                        "SELECT title, body, media, processing FROM posts WHERE id = \(bind: postID)\(lock)")
                }
                var mentioned: [Int64] = []
                if let post, state == .ready {
                    mentioned = try await NotificationStore.users(
                        named: Mentions.usernames(
                            in: try post.decode(column: "title", as: String?.self),
                            try post.decode(column: "body", as: String?.self)),
                        on: db)
                }
                try await PeopleStore.lockInOrder([owner] + mentioned, on: db)
                let size: SQL = bytesChange.map { ", bytes = bytes + \(bind: $0)" } ?? ""
                let samePost: SQL = postID.map { "post_id = \(bind: $0)" } ?? "post_id IS NULL"
                guard
                    let row = try await db.first(
                        """
                        UPDATE media SET state = \(bind: state.rawValue), progress = NULL, lease_until = NULL,
                            failure = \(bind: failure)\(size)
                        WHERE id = \(bind: id) AND state = 'processing' AND \(samePost)
                        RETURNING \(MediaRecord.columns)
                        """)
                else {
                    // Deleted; ended by another worker (whose lease this one outlived); or claimed
                    // by a post meanwhile (then again).
                    guard let now = try await db.first("SELECT state FROM media WHERE id = \(bind: id)") else {
                        return .gone
                    }
                    return try now.decode(column: "state", as: String.self) == "processing"
                        ? nil : .ended(published: false)
                }
                let record = try MediaRecord(row: row)
                guard let postID, let post else { return .ended(published: false) }
                let published = try await Self.replace(
                    record, inPost: postID, post, author: owner, mentioned: mentioned, ids: ids, on: db)
                return .ended(published: published)
            }
            if let ending {
                if ending == .ended(published: true) { searchWindows.clear() }
                return ending
            }
        }
        throw PlazaError(.conflict, "video_busy", "The video's post kept changing while it was being finished.")
    }

    /// The post's copy of the video becomes `record`; the post is published (announced to its
    /// readers, its mentions notified) when this was the last of its media being processed.
    private static func replace(
        _ record: MediaRecord, inPost postID: Int64, _ post: Row, author: Int64, mentioned: [Int64],
        ids: IDGenerator, on db: Connection
    ) async throws -> Bool {
        let media = MediaRecord.list(try post.decode(column: "media", as: String?.self)).map {
            $0.id == record.id ? record : $0
        }
        let processing = PostStore.isProcessing(media)
        let publish = try post.decode(column: "processing", as: Bool.self) && !processing
        try await db.exec(
            """
            UPDATE posts SET media = \(bind: MediaRecord.text(media)), processing = \(bind: processing)
            WHERE id = \(bind: postID)
            """)
        if publish {
            try await PostStore.announce(post: postID, author: author, mentioned: mentioned, ids: ids, on: db)
        }
        return publish
    }
}
