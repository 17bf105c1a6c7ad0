import Foundation
import PlazaAPI

/// Polls: put on a post with it (`PostStore.create`), replaced by its edits, voted in here, and
/// announced to their author and voters when they end (`PollService`). Totals are kept on write:
/// a vote adds to `polls.tallies` and `voters_count` under the poll row's lock, so reading a
/// poll is a column of the post's row (`PollColumn`) and never counts votes.
///
/// Locks, on PostgreSQL: the post's row first (shared here; its deletion and edits take it
/// exclusively), then the poll's, then the people notified — the order edits keep too, and post
/// deletion (post, people, then the poll with the post) is kept apart by the post's lock.
package struct PollStore: Sendable {
    let db: Database
    let ids: IDGenerator
    let events: EventLog

    static let alreadyVoted = PlazaError(.unprocessableContent, "already_voted", "You already voted in this poll.")
    static let expired = PlazaError(.unprocessableContent, "poll_expired", "This poll has ended.")
    static let ownPoll = PlazaError(
        .unprocessableContent, "own_poll", "You see your own poll's results; you cannot vote in it.")
    static let noPoll = PlazaError.notFound("Poll")

    /// Puts poll `draft` on new post `post`, ending `draft.expiresInSeconds` after `now`.
    static func create(post: Int64, _ draft: PollRules.Draft, now: Int64, on db: Connection) async throws {
        try await db.exec(
            """
            INSERT INTO polls (post_id, options, tallies, multiple, expires_at)
            VALUES (\(bind: post), \(bind: optionsText(draft.options)), \(bind: tallies(Array(repeating: 0, count: draft.options.count))),
                \(bind: draft.multiple), \(bind: now + Int64(draft.expiresInSeconds) * 1000))
            """)
    }

    /// Post `post`'s poll as stored, locked for an edit (after the post's row, before anyone
    /// an edit notifies: the order votes and `announceEnded` keep); nil when it has none.
    static func locked(post: Int64, on db: Connection) async throws -> Stored? {
        try await db.first(
            """
            SELECT options, tallies, multiple, expires_at, voters_count FROM polls WHERE post_id = \(bind: post)\
            \(db.dialect.rowLock(.update) ?? "")
            """
        ).map(Stored.init(row:))
    }

    /// An edit's change to post `post`'s poll `current` (`locked`): a poll asking the same keeps
    /// its votes and takes the new end while it is open (an ended one stays ended: its results
    /// are out); another one replaces it, votes and all; `.clear` removes it.
    static func replace(
        post: Int64, current: Stored?, with update: FieldUpdate<PollRules.Draft>, now: Int64, on db: Connection
    ) async throws {
        switch update {
        case .keep: return
        case .clear: try await db.exec("DELETE FROM polls WHERE post_id = \(bind: post)")
        case .set(let draft):
            if let current, draft.asks(current.options, multiple: current.multiple) {
                guard current.expiresAt > now else { return }
                try await db.exec(
                    """
                    UPDATE polls SET expires_at = \(bind: now + Int64(draft.expiresInSeconds) * 1000), announced = FALSE
                    WHERE post_id = \(bind: post)
                    """)
            } else {
                try await db.exec("DELETE FROM polls WHERE post_id = \(bind: post)")
                try await create(post: post, draft, now: now, on: db)
            }
        }
    }

    /// `voter` chooses options `choices` (indexes) in post `post`'s poll, and sees the poll as it
    /// is now. 404 for a post they may not read or one with no poll; 422 when it ended
    /// (`poll_expired`), when they voted already (`already_voted`: one vote, of one option or, in
    /// a multiple-choice poll, of several, each once) and for their own poll (`own_poll`).
    package func vote(post: Int64, by voter: Int64, choices: [Int], now: Int64 = Timestamp.now.milliseconds)
        async throws -> Poll
    {
        try await events.write { db in
            guard
                let author = try await db.first(
                    """
                    SELECT p.author_id FROM posts p WHERE p.id = \(bind: post) AND \(Visibility.post("p", readableBy: voter))\
                    \(db.dialect.rowLock(.keyShare) ?? "")
                    """)?.decode(column: "author_id", as: Int64.self)
            else { throw PlazaError.notFound("Post") }
            guard
                let row = try await db.first(
                    """
                    SELECT options, tallies, multiple, expires_at, voters_count FROM polls WHERE post_id = \(bind: post)\
                    \(db.dialect.rowLock(.update) ?? "")
                    """)
            else { throw Self.noPoll }
            var state = try Stored(row: row)
            guard author != voter else { throw Self.ownPoll }
            guard state.expiresAt > now else { throw Self.expired }
            let chosen = try PollRules.choices(choices, count: state.options.count, multiple: state.multiple)
            let before = try await db.rows(
                "SELECT choice FROM poll_votes WHERE post_id = \(bind: post) AND user_id = \(bind: voter)"
            ).map { try $0.decode(column: "choice", as: Int.self) }
            // One vote, with one choice or several: a second one would be cast knowing the counts.
            guard before.isEmpty else { throw Self.alreadyVoted }
            for choice in chosen {
                try await db.exec(
                    """
                    INSERT INTO poll_votes (post_id, user_id, choice, created_at)
                    VALUES (\(bind: post), \(bind: voter), \(bind: choice), \(bind: now))
                    """)
                state.tallies[choice] += 1
            }
            state.voters += 1
            try await db.exec(
                """
                UPDATE polls SET tallies = \(bind: Self.tallies(state.tallies)), voters_count = \(bind: state.voters)
                WHERE post_id = \(bind: post)
                """)
            return state.poll(id: post, choices: chosen, resultsShown: true, now: now)
        }
    }

    /// Announces up to `limit` polls that ended by `now` to their authors and voters (kind
    /// `poll`), each once however many servers look, and tells their readers' streams the post
    /// changed. How many it announced.
    func announceEnded(now: Int64 = Timestamp.now.milliseconds, limit: Int = 20) async throws -> Int {
        let ids = ids
        return try await events.write { db in
            let due = try await db.rows(Self.dueSQL(now: now, limit: limit)).map {
                try $0.decode(column: "post_id", as: Int64.self)
            }
            guard !due.isEmpty else { return 0 }
            // The posts first, in order (a post's deletion locks it before anything else).
            let authors = try await db.rows(
                """
                SELECT id, author_id FROM posts WHERE id IN (\(binds: due)) ORDER BY id\(db.dialect.rowLock(.keyShare) ?? "")
                """)
            let authorOf = Dictionary(
                try authors.map {
                    (try $0.decode(column: "id", as: Int64.self), try $0.decode(column: "author_id", as: Int64.self))
                }, uniquingKeysWith: { a, _ in a })
            let claimed = try await db.rows(
                """
                UPDATE polls SET announced = TRUE WHERE post_id IN (\(binds: due)) AND NOT announced
                AND expires_at <= \(bind: now) RETURNING post_id
                """
            ).map { try $0.decode(column: "post_id", as: Int64.self) }
            var notices: [NotificationStore.New] = []
            for post in claimed {
                guard let author = authorOf[post] else { continue }
                let voters = try await db.rows(
                    "SELECT DISTINCT user_id FROM poll_votes WHERE post_id = \(bind: post)"
                ).map { try $0.decode(column: "user_id", as: Int64.self) }
                notices += ([author] + voters).map { .pollEnded(post: post, to: $0, author: author) }
                try await EventLog.append(
                    .init(kind: .postUpdated, actor: author, post: post),
                    to: .postReaders(post: post, author: author), on: db)
            }
            try await NotificationStore.notify(notices, ids: ids, on: db)
            return claimed.count
        }
    }

    /// The polls that ended by `now` and were not announced, soonest ended first (`polls_due`).
    static func dueSQL(now: Int64, limit: Int) -> SQL {
        """
        SELECT post_id FROM polls WHERE NOT announced AND expires_at <= \(bind: now)
        ORDER BY expires_at LIMIT \(bind: limit)
        """
    }

    /// Takes up to `limit` of `user`'s votes out of their polls' counts and deletes them (their
    /// account goes); how many polls. Each post, then its poll, locked in id order.
    static func withdrawVotes(of user: Int64, limit: Int, on db: Connection) async throws -> Int {
        let polls = try await db.rows(
            """
            SELECT DISTINCT post_id FROM poll_votes WHERE user_id = \(bind: user) ORDER BY post_id LIMIT \(bind: limit)
            """
        ).map { try $0.decode(column: "post_id", as: Int64.self) }
        guard !polls.isEmpty else { return 0 }
        if let lock = db.dialect.rowLock(.keyShare) {
            try await db.exec("SELECT id FROM posts WHERE id IN (\(binds: polls)) ORDER BY id\(lock)")
        }
        for post in polls {
            guard var state = try await locked(post: post, on: db) else { continue }
            let choices = try await db.rows(
                "DELETE FROM poll_votes WHERE post_id = \(bind: post) AND user_id = \(bind: user) RETURNING choice"
            ).map { try $0.decode(column: "choice", as: Int.self) }
            guard !choices.isEmpty else { continue }
            for choice in choices where state.tallies.indices.contains(choice) {
                state.tallies[choice] = max(0, state.tallies[choice] - 1)
            }
            try await db.exec(
                """
                UPDATE polls SET tallies = \(bind: tallies(state.tallies)), voters_count = \(bind: max(0, state.voters - 1))
                WHERE post_id = \(bind: post)
                """)
        }
        return polls.count
    }

    // MARK: storage

    static func optionsText(_ options: [String]) -> String {
        String(decoding: (try? JSON.encoder.encode(options)) ?? Data("[]".utf8), as: UTF8.self)
    }

    static func tallies(_ counts: [Int]) -> String { counts.map(String.init).joined(separator: ",") }

    /// A poll's row as stored.
    struct Stored {
        var options: [String]
        var tallies: [Int]
        var multiple: Bool
        var expiresAt: Int64
        var voters: Int

        init(row: Row) throws {
            options = Self.options(try row.decode(column: "options", as: String.self))
            tallies = Self.counts(try row.decode(column: "tallies", as: String.self), options: options.count)
            multiple = try row.decode(column: "multiple", as: Bool.self)
            expiresAt = try row.decode(column: "expires_at", as: Int64.self)
            voters = try row.decode(column: "voters_count", as: Int.self)
        }

        init(options: [String], tallies: [Int], multiple: Bool, expiresAt: Int64, voters: Int) {
            self.options = options
            self.tallies = tallies
            self.multiple = multiple
            self.expiresAt = expiresAt
            self.voters = voters
        }

        static func options(_ text: String) -> [String] {
            (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
        }

        /// One count per option (0 where the text has none).
        static func counts(_ text: Substring, options: Int) -> [Int] {
            let parsed = text.split(separator: ",").map { Int($0) ?? 0 }
            return (0..<options).map { $0 < parsed.count ? max(0, parsed[$0]) : 0 }
        }

        static func counts(_ text: String, options: Int) -> [Int] { counts(text[...], options: options) }

        /// The poll as a reader sees it: counts once `resultsShown` or ended.
        func poll(id: Int64, choices: [Int], resultsShown: Bool, now: Int64) -> Poll {
            let expired = expiresAt <= now
            let shown = resultsShown || expired
            return Poll(
                id: String(id),
                options: zip(options, tallies).map { Poll.Option(title: $0, votes: shown ? $1 : nil) },
                multiple: multiple, expiresAt: Timestamp(milliseconds: expiresAt), expired: expired,
                votersCount: voters, votesCount: shown ? tallies.reduce(0, +) : nil,
                viewer: Poll.Viewer(voted: !choices.isEmpty, choices: choices))
        }
    }
}
