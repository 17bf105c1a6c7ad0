import Hummingbird
import PlazaAPI

/// What makes a space valid.
enum SpaceRules {
    static let maxSlugLength = 40
    static let maxNameLength = 80
    static let maxDescriptionLength = 2_000
    /// How many spaces one post may be in.
    static let maxSpacesPerPost = 10

    /// 2–40 characters of a–z, 0–9, `-` and `_`, starting with a letter or digit; lower-cased.
    static func slug(_ value: String, field: String = "slug") throws -> String {
        let bytes = Array(value.lowercased().utf8)
        func isAlphanumeric(_ b: UInt8) -> Bool { (b >= 97 && b <= 122) || (b >= 48 && b <= 57) }
        guard (2...maxSlugLength).contains(bytes.count), isAlphanumeric(bytes[0]),
            bytes.allSatisfy({ isAlphanumeric($0) || $0 == 45 || $0 == 95 })
        else {
            throw PlazaError.invalid(
                field,
                "\(field) must be 2–\(maxSlugLength) characters of a–z, 0–9, - and _, starting with a letter or digit.")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The slugs a post names, lower-cased, each once, at most `maxSpacesPerPost`.
    static func postSpaces(_ values: [String]) throws -> [String] {
        guard values.count <= maxSpacesPerPost else {
            throw PlazaError.invalid("spaces", "A post can be in at most \(maxSpacesPerPost) spaces.")
        }
        var seen = Set<String>()
        return try values.map { try slug($0, field: "spaces") }.filter { seen.insert($0).inserted }
    }

    /// One line of text: a post shows its spaces' names as lines.
    static func name(_ value: String?) throws -> String {
        let name = try Validate.requiredText(value, field: "name", max: maxNameLength)
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw PlazaError.invalid("name", "name must be one line without control characters.")
        }
        return name
    }
}

/// Spaces: create, edit, list, join and leave. A space's feed is served by `FeedsController`.
struct SpacesController: FeatureRoutes {
    let spaces: SpaceStore
    let accounts: AccountStore
    let actions: SpaceActions

    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        routes.get("spaces", use: list)
        routes.get("spaces/{slug}", use: get)
        signedIn.post("spaces", use: create)
        signedIn.patch("spaces/{slug}", use: update)
        signedIn.put("spaces/{slug}/membership", use: join)
        signedIn.delete("spaces/{slug}/membership", use: leave)
        return routes
    }

    @Sendable func list(_ request: Request, context: PlazaContext) async throws -> Page<Space> {
        var query = SpaceStore.ListQuery(page: try request.pageRequest())
        if let q = request.uri.queryParameters.get("q") {
            query.text = try Validate.text(q, field: "q", max: 100)?.lowercased()
        }
        if try request.boolParameter("member") {
            guard let me = context.identity else { throw PlazaError.unauthorized }
            query.memberOf = me.userID
        }
        return try await spaces.list(query, viewer: context.viewerID)
    }

    @Sendable func create(_ request: Request, context: SignedInContext) async throws -> EditedResponse<Space> {
        let me = context.user
        let body = try await request.decode(as: CreateSpaceRequest.self, context: context)
        let draft = SpaceStore.Draft(
            slug: try SpaceRules.slug(body.slug), name: try SpaceRules.name(body.name),
            description: try Validate.text(body.description, field: "description", max: SpaceRules.maxDescriptionLength)
                ?? "",
            imageID: try body.imageId.map { try Validate.id($0, field: "imageId") },
            visibility: body.visibility ?? .open)
        return EditedResponse(status: .created, response: try await actions.create(by: me.userID, draft))
    }

    /// The space; a signed-in viewer's `lastSpace` preference becomes this space, so apps can
    /// reopen it.
    @Sendable func get(_ request: Request, context: PlazaContext) async throws -> Space {
        let space = try await spaces.space(slug: context.parameters.string("slug"), viewer: context.viewerID)
        if let viewer = context.viewerID {
            try await accounts.setPreference("lastSpace", to: .string(space.slug), userID: viewer)
        }
        return space
    }

    @Sendable func update(_ request: Request, context: SignedInContext) async throws -> Space {
        let body = try await request.decode(as: UpdateSpaceRequest.self, context: context)
        var changes = SpaceStore.Changes()
        changes.name = try body.name.map { try SpaceRules.name($0) }
        changes.visibility = body.visibility
        changes.description = try body.description.map {
            try Validate.text($0, field: "description", max: SpaceRules.maxDescriptionLength) ?? ""
        }
        switch body.imageId {
        case .keep: break
        case .clear: changes.imageID = .clear
        case .set(let id): changes.imageID = .set(try Validate.id(id, field: "imageId"))
        }
        return try await actions.update(
            context.parameters.string("slug"), by: context.user.userID, changes, logger: context.logger)
    }

    @Sendable func join(_ request: Request, context: SignedInContext) async throws -> Space {
        try await actions.join(context.parameters.string("slug"), by: context.user.userID)
    }

    @Sendable func leave(_ request: Request, context: SignedInContext) async throws -> Space {
        try await actions.leave(context.parameters.string("slug"), by: context.user.userID)
    }
}
