import PlazaAPI

/// A person's keyword filters, decided once for every door: the JSON API (`/me/filters`), the
/// web app's Filters page and Mastodon's filters v1 and v2 call these with their input made
/// into `CreateKeywordFilterRequest` / `UpdateKeywordFilterRequest`. The limits live here.
package struct KeywordFilterActions: Sendable {
    let filters: KeywordFilterStore

    /// Characters in a phrase, after trimming.
    package static let maxPhraseLength = 100
    /// Filters a person may have that have not expired.
    package static let maxPerPerson = 100

    static let tooMany = PlazaError(
        .unprocessableContent, "too_many_filters", "You have \(maxPerPerson) filters: remove one to add another.")

    package func list(by person: Int64) async throws -> [KeywordFilter] {
        try await filters.list(user: person)
    }

    /// One of `person`'s filters; 404 for any other id, someone else's too.
    package func filter(_ id: Int64, by person: Int64) async throws -> KeywordFilter {
        guard let filter = try await filters.filter(id: id, user: person) else { throw Self.notFound }
        return filter
    }

    package func create(by person: Int64, _ request: CreateKeywordFilterRequest, now: Timestamp = .now)
        async throws -> KeywordFilter
    {
        let fields = KeywordFilterStore.Fields(
            phrase: try Self.phrase(request.phrase), wholeWord: request.wholeWord ?? true,
            contexts: try Self.contexts(request.contexts), action: try Self.action(request.action ?? "warn"),
            expiresAt: try Self.expiry(request.expiresAt, now: now))
        guard
            let filter = try await filters.create(user: person, fields, limit: Self.maxPerPerson, now: now.milliseconds)
        else { throw Self.tooMany }
        return filter
    }

    /// Changes the fields `request` gives of `person`'s filter `id`; 404 for another's.
    package func update(_ id: Int64, by person: Int64, _ request: UpdateKeywordFilterRequest, now: Timestamp = .now)
        async throws -> KeywordFilter
    {
        let current = try await filter(id, by: person)
        var expiresAt = current.expiresAt?.milliseconds
        switch request.expiresAt {
        case .keep: break
        case .clear: expiresAt = nil
        case .set(let time): expiresAt = try Self.expiry(time, now: now)
        }
        let fields = KeywordFilterStore.Fields(
            phrase: try request.phrase.map(Self.phrase) ?? current.phrase,
            wholeWord: request.wholeWord ?? current.wholeWord,
            contexts: try request.contexts.map(Self.contexts) ?? current.contexts,
            action: try request.action.map(Self.action) ?? current.action, expiresAt: expiresAt)
        guard try await filters.update(id: id, user: person, fields) else { throw Self.notFound }
        return try await filter(id, by: person)
    }

    package func delete(_ id: Int64, by person: Int64) async throws {
        guard try await filters.delete(id: id, user: person) else { throw Self.notFound }
    }

    /// `viewer`'s filters that apply in `context` now (none when signed out).
    package func matcher(for viewer: Int64?, in context: FilterContext) async throws -> KeywordFilters {
        try await filters.matcher(for: viewer, in: context)
    }

    static let notFound = PlazaError.notFound("Filter")

    static func phrase(_ value: String) throws -> String {
        try Validate.requiredText(value, field: "phrase", max: maxPhraseLength)
    }

    static func contexts(_ values: [String]) throws -> [FilterContext] {
        var contexts: [FilterContext] = []
        for value in values {
            guard let context = FilterContext(rawValue: value) else {
                throw PlazaError.invalid("contexts", "contexts are home, notifications, public, thread or profile.")
            }
            if !contexts.contains(context) { contexts.append(context) }
        }
        guard !contexts.isEmpty else { throw PlazaError.invalid("contexts", "Name at least one context.") }
        return contexts
    }

    static func action(_ value: String) throws -> FilterAction {
        guard let action = FilterAction(rawValue: value) else {
            throw PlazaError.invalid("action", "action must be hide or warn.")
        }
        return action
    }

    static func expiry(_ time: Timestamp?, now: Timestamp) throws -> Int64? {
        guard let time else { return nil }
        guard time > now else { throw PlazaError.invalid("expiresAt", "expiresAt must be in the future.") }
        return time.milliseconds
    }
}
