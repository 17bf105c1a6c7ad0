import PlazaAPI

/// A person's lists of accounts (`lists`, `list_accounts`). Every query names the owner, so one
/// person's list is nobody else's to read, change, fill or read the timeline of: another's id is
/// a list not found.
package struct ListStore: Sendable {
    let db: Database
    let ids: IDGenerator

    /// A checked list, as `ListActions` makes it.
    struct Fields: Sendable {
        var title: String
        var repliesPolicy: AccountList.RepliesPolicy
        var exclusive: Bool
    }

    /// What adding accounts to a list came to.
    enum Addition: Sendable, Equatable {
        case added
        case noList
        /// The owner does not follow these accounts.
        case notFollowed([Int64])
        case tooMany
    }

    static let columns: SQL = "l.id, l.title, l.replies_policy, l.exclusive"

    static func list(_ row: Row) throws -> AccountList {
        AccountList(
            id: try row.decode(column: "id", as: Int64.self), title: try row.decode(column: "title", as: String.self),
            repliesPolicy: AccountList.RepliesPolicy(
                rawValue: try row.decode(column: "replies_policy", as: String.self))
                ?? .list,
            exclusive: try row.decode(column: "exclusive", as: Bool.self))
    }

    /// Every list of `user`, oldest first (there are `ListActions.maxPerPerson` at most).
    func lists(of user: Int64) async throws -> [AccountList] {
        try await db.read { db in
            try await db.rows(
                "SELECT \(Self.columns) FROM lists l WHERE l.user_id = \(bind: user) ORDER BY l.id LIMIT \(bind: ListActions.maxPerPerson * 2)"
            )
        }.map(Self.list)
    }

    func list(id: Int64, user: Int64) async throws -> AccountList? {
        try await db.read { db in
            try await db.first(
                "SELECT \(Self.columns) FROM lists l WHERE l.id = \(bind: id) AND l.user_id = \(bind: user)")
        }.map(Self.list)
    }

    /// The lists of `user` that hold `account`.
    func lists(of user: Int64, holding account: Int64) async throws -> [AccountList] {
        try await db.read { db in
            try await db.rows(
                """
                SELECT \(Self.columns) FROM list_accounts la JOIN lists l ON l.id = la.list_id
                WHERE la.user_id = \(bind: user) AND la.account_id = \(bind: account) ORDER BY l.id
                """)
        }.map(Self.list)
    }

    /// A new list for `user`, unless they have `limit` lists: nil then. Their row is locked
    /// first, so two at once cannot both pass the count.
    func create(user: Int64, _ fields: Fields, limit: Int, now: Int64) async throws -> AccountList? {
        let id = ids.next()
        return try await db.write { db -> AccountList? in
            try await PeopleStore.lockInOrder([user], on: db)
            let count = try await db.first("SELECT COUNT(*) AS n FROM lists WHERE user_id = \(bind: user)")
            guard try count?.decode(column: "n", as: Int64.self) ?? 0 < Int64(limit) else { return nil }
            try await db.exec(
                """
                INSERT INTO lists (id, user_id, title, replies_policy, exclusive, created_at)
                VALUES (\(bind: id), \(bind: user), \(bind: fields.title), \(bind: fields.repliesPolicy.rawValue),
                    \(bind: fields.exclusive), \(bind: now))
                """)
            return AccountList(
                id: id, title: fields.title, repliesPolicy: fields.repliesPolicy, exclusive: fields.exclusive)
        }
    }

    /// Writes `fields` over list `id` of `user` (its accounts' copy of `exclusive` too); false
    /// when they have no such list.
    func update(id: Int64, user: Int64, _ fields: Fields) async throws -> Bool {
        try await db.write { db -> Bool in
            // The owner's row, as `add` takes it: an account added meanwhile gets the new flag.
            try await PeopleStore.lockInOrder([user], on: db)
            let rows = try await db.rows(
                """
                UPDATE lists SET title = \(bind: fields.title), replies_policy = \(bind: fields.repliesPolicy.rawValue),
                    exclusive = \(bind: fields.exclusive)
                WHERE id = \(bind: id) AND user_id = \(bind: user) RETURNING id
                """)
            guard !rows.isEmpty else { return false }
            try await db.exec(
                """
                UPDATE list_accounts SET exclusive = \(bind: fields.exclusive)
                WHERE list_id = \(bind: id) AND exclusive <> \(bind: fields.exclusive)
                """)
            return true
        }
    }

    /// Removes list `id` of `user` with its accounts; false when they have no such list.
    func delete(id: Int64, user: Int64) async throws -> Bool {
        let rows = try await db.write(
            "DELETE FROM lists WHERE id = \(bind: id) AND user_id = \(bind: user) RETURNING id")
        return !rows.isEmpty
    }

    /// A page of the accounts of list `id` of `user`, by account id, highest first: below
    /// `maxID`, above `sinceID`; `limit` nil for all of them. Nil when they have no such list.
    func accounts(of id: Int64, user: Int64, maxID: Int64?, sinceID: Int64?, limit: Int?) async throws -> [Int64]? {
        try await db.read { db -> [Int64]? in
            guard
                try await db.first("SELECT id FROM lists WHERE id = \(bind: id) AND user_id = \(bind: user)") != nil
            else { return nil }
            return try await db.rows(Self.accountsSQL(of: id, maxID: maxID, sinceID: sinceID, limit: limit))
                .map { try $0.decode(column: "account_id", as: Int64.self) }
        }
    }

    static func accountsSQL(of id: Int64, maxID: Int64?, sinceID: Int64?, limit: Int?) -> SQL {
        var sql: SQL = "SELECT account_id FROM list_accounts WHERE list_id = \(bind: id)"
        if let maxID { sql += " AND account_id < \(bind: maxID)" }
        if let sinceID { sql += " AND account_id > \(bind: sinceID)" }
        sql += " ORDER BY account_id DESC LIMIT \(bind: limit ?? ListActions.maxAccounts)"
        return sql
    }

    /// Adds `accounts` to list `id` of `user`, each of whom they must follow, up to `limit` in
    /// the list. Under the owner's row lock, which an unfollow and a block take too: an account
    /// is never added after the follow that let it in ended.
    func add(_ accounts: [Int64], to id: Int64, user: Int64, limit: Int) async throws -> Addition {
        let accounts = Array(Set(accounts)).sorted()
        return try await db.write { db -> Addition in
            try await PeopleStore.lockInOrder([user], on: db)
            guard
                let list = try await db.first(
                    """
                    SELECT exclusive FROM lists WHERE id = \(bind: id) AND user_id = \(bind: user)\(db.dialect.rowLock(.noKeyUpdate) ?? "")
                    """)
            else { return .noList }
            let followed = Set(
                try await db.rows(
                    "SELECT followee_id FROM follows WHERE follower_id = \(bind: user) AND followee_id IN (\(binds: accounts))"
                ).map { try $0.decode(column: "followee_id", as: Int64.self) })
            let strangers = accounts.filter { !followed.contains($0) }
            guard strangers.isEmpty else { return .notFollowed(strangers) }
            let present = try await db.rows(
                "SELECT account_id FROM list_accounts WHERE list_id = \(bind: id) AND account_id IN (\(binds: accounts))"
            )
            let count = try await db.first("SELECT COUNT(*) AS n FROM list_accounts WHERE list_id = \(bind: id)")
            let total = Int(try count?.decode(column: "n", as: Int64.self) ?? 0) + accounts.count - present.count
            guard total <= limit else { return .tooMany }
            let exclusive = try list.decode(column: "exclusive", as: Bool.self)
            for account in accounts {
                try await db.exec(
                    """
                    INSERT INTO list_accounts (list_id, account_id, user_id, exclusive)
                    VALUES (\(bind: id), \(bind: account), \(bind: user), \(bind: exclusive)) ON CONFLICT DO NOTHING
                    """)
            }
            return .added
        }
    }

    /// Takes `accounts` out of list `id` of `user`; false when they have no such list.
    func remove(_ accounts: [Int64], from id: Int64, user: Int64) async throws -> Bool {
        try await db.write { db -> Bool in
            guard
                try await db.first("SELECT id FROM lists WHERE id = \(bind: id) AND user_id = \(bind: user)") != nil
            else { return false }
            if !accounts.isEmpty {
                try await db.exec(
                    "DELETE FROM list_accounts WHERE list_id = \(bind: id) AND account_id IN (\(binds: accounts))")
            }
            return true
        }
    }

    /// `follower` no longer follows `followee`: the followee leaves every list of the follower.
    /// The caller holds the follower's row lock.
    static func unfollowed(follower: Int64, followee: Int64, on db: Connection) async throws {
        try await db.exec(
            "DELETE FROM list_accounts WHERE user_id = \(bind: follower) AND account_id = \(bind: followee)")
    }

    /// Each list of `user` with its accounts' usernames (the account export).
    static func export(of user: Int64, on db: Connection) async throws -> [(AccountList, [String])] {
        let lists = try await db.rows(
            "SELECT \(columns) FROM lists l WHERE l.user_id = \(bind: user) ORDER BY l.id"
        ).map(list)
        let members = try await db.rows(
            """
            SELECT la.list_id, u.username FROM list_accounts la JOIN users u ON u.id = la.account_id
            WHERE la.user_id = \(bind: user) ORDER BY la.list_id, u.username
            """)
        var names: [Int64: [String]] = [:]
        for row in members {
            names[try row.decode(column: "list_id", as: Int64.self), default: []].append(
                try row.decode(column: "username", as: String.self))
        }
        return lists.map { ($0, names[$0.id] ?? []) }
    }
}
