import PlazaAPI

/// Follow requests to locked people, and mutes.
extension PeopleStore {
    // MARK: follow requests

    /// Ends `requester`'s pending request to follow `target`, if any, with its notification.
    /// The caller holds both people's locks.
    static func endRequest(from requester: Int64, to target: Int64, on db: Connection) async throws {
        let ended = try await db.first(
            """
            DELETE FROM follow_requests WHERE requester_id = \(bind: requester) AND target_id = \(bind: target)
            RETURNING requester_id
            """)
        if ended != nil {
            try await NotificationStore.withdrawFollowRequests(to: target, by: [requester], on: db)
        }
    }

    /// The people asking to follow `target`, newest request first.
    package func followRequests(to target: Int64, page: PageRequest) async throws -> Page<JoinRequest> {
        let rows = try await db.read { db in try await db.rows(Self.followRequestsSQL(to: target, page: page)) }
        let (pageRows, next) = try page.split(rows) { try Cursor(row: $0, time: "requested_at") }
        return Page(
            items: try pageRows.map { row in
                JoinRequest(
                    user: try UserSummary(authorIn: row, id: try row.decode(column: "id", as: Int64.self)),
                    requestedAt: Timestamp(milliseconds: try row.decode(column: "requested_at", as: Int64.self)))
            }, nextCursor: next)
    }

    static func followRequestsSQL(to target: Int64, page: PageRequest) -> SQL {
        var sql: SQL = """
            SELECT fr.requester_id AS id, fr.created_at AS requested_at, \(UserSummary.columns)
            FROM follow_requests fr JOIN users u ON u.id = fr.requester_id WHERE fr.target_id = \(bind: target)
            """
        if let cursor = page.cursor {
            sql += " AND (fr.created_at, fr.requester_id) < (\(bind: cursor.time), \(bind: cursor.id))"
        }
        sql += " AND \(Visibility.person("fr.requester_id", seenBy: target))"
        sql += " ORDER BY fr.created_at DESC, fr.requester_id DESC LIMIT \(bind: page.fetchLimit)"
        return sql
    }

    /// How many people ask to follow `target` (whom `target` may see).
    package func followRequestCount(to target: Int64) async throws -> Int {
        try await db.read { db in
            try await db.first(
                """
                SELECT count(*) AS n FROM follow_requests fr
                WHERE fr.target_id = \(bind: target) AND \(Visibility.person("fr.requester_id", seenBy: target))
                """)
        }.map { Int(try $0.decode(column: "n", as: Int64.self)) } ?? 0
    }

    static let noRequest = PlazaError.notFound("Follow request")

    /// `target` approves `requester`'s request: the follow is made as any follow is (counters by
    /// trigger), under the same locks. As in Mastodon, nobody is notified of it.
    func approveRequest(from requester: Int64, to target: Int64) async throws {
        let now = Timestamp.now.milliseconds
        try await db.write { db in
            try await Self.lockInOrder([requester, target], on: db)
            guard try await Self.deleteRequest(from: requester, to: target, on: db) else { throw Self.noRequest }
            _ = try await Self.insertFollow(follower: requester, followee: target, at: now, home: home, on: db)
            try await NotificationStore.withdrawFollowRequests(to: target, by: [requester], on: db)
        }
    }

    /// `target` denies `requester`'s request; the requester is not told.
    func denyRequest(from requester: Int64, to target: Int64) async throws {
        try await db.write { db in
            try await Self.lockInOrder([requester, target], on: db)
            guard try await Self.deleteRequest(from: requester, to: target, on: db) else { throw Self.noRequest }
            try await NotificationStore.withdrawFollowRequests(to: target, by: [requester], on: db)
        }
    }

    private static func deleteRequest(from requester: Int64, to target: Int64, on db: Connection) async throws -> Bool {
        try await db.first(
            """
            DELETE FROM follow_requests WHERE requester_id = \(bind: requester) AND target_id = \(bind: target)
            RETURNING requester_id
            """) != nil
    }

    /// How many requests one transaction of an unlock accepts.
    static let unlockBatch = 500

    /// Locks or unlocks `userID`'s account. Unlocking accepts the pending requests, as Mastodon
    /// does, in batches: each locks its requesters and the account in id order (read first,
    /// without locks). Once the first batch has committed the account unlocked, no new request
    /// can be made, so the batches run out.
    func setLocked(userID: Int64, _ locked: Bool) async throws {
        if locked {
            _ = try await db.write("UPDATE users SET locked = TRUE WHERE id = \(bind: userID)")
            return
        }
        var first = true
        while true {
            let unlocking = first
            let more = try await db.write { db in
                let requesters = try await db.rows(
                    """
                    SELECT requester_id FROM follow_requests WHERE target_id = \(bind: userID)
                    ORDER BY created_at, requester_id LIMIT \(bind: Self.unlockBatch)
                    """
                ).map { try $0.decode(column: "requester_id", as: Int64.self) }
                try await Self.lockInOrder(requesters + [userID], on: db)
                if unlocking {
                    try await db.exec("UPDATE users SET locked = FALSE WHERE id = \(bind: userID)")
                } else if try await db.first("SELECT 1 AS x FROM users WHERE id = \(bind: userID) AND locked") != nil {
                    return false  // locked again meanwhile: the rest wait for approval
                }
                guard !requesters.isEmpty else { return false }
                let now = Timestamp.now.milliseconds
                let accepted = try await db.rows(
                    """
                    DELETE FROM follow_requests WHERE target_id = \(bind: userID) AND requester_id IN (\(binds: requesters))
                    RETURNING requester_id
                    """
                ).map { try $0.decode(column: "requester_id", as: Int64.self) }
                for requester in accepted.sorted() {
                    _ = try await Self.insertFollow(follower: requester, followee: userID, at: now, home: home, on: db)
                }
                try await NotificationStore.withdrawFollowRequests(to: userID, by: accepted, on: db)
                // Under the account's lock no request can arrive, so what is left waits for the next batch.
                return try await db.first(
                    "SELECT 1 AS x FROM follow_requests WHERE target_id = \(bind: userID) LIMIT 1")
                    != nil
            }
            first = false
            if !more { return }
        }
    }

    // MARK: mutes

    /// Hides `muted`'s posts from `muter`'s feeds (not from their profile); idempotent.
    func mute(muter: Int64, muted: Int64) async throws {
        guard muter != muted else {
            throw PlazaError(.unprocessableContent, "cannot_mute_self", "You cannot mute yourself.")
        }
        _ = try await db.write(
            """
            INSERT INTO mutes (muter_id, muted_id, created_at) VALUES (\(bind: muter), \(bind: muted), \(bind: Timestamp.now.milliseconds))
            ON CONFLICT DO NOTHING
            """)
    }

    func unmute(muter: Int64, muted: Int64) async throws {
        _ = try await db.write("DELETE FROM mutes WHERE muter_id = \(bind: muter) AND muted_id = \(bind: muted)")
    }
}
