import PlazaAPI

/// A person's list of accounts: a title, a timeline of its accounts' posts, a replies policy
/// and whether it is exclusive (its accounts' posts then leave its owner's home feed).
package struct AccountList: Sendable, Equatable {
    package enum RepliesPolicy: String, Sendable, CaseIterable {
        case followed, list, none
    }
    package var id: Int64
    package var title: String
    package var repliesPolicy: RepliesPolicy
    package var exclusive: Bool
}

/// A person's lists, decided once for every door (Mastodon's `/api/v1/lists` calls these). Only
/// its owner sees a list, changes it or reads its timeline: anyone else's id is 404. Only
/// accounts the owner follows may be added (as on Mastodon); an unfollow or a block takes the
/// account out of the owner's lists (`PeopleStore.deleteFollows`).
package struct ListActions: Sendable {
    let lists: ListStore

    /// Characters in a title, after trimming.
    package static let maxTitleLength = 100
    /// Lists a person may have.
    package static let maxPerPerson = 50
    /// Accounts in a list.
    package static let maxAccounts = 1_000

    static let notFound = PlazaError.notFound("List")
    static let tooMany = PlazaError(
        .unprocessableContent, "too_many_lists", "You have \(maxPerPerson) lists: remove one to add another.")
    static let tooManyAccounts = PlazaError(
        .unprocessableContent, "too_many_accounts", "A list holds \(maxAccounts) accounts at most.")

    /// What a new list or a change gives; nil keeps the list's value (or takes the default).
    package struct Draft: Sendable {
        package var title: String?
        package var repliesPolicy: String?
        package var exclusive: Bool?

        package init(title: String? = nil, repliesPolicy: String? = nil, exclusive: Bool? = nil) {
            self.title = title
            self.repliesPolicy = repliesPolicy
            self.exclusive = exclusive
        }
    }

    package func lists(of person: Int64) async throws -> [AccountList] { try await lists.lists(of: person) }

    /// One of `person`'s lists; 404 for any other id, someone else's too.
    package func list(_ id: Int64, of person: Int64) async throws -> AccountList {
        guard let list = try await lists.list(id: id, user: person) else { throw Self.notFound }
        return list
    }

    /// `person`'s lists that hold `account`.
    package func lists(of person: Int64, holding account: Int64) async throws -> [AccountList] {
        try await lists.lists(of: person, holding: account)
    }

    package func create(by person: Int64, _ draft: Draft, now: Timestamp = .now) async throws -> AccountList {
        let fields = ListStore.Fields(
            title: try Self.title(draft.title), repliesPolicy: try Self.policy(draft.repliesPolicy ?? "list"),
            exclusive: draft.exclusive ?? false)
        guard let list = try await lists.create(user: person, fields, limit: Self.maxPerPerson, now: now.milliseconds)
        else { throw Self.tooMany }
        return list
    }

    /// Changes what `draft` gives of `person`'s list `id`; 404 for another's.
    package func update(_ id: Int64, by person: Int64, _ draft: Draft) async throws -> AccountList {
        let current = try await list(id, of: person)
        let fields = ListStore.Fields(
            title: try draft.title.map { try Self.title($0) } ?? current.title,
            repliesPolicy: try draft.repliesPolicy.map(Self.policy) ?? current.repliesPolicy,
            exclusive: draft.exclusive ?? current.exclusive)
        guard try await lists.update(id: id, user: person, fields) else { throw Self.notFound }
        return try await list(id, of: person)
    }

    package func delete(_ id: Int64, by person: Int64) async throws {
        guard try await lists.delete(id: id, user: person) else { throw Self.notFound }
    }

    /// A page of the ids of the accounts in `person`'s list `id`, highest first (`limit` nil: all).
    package func accounts(of id: Int64, by person: Int64, maxID: Int64?, sinceID: Int64?, limit: Int?)
        async throws -> [Int64]
    {
        guard let ids = try await lists.accounts(of: id, user: person, maxID: maxID, sinceID: sinceID, limit: limit)
        else { throw Self.notFound }
        return ids
    }

    /// Adds `accounts` to `person`'s list `id`: each must be someone they follow.
    package func add(_ accounts: [Int64], to id: Int64, by person: Int64) async throws {
        guard !accounts.isEmpty else { throw PlazaError.invalid("account_ids", "Name at least one account.") }
        guard accounts.count <= Self.maxAccounts else { throw Self.tooManyAccounts }
        switch try await lists.add(accounts, to: id, user: person, limit: Self.maxAccounts) {
        case .added: return
        case .noList: throw Self.notFound
        case .tooMany: throw Self.tooManyAccounts
        case .notFollowed(let ids):
            throw PlazaError.invalid(
                "account_ids",
                "You must follow an account to add it to a list (\(ids.prefix(5).map { String($0) }.joined(separator: ", ")))."
            )
        }
    }

    /// Takes `accounts` out of `person`'s list `id`.
    package func remove(_ accounts: [Int64], from id: Int64, by person: Int64) async throws {
        guard accounts.count <= Self.maxAccounts else { throw Self.tooManyAccounts }
        guard try await lists.remove(accounts, from: id, user: person) else { throw Self.notFound }
    }

    static func title(_ value: String?) throws -> String {
        try Validate.requiredText(value, field: "title", max: maxTitleLength)
    }

    static func policy(_ value: String) throws -> AccountList.RepliesPolicy {
        guard let policy = AccountList.RepliesPolicy(rawValue: value) else {
            throw PlazaError.invalid("replies_policy", "replies_policy must be followed, list or none.")
        }
        return policy
    }
}
