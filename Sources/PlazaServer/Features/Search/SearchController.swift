import Hummingbird
import PlazaAPI

/// Search: posts by full text (`q`, `in`, `space`, `kind`), accounts by name, and the caller's
/// saved items.
struct SearchController: FeatureRoutes {
    let search: SearchStore
    let spaces: SpaceStore
    let collections: CollectionStore

    static let maxQueryLength = 1_000

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("search/posts", use: searchPosts)
        routes.get("search/users", use: searchUsers)
        signedIn.get("search/saved", use: searchSaved)
        return routes
    }

    /// The search text of a `q` parameter, or a 422 naming it.
    static func text(_ q: String) throws -> SearchText {
        guard q.count <= maxQueryLength else {
            throw PlazaError.invalid("q", "q must be at most \(maxQueryLength) characters.")
        }
        guard let text = SearchText(q) else { throw PlazaError.invalid("q", "q needs at least one word.") }
        return text
    }

    @Sendable func searchPosts(_ request: Request, context: PlazaContext) async throws -> Page<Post> {
        let near = try Self.near(request.query("near"), radius: request.query("radiusKm"))
        let q = request.query("q")
        let text: SearchText? = near != nil && (q ?? "").isEmpty ? nil : try Self.text(q ?? "")
        let page = try rankedPage(request)
        var query = SearchStore.PostQuery(
            text: text, field: try request.enumParameter("in", as: SearchText.Field.self) ?? .all,
            kind: try request.enumParameter("kind", as: PostKind.self), near: near, page: page)
        if try request.boolParameter("followed") {
            guard let viewer = context.viewerID else { throw PlazaError.unauthorized }
            query.followedBy = viewer
        }
        if let slug = request.query("space") {
            do {
                query.space = try await spaces.key(slug: slug, viewer: context.viewerID).id
            } catch let error as PlazaError where error.status == .notFound {
                throw PlazaError(.unprocessableContent, "unknown_space", "There is no space \(slug).", field: "space")
            }
        }
        return try await search.posts(query, viewer: context.viewerID)
    }

    static let maxRadiusKm = 500.0
    static let defaultRadiusKm = 10.0

    /// `near=lat,lon` and `radiusKm=` (default 10, at most 500), or 422s naming them.
    static func near(_ near: String?, radius: String?) throws -> SearchStore.Near? {
        guard let near else {
            if radius != nil { throw PlazaError.invalid("radiusKm", "radiusKm needs near=latitude,longitude.") }
            return nil
        }
        let parts = near.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard parts.count == 2, let latitude = parts[0], let longitude = parts[1], latitude.isFinite,
            longitude.isFinite,
            (-90...90).contains(latitude), (-180...180).contains(longitude)
        else {
            throw PlazaError.invalid(
                "near", "near must be latitude,longitude with latitude -90…90 and longitude -180…180.")
        }
        var radiusKm = defaultRadiusKm
        if let radius {
            guard let value = Double(radius), value.isFinite, value > 0, value <= maxRadiusKm else {
                throw PlazaError.invalid(
                    "radiusKm", "radiusKm must be a number above 0 and at most \(Int(maxRadiusKm)).")
            }
            radiusKm = value
        }
        return SearchStore.Near(latitude: latitude, longitude: longitude, radiusKm: radiusKm)
    }

    /// A ranked search's page request: a cursor must come from a ranked search.
    private func rankedPage(_ request: Request) throws -> PageRequest {
        let page = try request.pageRequest()
        if let cursor = page.cursor, cursor.score == nil {
            throw PlazaError(
                .badRequest, "invalid_cursor", "The cursor is not one this search gave out.", field: "cursor")
        }
        return page
    }

    @Sendable func searchUsers(_ request: Request, context: PlazaContext) async throws -> Page<User> {
        let text = try Self.text(request.uri.queryParameters.get("q") ?? "")
        return try await search.users(text, page: rankedPage(request), viewer: context.viewerID)
    }

    @Sendable func searchSaved(_ request: Request, context: SignedInContext) async throws -> Page<CollectionItem> {
        let me = context.user
        let text = try Self.text(request.uri.queryParameters.get("q") ?? "")
        return try await search.saved(text, owner: me.userID, page: request.pageRequest(), collections: collections)
    }
}
