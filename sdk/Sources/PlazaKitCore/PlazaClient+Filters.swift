import PlazaAPI

// MARK: keyword filters

extension PlazaClient {
    /// My keyword filters, expired ones too.
    public func filters() async throws -> [KeywordFilter] {
        let page: Page<KeywordFilter> = try await call("GET", "/me/filters")
        return page.items
    }

    /// Adds a filter: posts and comments whose text has `phrase` (folded, as search folds it) are
    /// hidden, or shown behind a warning, in `contexts`.
    @discardableResult
    public func createFilter(
        phrase: String, contexts: [FilterContext], action: FilterAction = .warn, wholeWord: Bool = true,
        expiresAt: Timestamp? = nil
    ) async throws -> KeywordFilter {
        try await call(
            "POST", "/me/filters",
            body: CreateKeywordFilterRequest(
                phrase: phrase, wholeWord: wholeWord, contexts: contexts.map(\.rawValue), action: action.rawValue,
                expiresAt: expiresAt))
    }

    /// Changes the fields of `changes` that are set.
    @discardableResult
    public func updateFilter(_ id: String, _ changes: UpdateKeywordFilterRequest) async throws -> KeywordFilter {
        try await call("PATCH", "/me/filters/\(Self.segment(id))", body: changes)
    }

    public func deleteFilter(_ id: String) async throws {
        try await send("DELETE", "/me/filters/\(Self.segment(id))")
    }

    /// My filters for `context`, ready to apply to what this client caches or streams
    /// (`KeywordFilters.apply(to:)`, `verdict(for:)`): the server's own rules, from PlazaAPI.
    public func filterMatcher(for context: FilterContext, viewer: String? = nil) async throws -> KeywordFilters {
        KeywordFilters(try await filters(), context: context, viewer: viewer)
    }
}

extension FeedSource {
    /// Where a person's keyword filters see this feed, as the server decides it.
    public var filterContext: FilterContext {
        switch self {
        case .home: .home
        case .global, .space, .tag: .public
        case .user: .profile
        }
    }
}
