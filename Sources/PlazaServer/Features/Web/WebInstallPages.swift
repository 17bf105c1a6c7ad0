import Foundation
import Hummingbird
import PlazaAPI

/// What makes the web app installable: the manifest, the service worker, and the share
/// target (`/share`) that a link shared from another app opens to save it to a collection.
struct WebInstallPages: FeatureRoutes {
    let web: WebController

    /// The share target's page and form (the manifest and the service worker are served
    /// before the web app's middleware: `WebController.routes`).
    var routes: RouteCollection<PlazaContext> {
        let (routes, signedIn) = RouteCollection.withSignedIn()
        signedIn.get("share", use: sharePage)
        signedIn.post("share", use: share)
        return routes
    }

    @Sendable func manifest(_ request: Request, context: PlazaContext) async throws -> Response {
        let version = web.renderer.assetVersion
        let name = try await web.api.accounts.instance.currentName()
        let manifest = Manifest(
            name: name, shortName: String(name.prefix(12)),
            icons: [
                ("icon-192.png", "192x192", "image/png"), ("icon-512.png", "512x512", "image/png"),
                ("icon.svg", "any", "image/svg+xml"),
            ].map {
                Manifest.Icon(src: "/assets/\($0.0)?v=\(version)", sizes: $0.1, type: $0.2)
            })
        return Response(
            status: .ok,
            headers: [.contentType: "application/manifest+json", .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(data: try JSON.encoder.encode(manifest))))
    }

    /// The web app manifest's members (W3C Web Application Manifest, Web Share Target).
    struct Manifest: Encodable {
        struct Icon: Encodable {
            var src: String
            var sizes: String
            var type: String
            var purpose = "any"
        }
        struct ShareTarget: Encodable {
            var action = "/share"
            var method = "GET"
            var enctype = "application/x-www-form-urlencoded"
            var params = ["title": "title", "text": "text", "url": "url"]
        }
        var id = "/"
        var name: String
        var shortName: String
        var description = "Posts, spaces and collections with the people you follow."
        var startURL = "/"
        var scope = "/"
        var display = "standalone"
        var backgroundColor = "#ffffff"
        var themeColor = "#3451d1"
        var icons: [Icon]
        var shareTarget = ShareTarget()

        enum CodingKeys: String, CodingKey {
            case id, name, description, scope, display, icons
            case shortName = "short_name"
            case startURL = "start_url"
            case backgroundColor = "background_color"
            case themeColor = "theme_color"
            case shareTarget = "share_target"
        }
    }

    /// Served from the root so that it may control every page; never cached by HTTP, so a new
    /// version is found on the next visit.
    @Sendable func serviceWorker(_ request: Request, context: PlazaContext) async throws -> Response {
        guard let script = web.renderer.assets["sw.js"] else { throw PlazaError.notFound("The service worker") }
        return Response(
            status: .ok,
            headers: [.contentType: script.contentType, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"],
            body: .init(byteBuffer: script.body))
    }

    /// The shared link: `url`, or the first http(s) URL in `text` (apps that share text only).
    static func sharedURL(url: String?, text: String?) -> String? {
        if let url, let valid = try? Validate.url(url, field: "url") { return valid }
        for word in (text ?? "").split(whereSeparator: \.isWhitespace) {
            let candidate = String(word)
            if candidate.lowercased().hasPrefix("http://") || candidate.lowercased().hasPrefix("https://"),
                let valid = try? Validate.url(candidate, field: "url")
            {
                return valid
            }
        }
        return nil
    }

    struct ShareForm: Decodable {
        var url: String?
        var title: String?
        var collection: String?
        var newName: String?
        var note: String?
        var _csrf: String?
    }

    @Sendable func sharePage(_ request: Request, context: SignedInContext) async throws -> Response {
        let url = Self.sharedURL(url: request.query("url"), text: request.query("text"))
        let title = request.query("title").map { String($0.prefix(200)) }
        return try await page(SharePage(url: url, title: title), request: request, context: context)
    }

    /// Saves the link into the chosen collection, or a new one named in the same step.
    @Sendable func share(_ request: Request, context: SignedInContext) async throws -> Response {
        let me = context.user
        let form = try await web.form(ShareForm.self, request, context: context.base)
        try web.checkCSRF(form._csrf, request, context: context.base)
        // Only a link that is one goes back into the page.
        let checkedURL = try? Validate.url(form.url ?? "", field: "url")
        var view = SharePage(
            url: checkedURL, title: form.title.map { String($0.prefix(200)) }, note: form.note ?? "",
            newName: form.newName ?? "")
        do {
            let url = try Validate.url(form.url ?? "", field: "url")
            let note = try Validate.text(form.note, field: "note", max: CollectionRules.maxNoteLength) ?? ""
            let destination: CollectionActions.Destination
            if let chosen = form.collection, chosen != "new", !chosen.isEmpty {
                destination = .collection(try Validate.id(chosen, field: "collection"))
            } else {
                destination = .new(
                    name: try Validate.requiredText(form.newName, field: "newName", max: CollectionRules.maxNameLength))
            }
            let collection = try await web.actions.collections.save(
                link: url, note: note, into: destination, by: me.userID)
            return WebController.redirect(to: "/collections/\(collection)")
        } catch let error as PlazaError {
            view.error = error.message
            view.chosen = form.collection
            return try await page(view, request: request, context: context, status: error.status)
        }
    }

    private func page(
        _ view: SharePage, request: Request, context: SignedInContext, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        var view = view
        let mine = try await web.stores.collections.list(
            owner: context.user.userID, page: PageRequest(limit: 100, cursor: nil))
        view.collections = mine.items.map { .init(id: $0.id, name: $0.name, selected: $0.id == view.chosen) }
        if view.chosen == nil { view.collections.indices.first.map { view.collections[$0].selected = true } }
        if let url = view.url { view.preview = try await web.stores.linkPreviews.known(url) }
        let t = web.localizer(context.base)
        return try await web.page(
            "share", title: t("Save a link"), view, request: request, context: context.base, status: status)
    }
}

/// `share.mustache`: the shared link, its preview when one is known, and where to save it.
struct SharePage: Sendable {
    var url: String?
    var title: String?
    var note = ""
    var newName = ""
    var error: String?
    var chosen: String?
    var preview: LinkPreview?
    var collections: [CollectionChoice] = []

    struct CollectionChoice: Sendable {
        let id: String
        let name: String
        var selected: Bool
    }
}
