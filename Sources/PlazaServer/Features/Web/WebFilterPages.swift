import Hummingbird
import PlazaAPI

/// `/settings/filters`: a person's keyword filters, to add and remove. The forms call the JSON
/// API (`/me/filters`), so the core decides as it does for every door.
struct WebFilterPages: FeatureRoutes {
    let web: WebController
    let filters: KeywordFilterActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("settings/filters", use: page)
        return routes
    }

    @Sendable func page(_ request: Request, context: SignedInContext) async throws -> Response {
        let t = web.localizer(context.base)
        let items = try await filters.list(by: context.user.userID)
        let body = FiltersPage(items, t: t)
        return try await web.page(
            "filters", title: t("Filters"), nav: .settings, body, request: request, context: context.base)
    }
}

/// `filters.mustache`.
struct FiltersPage: Sendable {
    struct Item: Sendable {
        let id: String
        let phrase: String
        /// "Home, Public · hide", as the reader's language says it.
        let summary: String
        let expires: String?
        let expired: Bool
    }
    struct Context: Sendable {
        let value: String
        let label: String
        let checked: Bool
    }
    let items: [Item]
    let contexts: [Context]
    let maxFilters: Int

    init(_ filters: [KeywordFilter], t: Localizer, now: Timestamp = .now) {
        items = filters.map { filter in
            let places = filter.contexts.map { Self.label($0, t: t) }.joined(separator: ", ")
            let action = filter.action == .hide ? t("hidden") : t("folded away")
            let kind = filter.wholeWord ? t("whole word") : t("anywhere in a word")
            return Item(
                id: filter.id, phrase: filter.phrase, summary: "\(places) · \(action) · \(kind)",
                expires: filter.expiresAt.map { t.dateTime($0) }, expired: !filter.isActive(at: now))
        }
        contexts = FilterContext.allCases.map {
            Context(value: $0.rawValue, label: Self.label($0, t: t), checked: $0 == .home || $0 == .public)
        }
        maxFilters = KeywordFilterActions.maxPerPerson
    }

    static func label(_ context: FilterContext, t: Localizer) -> String {
        switch context {
        case .home: t("Home feed")
        case .notifications: t("Notifications")
        case .public: t("Public feeds and search")
        case .thread: t("Posts and their comments")
        case .profile: t("Profiles")
        }
    }
}
