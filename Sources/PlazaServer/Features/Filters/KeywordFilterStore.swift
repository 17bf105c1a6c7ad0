import PlazaAPI

/// A person's keyword filters (`keyword_filters`). Every query names the owner, so one person's
/// filter is nobody else's to read, change or remove: another's id is a filter not found.
package struct KeywordFilterStore: Sendable {
    let db: Database
    let ids: IDGenerator

    /// A checked filter, as `KeywordFilterActions` makes it.
    struct Fields: Sendable {
        var phrase: String
        var wholeWord: Bool
        var contexts: [FilterContext]
        var action: FilterAction
        var expiresAt: Int64?
    }

    static let columns: SQL = "id, phrase, whole_word, contexts, action, expires_at, created_at"

    static func filter(_ row: Row) throws -> KeywordFilter {
        let contexts = try row.decode(column: "contexts", as: String.self).split(separator: ",")
            .compactMap { FilterContext(rawValue: String($0)) }
        return KeywordFilter(
            id: String(try row.decode(column: "id", as: Int64.self)),
            phrase: try row.decode(column: "phrase", as: String.self),
            wholeWord: try row.decode(column: "whole_word", as: Bool.self), contexts: contexts,
            action: FilterAction(rawValue: try row.decode(column: "action", as: String.self)) ?? .warn,
            expiresAt: try row.decode(column: "expires_at", as: Int64?.self).map(Timestamp.init(milliseconds:)),
            createdAt: Timestamp(milliseconds: try row.decode(column: "created_at", as: Int64.self)))
    }

    /// Every filter of `user`, expired ones too (they can be renewed), oldest first.
    func list(user: Int64) async throws -> [KeywordFilter] {
        try await db.read { db in try await db.rows(Self.listSQL(user: user)) }.map(Self.filter)
    }

    static func listSQL(user: Int64) -> SQL {
        // Expired filters are pruned hourly, so a person has about `maxPerPerson` at most.
        "SELECT \(columns) FROM keyword_filters WHERE user_id = \(bind: user) ORDER BY id LIMIT \(bind: KeywordFilterActions.maxPerPerson * 2)"
    }

    /// The filters of `user` that apply at `now`: one indexed read, made once for each page.
    static func active(of user: Int64, now: Int64, on db: Connection) async throws -> [KeywordFilter] {
        try await db.rows(activeSQL(of: user, now: now)).map(filter)
    }

    static func activeSQL(of user: Int64, now: Int64) -> SQL {
        """
        SELECT \(columns) FROM keyword_filters WHERE user_id = \(bind: user)
        AND (expires_at IS NULL OR expires_at > \(bind: now)) ORDER BY id LIMIT \(bind: KeywordFilterActions.maxPerPerson)
        """
    }

    /// The filters of each of `users` that apply at `now` (for a batch of stream events).
    static func active(of users: [Int64], now: Int64, on db: Connection) async throws -> [Int64: [KeywordFilter]] {
        guard !users.isEmpty else { return [:] }
        let rows = try await db.rows(
            """
            SELECT user_id, \(columns) FROM keyword_filters WHERE user_id IN (\(binds: users))
            AND (expires_at IS NULL OR expires_at > \(bind: now)) ORDER BY user_id, id
            """)
        var filters: [Int64: [KeywordFilter]] = [:]
        for row in rows {
            filters[try row.decode(column: "user_id", as: Int64.self), default: []].append(try filter(row))
        }
        return filters
    }

    /// `viewer`'s filters that apply in `context` now, ready to match; none for nobody.
    static func matcher(for viewer: Int64?, in context: FilterContext, on db: Connection) async throws
        -> KeywordFilters
    {
        guard let viewer else { return KeywordFilters([], context: context) }
        let now = Timestamp.now
        let filters = try await active(of: viewer, now: now.milliseconds, on: db)
        return KeywordFilters(filters, context: context, viewer: String(viewer), now: now)
    }

    func matcher(for viewer: Int64?, in context: FilterContext) async throws -> KeywordFilters {
        guard viewer != nil else { return KeywordFilters([], context: context) }
        return try await db.read { db in try await Self.matcher(for: viewer, in: context, on: db) }
    }

    func filter(id: Int64, user: Int64) async throws -> KeywordFilter? {
        try await db.read { db in
            try await db.first(
                "SELECT \(Self.columns) FROM keyword_filters WHERE id = \(bind: id) AND user_id = \(bind: user)")
        }.map(Self.filter)
    }

    /// A new filter for `user`, unless they have `limit` active ones: nil then. Their row is
    /// locked first, so two at once cannot both pass the count.
    func create(user: Int64, _ fields: Fields, limit: Int, now: Int64) async throws -> KeywordFilter? {
        let id = ids.next()
        return try await db.write { db in
            let lock = db.dialect.rowLock(.noKeyUpdate) ?? ""
            _ = try await db.first("SELECT id FROM users WHERE id = \(bind: user)\(lock)")
            let count = try await db.first(
                """
                SELECT COUNT(*) AS n FROM keyword_filters WHERE user_id = \(bind: user)
                AND (expires_at IS NULL OR expires_at > \(bind: now))
                """)
            guard try count?.decode(column: "n", as: Int64.self) ?? 0 < Int64(limit) else { return nil }
            try await db.exec(
                """
                INSERT INTO keyword_filters (id, user_id, phrase, whole_word, contexts, action, expires_at, created_at)
                VALUES (\(bind: id), \(bind: user), \(bind: fields.phrase), \(bind: fields.wholeWord),
                    \(bind: Self.contexts(fields.contexts)), \(bind: fields.action.rawValue), \(bind: fields.expiresAt), \(bind: now))
                """)
            return KeywordFilter(
                id: String(id), phrase: fields.phrase, wholeWord: fields.wholeWord, contexts: fields.contexts,
                action: fields.action, expiresAt: fields.expiresAt.map(Timestamp.init(milliseconds:)),
                createdAt: Timestamp(milliseconds: now))
        }
    }

    /// Writes `fields` over filter `id` of `user`; false when they have no such filter.
    func update(id: Int64, user: Int64, _ fields: Fields) async throws -> Bool {
        let rows = try await db.write(
            """
            UPDATE keyword_filters SET phrase = \(bind: fields.phrase), whole_word = \(bind: fields.wholeWord),
                contexts = \(bind: Self.contexts(fields.contexts)), action = \(bind: fields.action.rawValue),
                expires_at = \(bind: fields.expiresAt)
            WHERE id = \(bind: id) AND user_id = \(bind: user) RETURNING id
            """)
        return !rows.isEmpty
    }

    /// Removes filter `id` of `user`; false when they have no such filter.
    func delete(id: Int64, user: Int64) async throws -> Bool {
        let rows = try await db.write(
            "DELETE FROM keyword_filters WHERE id = \(bind: id) AND user_id = \(bind: user) RETURNING id")
        return !rows.isEmpty
    }

    /// Removes the filters that expired before `now` (the maintenance round).
    func pruneExpired(now: Int64) async throws {
        _ = try await db.write(
            "DELETE FROM keyword_filters WHERE expires_at IS NOT NULL AND expires_at <= \(bind: now)")
    }

    static func contexts(_ contexts: [FilterContext]) -> String { contexts.map(\.rawValue).joined(separator: ",") }
}
