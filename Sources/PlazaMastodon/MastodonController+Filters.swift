import Foundation
import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's filters, v2 (`/api/v2/filters`, their keywords) and v1 (`/api/v1/filters`), over
/// Plaza's keyword filters (`KeywordFilterActions`). Plaza has one phrase a filter, so a
/// Mastodon filter is one Plaza filter with its one keyword, which shares the filter's id and
/// whose phrase is also the filter's title: creating one with several `keywords_attributes` is a
/// 422; adding a keyword to a filter replaces its phrase; removing its keyword removes the filter.
/// Contexts: Mastodon's `account` is Plaza's `profile`; `filter_action` is `warn` or `hide`.
extension MastodonController {
    func registerFilters(v1: RouterGroup<PlazaContext>, v2: RouterGroup<PlazaContext>) {
        v2.get("filters") { _, context in try await filters(context, mapper.filter) }
        v2.post("filters", use: createFilterV2)
        v2.get("filters/keywords/{id}") { _, context in try await filter(context, mapper.keyword) }
        v2.put("filters/keywords/{id}", use: updateFilterKeyword)
        v2.delete("filters/keywords/{id}", use: deleteFilter)
        v2.get("filters/{id}") { _, context in try await filter(context, mapper.filter) }
        v2.put("filters/{id}", use: updateFilterV2)
        v2.delete("filters/{id}", use: deleteFilter)
        v2.get("filters/{id}/keywords") { _, context in try await filter(context) { [mapper.keyword($0)] } }
        v2.post("filters/{id}/keywords", use: updateFilterKeyword)
        v1.get("filters") { _, context in try await filters(context, mapper.filterV1) }
        v1.post("filters", use: createFilterV1)
        v1.get("filters/{id}") { _, context in try await filter(context, mapper.filterV1) }
        v1.put("filters/{id}", use: updateFilterV1)
        v1.delete("filters/{id}", use: deleteFilter)
    }

    /// My filters, as `entity` renders each.
    func filters(_ context: PlazaContext, _ entity: (KeywordFilter) -> some Encodable) async throws -> Response {
        let me = try context.mastodonUser("read:filters")
        return try MastodonJSON.response(try await actions.filters.list(by: me.userID).map(entity))
    }

    /// My filter named in the path (404 for anyone else's), as `entity` renders it.
    func filter(_ context: PlazaContext, _ entity: (KeywordFilter) -> some Encodable) async throws -> Response {
        let me = try context.mastodonUser("read:filters")
        let filter = try await asMastodon { try await actions.filters.filter(try id(context), by: me.userID) }
        return try MastodonJSON.response(entity(filter))
    }

    /// Changes my filter named in the path with `body` (404 for anyone else's); `entity` renders it.
    func change(
        _ context: PlazaContext, _ body: UpdateKeywordFilterRequest, _ entity: (KeywordFilter) -> some Encodable
    ) async throws -> Response {
        let me = try context.mastodonUser("write:filters")
        let filter = try await asMastodon { try await actions.filters.update(try id(context), by: me.userID, body) }
        return try MastodonJSON.response(entity(filter))
    }

    // MARK: v2

    @Sendable func createFilterV2(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:filters")
        let params = try await MastodonParams.read(request, context: context)
        let keyword = try Self.keyword(params)
        let body = CreateKeywordFilterRequest(
            phrase: keyword?.keyword ?? params.string("title") ?? "", wholeWord: keyword?.wholeWord ?? true,
            contexts: Self.contexts(params), action: params.string("filter_action") ?? "warn",
            expiresAt: try Self.expiry(params))
        let filter = try await asMastodon { try await actions.filters.create(by: me.userID, body) }
        return try MastodonJSON.response(mapper.filter(filter))
    }

    @Sendable func updateFilterV2(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let keyword = try Self.keyword(params)
        let body = UpdateKeywordFilterRequest(
            phrase: keyword?.keyword, wholeWord: keyword?.wholeWord,
            contexts: params.strings("context").isEmpty ? nil : Self.contexts(params),
            action: params.string("filter_action"), expiresAt: try Self.expiryUpdate(params))
        return try await change(context, body, mapper.filter)
    }

    /// Removes the filter (its keyword's id is the filter's): `{}`.
    @Sendable func deleteFilter(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:filters")
        try await asMastodon { try await actions.filters.delete(try id(context), by: me.userID) }
        return try MastodonJSON.response([String: String]())
    }

    /// `POST /filters/{id}/keywords` and `PUT /filters/keywords/{id}`: the filter's one phrase
    /// becomes `keyword`.
    @Sendable func updateFilterKeyword(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let body = UpdateKeywordFilterRequest(phrase: params.string("keyword"), wholeWord: params.bool("whole_word"))
        return try await change(context, body, mapper.keyword)
    }

    // MARK: v1

    @Sendable func createFilterV1(_ request: Request, context: PlazaContext) async throws -> Response {
        let me = try context.mastodonUser("write:filters")
        let params = try await MastodonParams.read(request, context: context)
        let body = CreateKeywordFilterRequest(
            phrase: params.string("phrase") ?? "", wholeWord: params.bool("whole_word") ?? true,
            contexts: Self.contexts(params), action: params.bool("irreversible") == true ? "hide" : "warn",
            expiresAt: try Self.expiry(params))
        let filter = try await asMastodon { try await actions.filters.create(by: me.userID, body) }
        return try MastodonJSON.response(mapper.filterV1(filter))
    }

    @Sendable func updateFilterV1(_ request: Request, context: PlazaContext) async throws -> Response {
        let params = try await MastodonParams.read(request, context: context)
        let body = UpdateKeywordFilterRequest(
            phrase: params.string("phrase"), wholeWord: params.bool("whole_word"),
            contexts: params.strings("context").isEmpty ? nil : Self.contexts(params),
            action: params.bool("irreversible").map { $0 ? "hide" : "warn" }, expiresAt: try Self.expiryUpdate(params))
        return try await change(context, body, mapper.filterV1)
    }

    // MARK: parameters

    /// `context[]`, Mastodon's names made Plaza's (an unknown one stays, for the core to refuse).
    static func contexts(_ params: MastodonParams) -> [String] {
        params.strings("context").map { $0 == "account" ? FilterContext.profile.rawValue : $0 }
    }

    /// The one keyword of `keywords_attributes`, if any. Plaza keeps one phrase a filter, so a
    /// filter of several keywords cannot be kept as asked: 422.
    static func keyword(_ params: MastodonParams) throws -> (keyword: String, wholeWord: Bool?)? {
        let keywords = keywords(params)
        guard keywords.count <= 1 else {
            throw MastodonError.validation("Plaza keeps one keyword a filter: make a filter for each keyword")
        }
        return keywords.first
    }

    /// `keywords_attributes` as forms (`keywords_attributes[][keyword]`, `…[0][keyword]`) and
    /// JSON (`[{keyword, whole_word}]`) send them; those marked `_destroy` left out.
    static func keywords(_ params: MastodonParams) -> [(keyword: String, wholeWord: Bool?)] {
        var found: [(keyword: String, wholeWord: Bool?)] = []
        let prefixes = ["keywords_attributes", "keywords_attributes[]"] + (0..<10).map { "keywords_attributes[\($0)]" }
        for prefix in prefixes {
            let keywords = params.strings("\(prefix)[keyword]")
            let wholeWords = params.strings("\(prefix)[whole_word]")
            let destroyed = params.strings("\(prefix)[_destroy]")
            for (index, keyword) in keywords.enumerated() {
                if index < destroyed.count, ["true", "1"].contains(destroyed[index]) { continue }
                let wholeWord = index < wholeWords.count ? ["true", "1", "on", "t"].contains(wholeWords[index]) : nil
                found.append((keyword, wholeWord))
            }
        }
        return found
    }

    /// `expires_in` seconds from now; none when absent or empty.
    static func expiry(_ params: MastodonParams) throws -> Timestamp? {
        guard let text = params.string("expires_in"), !text.isEmpty else { return nil }
        guard let seconds = Int64(text), seconds > 0, seconds < 100 * 365 * 86_400 else {
            throw MastodonError.validation("expires_in is not a number of seconds")
        }
        return Timestamp(milliseconds: Timestamp.now.milliseconds + seconds * 1000)
    }

    /// On an update: absent keeps the expiry, empty makes it never expire.
    static func expiryUpdate(_ params: MastodonParams) throws -> FieldUpdate<Timestamp> {
        guard let text = params.string("expires_in") else { return .keep }
        if text.isEmpty { return .clear }
        return try expiry(params).map { .set($0) } ?? .clear
    }
}
