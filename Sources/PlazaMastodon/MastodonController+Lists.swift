import Foundation
import HTTPTypes
import Hummingbird
import PlazaAPI
import PlazaServer

extension Mastodon {
    struct List: Codable, Sendable, Hashable {
        var id: String
        var title: String
        var repliesPolicy: String
        var exclusive: Bool
    }

    struct FamiliarFollowers: Codable, Sendable {
        var id: String
        var accounts: [Account]
    }
}

/// Mastodon's lists over Plaza's (`ListActions`): a person's lists of accounts they follow, each
/// with a timeline. Another's list is "Record not found". Account notes and familiar followers,
/// which the same profile screens show, are here too.
extension MastodonController {
    /// Familiar followers shown for each account, as Mastodon (which shows a handful).
    static let familiarPerAccount = 5

    func registerLists(_ v1: RouterGroup<PlazaContext>) {
        v1.get("lists", use: lists)
        v1.post("lists", use: createList)
        v1.get("lists/{id}", use: showList)
        v1.put("lists/{id}", use: updateList)
        v1.delete("lists/{id}", use: deleteList)
        v1.get("lists/{id}/accounts", use: listAccounts)
        v1.post("lists/{id}/accounts") { request, context in try await changeListAccounts(true, request, context) }
        v1.delete("lists/{id}/accounts") { request, context in try await changeListAccounts(false, request, context) }
        v1.get("accounts/{id}/lists", use: accountLists)
        v1.get("timelines/list/{id}", use: listTimeline)
        v1.post("accounts/{id}/note", use: setNote)
        v1.get("accounts/familiar_followers", use: familiarFollowers)
    }

    static func list(_ list: AccountList) -> Mastodon.List {
        Mastodon.List(
            id: String(list.id), title: list.title, repliesPolicy: list.repliesPolicy.rawValue,
            exclusive: list.exclusive)
    }

    @Sendable func lists(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:lists")
        return try MastodonJSON.response(try await actions.lists.lists(of: me.userID).map(Self.list))
    }

    @Sendable func showList(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:lists")
        let list = try await asMastodon { try await actions.lists.list(try id(context), of: me.userID) }
        return try MastodonJSON.response(Self.list(list))
    }

    static func listDraft(_ params: MastodonParams) -> ListActions.Draft {
        ListActions.Draft(
            title: params.string("title"), repliesPolicy: params.string("replies_policy"),
            exclusive: params.bool("exclusive"))
    }

    @Sendable func createList(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:lists")
        let params = try await MastodonParams.read(request, context: context)
        let list = try await actions.lists.create(by: me.userID, Self.listDraft(params))
        return try MastodonJSON.response(Self.list(list))
    }

    @Sendable func updateList(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:lists")
        let params = try await MastodonParams.read(request, context: context)
        let id = try id(context)
        let list = try await asMastodon { try await actions.lists.update(id, by: me.userID, Self.listDraft(params)) }
        return try MastodonJSON.response(Self.list(list))
    }

    @Sendable func deleteList(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:lists")
        let id = try id(context)
        try await asMastodon { try await actions.lists.delete(id, by: me.userID) }
        return try MastodonJSON.response([String: String]())
    }

    /// A list's accounts, highest id first, paged by account id (`limit=0`: all of them, as Mastodon).
    @Sendable func listAccounts(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:lists")
        let params = try await MastodonParams.read(request, context: context)
        let id = try id(context)
        let all = params.string("limit") == "0"
        let limit = all ? nil : try params.limit(default: 40, max: 80)
        let ids = try await asMastodon {
            try await actions.lists.accounts(
                of: id, by: me.userID, maxID: try params.id("max_id"),
                sinceID: try params.id("min_id") ?? params.id("since_id"), limit: limit.map { $0 + 1 })
        }
        let page = limit.map { Array(ids.prefix($0)) } ?? ids
        let users = Dictionary(
            try await people.profiles(ids: page, viewer: me.userID).map { ($0.id, $0) },
            uniquingKeysWith: { a, _ in a })
        let accounts = page.compactMap { users[String($0)].map { mapper.account($0) } }
        let headers = MastodonPaging.link(
            request, baseURL: config.baseURL, ids: page.map(String.init), hasMore: ids.count > page.count)
        return try MastodonJSON.response(accounts, headers: headers)
    }

    func changeListAccounts(_ adding: Bool, _ request: Request, _ context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:lists")
        let params = try await MastodonParams.read(request, context: context)
        let id = try id(context)
        var accounts: [Int64] = []
        for text in params.strings("account_ids").prefix(ListActions.maxAccounts + 1) {
            guard let account = Int64(text), account > 0 else {
                throw MastodonError.validation("account_ids must be account ids")
            }
            accounts.append(account)
        }
        try await asMastodon {
            if adding {
                try await actions.lists.add(accounts, to: id, by: me.userID)
            } else {
                try await actions.lists.remove(accounts, from: id, by: me.userID)
            }
        }
        return try MastodonJSON.response([String: String]())
    }

    /// My lists that hold the account.
    @Sendable func accountLists(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:lists")
        let account = try await profile(try id(context), viewer: me.userID)
        let lists = try await actions.lists.lists(of: me.userID, holding: Int64(account.id) ?? 0)
        return try MastodonJSON.response(lists.map(Self.list))
    }

    /// The posts and boosts of my list's accounts in my home timeline, newest first.
    @Sendable func listTimeline(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:lists")
        let list = try await asMastodon { try await actions.lists.list(try id(context), of: me.userID) }
        return try await timeline(
            .list(owner: me.userID, id: list.id), viewer: me.userID, request: request, context: context)
    }

    /// Sets my note on the account (`comment`; empty removes it): my relationship with it.
    @Sendable func setNote(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:accounts").userID
        let params = try await MastodonParams.read(request, context: context)
        let account = try id(context)
        try await asMastodon { try await actions.notes.set(params.string("comment") ?? "", by: me, on: account) }
        return try MastodonJSON.response(try await relationship(with: try await profile(account, viewer: me), me: me))
    }

    /// For each account asked (`id[]`, 40 at most), the people I follow who follow it.
    @Sendable func familiarFollowers(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("read:follows")
        let params = try await MastodonParams.read(request, context: context)
        var ids: [Int64] = []
        for text in params.strings("id").prefix(40) {
            guard let id = Int64(text), id > 0 else { throw MastodonError.validation("id must be account ids") }
            if !ids.contains(id) { ids.append(id) }
        }
        let familiar = try await people.familiarFollowers(
            of: ids, viewer: me.userID, perAccount: Self.familiarPerAccount)
        return try MastodonJSON.response(
            ids.map { id in
                Mastodon.FamiliarFollowers(
                    id: String(id), accounts: (familiar[id] ?? []).map { mapper.account($0) })
            })
    }

    /// The relationship of `me` with `user`, with my note on them.
    func relationship(with user: User, me: Int64) async throws -> Mastodon.Relationship {
        let id = Int64(user.id) ?? 0
        return Self.relationship(user, note: try await actions.notes.notes(by: me, on: [id])[id] ?? "")
    }
}
