import Foundation
import PlazaAPI

/// Saved collections (seed app 002): the demo account's posts and links worth keeping. The
/// links' previews are read from pages kept here, by the same parser as fetched pages, and
/// their images drawn by Plaza, so seeding never reaches the network.
enum DemoCollections {
    struct Page {
        let url: String
        let html: String
        let colours: (String, String)
        let note: String
    }

    static let studyLinks = [
        Page(
            url: "https://demo.plaza.test/links/recursion-explained",
            html: page(
                title: "Recursion, explained with Russian dolls", site: "Plaza Demo Notes",
                description:
                    "A function that calls itself, and the base case that stops it: a gentle picture-first introduction."
            ), colours: ("#4f7cff", "#a1c4fd"), note: "For Marcus's question"),
        Page(
            url: "https://demo.plaza.test/links/chain-rule",
            html: page(
                title: "The chain rule in five minutes", site: "Plaza Demo Notes",
                description:
                    "Outside function first, inside kept, then multiply by the inside's derivative. With worked examples."
            ), colours: ("#8e44ad", "#c39bd3"), note: "Before the midterm"),
    ]

    static let kitchenLinks = [
        Page(
            url: "https://demo.plaza.test/links/sourdough-starter",
            html: page(
                title: "A sourdough starter in seven days", site: "Plaza Demo Kitchen",
                description: "Flour, water and patience: feed it daily and bake when it doubles in four hours."),
            colours: ("#d9a441", "#f6e7c1"), note: "Jon swears by this")
    ]

    static func page(title: String, site: String, description: String) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><title>\(title)</title>
        <meta property="og:title" content="\(title)"><meta property="og:site_name" content="\(site)">
        <meta property="og:description" content="\(description)"></head><body><h1>\(title)</h1></body></html>
        """
    }

    static func seed(_ world: DemoWorld) async throws {
        let demo = try world.id(DemoSeeder.demoUsername)
        let collections = world.actions.collections
        let study = try await collections.create(by: demo, name: "Study")
        let eats = try await collections.create(by: demo, name: "Weekend eats")
        guard let studyID = parseID(study.id), let eatsID = parseID(eats.id) else {
            throw CollectionStore.notFound
        }
        for (page, into) in studyLinks.map({ ($0, studyID) }) + kitchenLinks.map({ ($0, eatsID) }) {
            try await preview(page, for: demo, world)
            _ = try await collections.save(.link(page.url), note: page.note, into: into, by: demo)
        }
        // Posts worth keeping: the answered questions, and the food.
        for (author, into) in [("marcus", studyID), ("eatstagram", eatsID)] {
            for post in world.postIDs[author] ?? [] {
                _ = try await collections.save(.post(post), note: "", into: into, by: demo)
            }
        }
    }

    /// The link's preview as the preview worker would make it, from the page kept here, recorded
    /// before the link is saved so that the worker never fetches it.
    private static func preview(_ page: Page, for owner: Int64, _ world: DemoWorld) async throws {
        guard let url = URL(string: page.url) else { return }
        let metadata = LinkMetadata.parse(Array(page.html.utf8), pageURL: url)
        let picture = DemoPictures.Picture(
            from: page.colours.0, to: page.colours.1, caption: metadata.title, width: 1200, height: 630)
        let services = world.services
        let id = services.ids.next()
        let path = "\(services.uploadDirectory)/preview-\(id)"
        try FileManager.default.createDirectory(atPath: services.uploadDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(try picture.jpeg()).write(to: URL(fileURLWithPath: path))
        let image = try await services.ingest.ingest(
            path: path, id: id, owner: owner, linkPreview: true, quota: services.quotas.storageBytes,
            logger: world.logger)
        try await services.linkPreviews.record(
            page.url,
            LinkPreviewStore.Preview(
                state: "ready", title: metadata.title, description: metadata.description,
                imageURL: image.media.variants.medium, siteName: metadata.siteName,
                fetchedAt: Timestamp.now.milliseconds),
            requestedBy: owner)
    }
}
