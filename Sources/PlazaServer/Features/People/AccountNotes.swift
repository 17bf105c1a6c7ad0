import PlazaAPI

/// What a person writes about another for themselves (Mastodon's relationship `note`): read and
/// written only by its author, every query keyed on them.
package struct AccountNoteActions: Sendable {
    let db: Database
    let people: PeopleStore

    /// Characters in a note.
    package static let maxLength = 2_000

    /// Sets `author`'s note on `account` (someone they may see); an empty one removes it.
    package func set(_ note: String, by author: Int64, on account: Int64) async throws {
        guard note.count <= Self.maxLength else {
            throw PlazaError.invalid("comment", "A note is \(Self.maxLength) characters at most.")
        }
        _ = try await people.profile(userID: account, viewer: author)
        let now = Timestamp.now.milliseconds
        if note.isEmpty {
            _ = try await db.write(
                "DELETE FROM account_notes WHERE user_id = \(bind: author) AND account_id = \(bind: account) RETURNING user_id"
            )
            return
        }
        _ = try await db.write(
            """
            INSERT INTO account_notes (user_id, account_id, note, updated_at)
            VALUES (\(bind: author), \(bind: account), \(bind: note), \(bind: now))
            ON CONFLICT (user_id, account_id) DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at
            RETURNING user_id
            """)
    }

    /// `author`'s notes on each of `accounts` that has one: one query.
    package func notes(by author: Int64, on accounts: [Int64]) async throws -> [Int64: String] {
        guard !accounts.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows(
                "SELECT account_id, note FROM account_notes WHERE user_id = \(bind: author) AND account_id IN (\(binds: accounts))"
            )
        }
        var notes: [Int64: String] = [:]
        for row in rows {
            notes[try row.decode(column: "account_id", as: Int64.self)] = try row.decode(
                column: "note", as: String.self)
        }
        return notes
    }
}

extension PeopleStore {
    /// Followers each of `accounts` shares with `viewer`: the people `viewer` follows who follow
    /// it, `perAccount` at most each (the lowest ids), leaving out people hidden from `viewer`
    /// (suspended, blocked either way). One query for the pairs, one for the profiles.
    package func familiarFollowers(of accounts: [Int64], viewer: Int64, perAccount: Int) async throws
        -> [Int64: [User]]
    {
        guard !accounts.isEmpty else { return [:] }
        let rows = try await db.read { db in
            try await db.rows(Self.familiarFollowersSQL(of: accounts, viewer: viewer, perAccount: perAccount))
        }
        var pairs: [(target: Int64, person: Int64)] = []
        for row in rows {
            pairs.append(
                (try row.decode(column: "target", as: Int64.self), try row.decode(column: "person", as: Int64.self)))
        }
        let people = Dictionary(
            try await profiles(ids: Array(Set(pairs.map(\.person))), viewer: viewer).map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
        var familiar: [Int64: [User]] = [:]
        for pair in pairs {
            if let user = people[String(pair.person)] { familiar[pair.target, default: []].append(user) }
        }
        return familiar
    }

    static func familiarFollowersSQL(of accounts: [Int64], viewer: Int64, perAccount: Int) -> SQL {
        """
        SELECT target, person FROM (
            SELECT theirs.followee_id AS target, theirs.follower_id AS person,
                ROW_NUMBER() OVER (PARTITION BY theirs.followee_id ORDER BY theirs.follower_id) AS n
            FROM follows mine JOIN follows theirs ON theirs.follower_id = mine.followee_id
            WHERE mine.follower_id = \(bind: viewer) AND theirs.followee_id IN (\(binds: accounts))
            AND \(Visibility.person("theirs.follower_id", seenBy: viewer))
        ) ranked WHERE n <= \(bind: perAccount) ORDER BY target, person
        """
    }
}
