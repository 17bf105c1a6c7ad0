import Foundation
import Logging
import NIOConcurrencyHelpers
import PlazaAPI
import ServiceLifecycle

/// How link previews are fetched.
public struct LinkPreviewSettings: Sendable {
    /// Addresses (CIDR blocks) that previews may fetch even though they are private
    /// (`PLAZA_LINK_PREVIEW_ALLOW`, parsed when the configuration is read).
    var allowed = AddressPolicy()
    /// False: fetch only allow-listed addresses and look up no names (closed networks, tests).
    public var publicAddresses = true
    public var timeout: Duration = .seconds(5)
    public var maxPageBytes = 1_048_576
    public var maxRedirects = 3
    /// Tries per URL before giving up; the wait doubles from `retryDelay` after each failure.
    public var attempts = 4
    public var retryDelay: Duration = .seconds(30)
    /// How often the queue is checked for URLs other app servers queued or whose retry is due.
    public var pollInterval: Duration = .seconds(2)
    /// Stand-ins for known sites' oEmbed endpoints, by the site's name (`OEmbedProvider.known`):
    /// the tests serve recorded answers from loopback.
    public var oEmbedEndpoints: [String: String] = [:]
    public init() {}
}

/// Background worker: takes due URLs off `link_previews`, fetches each page safely, reads its
/// OpenGraph / Twitter card / oEmbed / `<title>` metadata, runs the preview image through the
/// media pipeline, and copies the result onto every post and saved item waiting for it.
struct LinkPreviewService: Service {
    let store: LinkPreviewStore
    let fetcher: SafeFetcher
    let ingest: MediaIngest
    let ids: IDGenerator
    let queue: WorkSignal
    let settings: LinkPreviewSettings
    let uploadDirectory: String
    let maxImageBytes: Int
    /// The requester's storage quota, which preview images count against (0: none); over it,
    /// the preview has no image.
    var storageQuota: Int64 = 0
    let logger: Logger
    /// How many URLs are fetched at once.
    static let concurrency = 4

    func run() async throws {
        await queue.work(pollInterval: settings.pollInterval) { await runOnce() }
    }

    /// Processes one batch of due URLs; false when none was due.
    @discardableResult
    func runOnce(now: Int64 = Timestamp.now.milliseconds) async -> Bool {
        let lease = Int64(settings.timeout.components.seconds + 60) * 1000
        let jobs: [LinkPreviewStore.Job]
        do {
            jobs = try await store.claimDue(now: now, limit: Self.concurrency, leaseMillis: lease)
        } catch {
            logger.warning("Link preview queue unreadable: \(String(reflecting: error))")
            return false
        }
        guard !jobs.isEmpty else { return false }
        await withTaskGroup(of: Void.self) { group in
            for job in jobs { group.addTask { await process(job) } }
        }
        return true
    }

    func process(_ job: LinkPreviewStore.Job) async {
        guard job.attempts < settings.attempts else {
            // Its earlier attempts ended without a word: the process stopped mid-fetch.
            try? await store.finish(
                job.url, with: .failed(url: job.url, at: Timestamp.now.milliseconds),
                error: "gave up after \(job.attempts) attempts")
            return
        }
        do {
            let preview = try await fetchPreview(job)
            try await store.finish(job.url, with: preview)
        } catch let failure as SafeFetcher.Failure where failure.mayPass && job.attempts + 1 < settings.attempts {
            let delay = settings.retryDelay * (1 << job.attempts)
            logger.info("Link preview of \(job.url) failed (\(failure)); retrying in \(delay)")
            try? await store.retry(
                job.url, at: Timestamp.now.milliseconds + delay.milliseconds, error: failure.description)
        } catch {
            logger.info("Link preview of \(job.url) failed: \(error)")
            try? await store.finish(
                job.url, with: .failed(url: job.url, at: Timestamp.now.milliseconds), error: String(describing: error))
        }
    }

    struct NotAPage: Error, CustomStringConvertible {
        let contentType: String
        var description: String { "not an HTML page (\(contentType))" }
    }

    private func fetchPreview(_ job: LinkPreviewStore.Job) async throws -> LinkPreviewStore.Preview {
        // A known site's post: its oEmbed endpoint first, which says more than its page.
        var known: LinkMetadata?
        if let request = OEmbedProvider.request(for: job.url, endpoints: settings.oEmbedEndpoints),
            let linkURL = URL(string: job.url)
        {
            do {
                let json = try await fetcher.fetch(
                    request.url, maxBytes: Self.maxOEmbedBytes, accept: "application/json")
                let answer = LinkMetadata(
                    oEmbedJSON: json.body, pageURL: linkURL, textInHTML: request.provider.textInHTML)
                // An answer that says nothing (not JSON, no fields) leaves the page's own oEmbed to try.
                if answer != LinkMetadata() { known = answer }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.info("oEmbed of \(job.url) from \(request.provider.name) failed: \(error)")
            }
        }
        let metadata: LinkMetadata
        let host: String?
        do {
            let page = try await fetcher.fetch(
                job.url, maxBytes: settings.maxPageBytes, accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
            let type = page.contentType?.lowercased() ?? "text/html"
            guard type.contains("html") else { throw NotAPage(contentType: type) }
            var fromPage = LinkMetadata.parse(page.body, pageURL: page.url)
            if known == nil, let oEmbed = fromPage.oEmbedURL,
                fromPage.title == nil || fromPage.imageURL == nil || fromPage.siteName == nil,
                let json = try? await fetcher.fetch(oEmbed, maxBytes: Self.maxOEmbedBytes, accept: "application/json")
            {
                fromPage = fromPage.merging(oEmbedJSON: json.body, pageURL: page.url)
            }
            metadata = known?.filling(from: fromPage) ?? fromPage
            host = page.url.host
        } catch {
            // Sign-in walls and bot checks: the site's own answer is preview enough.
            guard let known, known.title != nil, !(error is CancellationError) else { throw error }
            logger.info("Link page \(job.url) not read (\(error)); previewed from its oEmbed")
            metadata = known
            host = nil
        }
        var image: String?
        if let imageURL = metadata.imageURL {
            // A transient failure of the image retries the whole preview, unless this is its last try.
            image = try await previewImage(
                imageURL, owner: job.requestedBy, retrying: job.attempts + 1 < settings.attempts)
        }
        return LinkPreviewStore.Preview(
            state: "ready", title: metadata.title, description: metadata.description, imageURL: image,
            siteName: metadata.siteName ?? host ?? URLComponents(string: job.url)?.host,
            fetchedAt: Timestamp.now.milliseconds)
    }

    static let maxOEmbedBytes = 256 * 1024

    /// The preview image, fetched under the same rules and processed like an upload; its
    /// medium variant's URL, or nil when it cannot be had (the preview simply has no image).
    /// The preview's image as one of Plaza's media, or nil when it cannot be had. A failure that
    /// may pass (a timeout, the site down) is thrown while `retrying`, so the preview is tried
    /// again rather than kept without its image for good.
    private func previewImage(_ url: String, owner: Int64, retrying: Bool) async throws -> String? {
        let id = ids.next()
        let path = "\(uploadDirectory)/preview-\(id)"
        defer { unlink(path) }
        do {
            let image = try await fetcher.fetch(url, maxBytes: maxImageBytes, accept: "image/*")
            guard !image.truncated else { return nil }
            try Data(image.body).write(to: URL(fileURLWithPath: path))
            let record = try await ingest.ingest(
                path: path, id: id, owner: owner, linkPreview: true, quota: storageQuota, logger: logger)
            return record.media.variants.medium
        } catch let failure as SafeFetcher.Failure where failure.mayPass && retrying {
            throw failure
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.info("Preview image \(url) skipped: \(error)")
            return nil
        }
    }
}
