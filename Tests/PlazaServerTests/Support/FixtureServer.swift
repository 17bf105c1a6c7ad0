import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

@testable import PlazaServer

/// A web server on 127.0.0.1 (a free port) that serves the link-preview fixture pages and the
/// awkward cases: redirects to private addresses, a slow page, a 5 MB page, a flaky page.
/// Absolute `https://` URLs in the fixtures are rewritten to `/remote/<host>/…` on this server,
/// so nothing a test fetches ever leaves loopback.
enum FixtureServer {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/links")

    /// How many times each path was requested.
    final class Hits: Sendable {
        private let counts = NIOLockedValueBox<[String: Int]>([:])
        func record(_ path: String) -> Int {
            counts.withLockedValue {
                $0[path, default: 0] += 1
                return $0[path]!
            }
        }
        func count(_ path: String) -> Int { counts.withLockedValue { $0[path] ?? 0 } }
    }

    /// The URL each known site's endpoint was last asked about, by the site's lower-cased name.
    static let asked = NIOLockedValueBox<[String: String]>([:])

    /// `LinkPreviewSettings.oEmbedEndpoints` that send every known site to this server.
    static func knownEndpoints(_ base: String) -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: OEmbedProvider.known.map { ($0.name, "\(base)/known/\($0.name.lowercased())") })
    }

    static func run(_ body: @Sendable (_ base: String, _ hits: Hits) async throws -> Void) async throws {
        let hits = Hits()
        let router = Router()
        router.middlewares.add(HitCounter(hits: hits))
        router.get("page/{name}") { request, context -> Response in
            let name = context.parameters.get("name") ?? ""
            guard name.allSatisfy({ $0.isLetter || $0.isNumber }),
                let data = FileManager.default.contents(atPath: directory.appendingPathComponent("\(name).html").path)
            else { return Response(status: .notFound) }
            let type = name == "latin1" ? "text/html" : "text/html; charset=utf-8"
            return Response(
                status: .ok, headers: [.contentType: type], body: .init(byteBuffer: rewrite(data, request: request)))
        }
        router.get("oembed") { request, _ in try oEmbed(request) }
        // The known sites' endpoints (`LinkPreviewSettings.oEmbedEndpoints`), with the URL asked about kept.
        router.get("known/{site}") { request, context -> Response in
            let site = context.parameters.get("site") ?? ""
            asked.withLockedValue { $0[site] = request.uri.queryParameters.get("url").map { String($0) } }
            guard site.allSatisfy({ $0.isLetter }),
                let data = FileManager.default.contents(
                    atPath: directory.deletingLastPathComponent().appendingPathComponent("oembed/\(site).json").path)
            else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: rewrite(data, request: request)))
        }
        router.get("remote/**") { request, _ -> Response in
            let path = request.uri.path
            if path.contains("tiktok.com/oembed") {
                let json =
                    #"{"version":"1.0","type":"video","title":"Tea & toast","author_name":"plazateam","provider_name":"TikTok"}"#
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: json)))
            }
            if path.contains("oembed") { return try oEmbed(request) }
            guard [".jpg", ".jpeg", ".png"].contains(where: path.hasSuffix) else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: try MediaFixtures.sample(.png))))
        }
        router.get("redirect/private") { _, _ in redirect("http://10.0.0.1/secret") }
        router.get("redirect/metadata") { _, _ in redirect("http://169.254.169.254/latest/meta-data/") }
        router.get("redirect/loop") { _, _ in redirect("/redirect/loop") }
        router.get("redirect/ok") { _, _ in redirect("/page/titleonly") }
        router.get("slow") { _, _ -> Response in
            try await Task.sleep(for: .seconds(4))
            return Response(
                status: .ok, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<title>Too late</title>")))
        }
        router.get("huge") { _, _ -> Response in
            var page = ByteBuffer(
                string: "<html><head><title>A huge page</title><meta property=\"og:description\" content=\"Big\">")
            page.writeRepeatingByte(UInt8(ascii: " "), count: 5 * 1_048_576)
            page.writeString("<meta property=\"og:title\" content=\"Beyond the cap\"></head></html>")
            return Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: page))
        }
        router.get("flaky") { _, _ -> Response in
            guard hits.count("/flaky") > 1 else { return Response(status: .serviceUnavailable) }
            return Response(
                status: .ok, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<title>Second time lucky</title>")))
        }
        // A page whose image fails the first time it is asked for.
        router.get("flaky-image") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/html"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"<title>Its image comes second</title><meta property="og:image" content="/flaky.png">"#
                    )))
        }
        router.get("flaky.png") { _, _ -> Response in
            guard hits.count("/flaky.png") > 1 else { return Response(status: .serviceUnavailable) }
            return Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: try MediaFixtures.sample(.png))))
        }
        router.get("gone") { _, _ in Response(status: .notFound) }
        router.get("images/**") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: try MediaFixtures.sample(.png))))
        }
        router.get("picture.png") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: try MediaFixtures.sample(.png))))
        }

        try await serve(router) { base in try await body(base, hits) }
    }

    /// Runs `router` on 127.0.0.1 (a free port) while `body` runs with its base URL.
    static func serve(_ router: Router<BasicRequestContext>, _ body: (_ base: String) async throws -> Void)
        async throws
    {
        let (ports, port) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fixtures")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                port.yield(channel.localAddress?.port ?? 0)
                port.finish()
            }, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var iterator = ports.makeAsyncIterator()
            guard let bound = await iterator.next() else { throw CancellationError() }
            try await body("http://127.0.0.1:\(bound)")
            group.cancelAll()
        }
    }

    /// The fixture with every `https://` turned into this server's `/remote/` (bytes, because
    /// one fixture is Latin-1).
    static func rewrite(_ data: Data, request: Request) -> ByteBuffer {
        var bytes = data
        let base = Data("http://\(request.head.authority ?? "127.0.0.1")/remote/".utf8)
        let needle = Data("https://".utf8)
        var start = bytes.startIndex
        while let found = bytes.range(of: needle, in: start..<bytes.endIndex) {
            bytes.replaceSubrange(found, with: base)
            start = found.lowerBound + base.count
        }
        return ByteBuffer(data: bytes)
    }

    static func oEmbed(_ request: Request) throws -> Response {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("oembed.json").path)
        else { return Response(status: .notFound) }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: rewrite(data, request: request)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }

    struct HitCounter: RouterMiddleware {
        typealias Context = BasicRequestContext
        let hits: Hits
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws -> Response
        {
            _ = hits.record(request.uri.path)
            return try await next(request, context)
        }
    }
}
