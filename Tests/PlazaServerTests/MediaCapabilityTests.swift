import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Capability URLs (`MediaCapabilities`): the media of followers-only and space posts reach
/// Mastodon apps, whose image loaders send no credentials, through URLs signed for their reader,
/// which expire and stop working once the reader may no longer read the post.
@Suite("Media capability URLs")
struct MediaCapabilityTests {
    /// Ana's followers-only photo post, Ben following her, and Ben's Mastodon token.
    struct World {
        var ana: Account
        var ben: Account
        var post: Post
        var benToken: String
    }

    static func world(_ api: TestAPI, audience: PostAudience = .followers) async throws -> World {
        let (ana, ben) = try await api.register("ana", "ben")
        try await api.follow(ben, "ana")
        let media = try await api.uploaded(try MediaFixtures.sample(.jpeg, width: 800, height: 600), as: ana)
        let post = try await api.post(
            ana, CreatePostRequest(kind: .photo, body: "for my friends", mediaIds: [media.id], audience: audience))
        return World(ana: ana, ben: ben, post: post, benToken: try await api.mastodonToken(ben))
    }

    /// The first attachment's `url` and `preview_url` of status `id` as the token's holder reads
    /// it, as paths on the server.
    static func attachment(_ api: TestAPI, status id: String, token: String) async throws -> (
        url: String, preview: String
    ) {
        let response = try await api.mastodon(.get, "/api/v1/statuses/\(id)", token: token)
        #expect(response.status == .ok, "\(response.text)")
        guard case .array(let media) = try response.json()["media_attachments"], let first = media.first else {
            Issue.record("no media attachment: \(response.text)")
            throw CancellationError()
        }
        #expect(first["remote_url"] == .null)
        return (
            try path(try #require(first["url"]?.stringValue)),
            try path(try #require(first["preview_url"]?.stringValue))
        )
    }

    /// An absolute URL as the path and query the test client asks for.
    static func path(_ url: String) throws -> String {
        let components = try #require(URLComponents(string: url))
        return components.path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    static func query(_ path: String) -> [String: String] {
        let items = URLComponents(string: path)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    /// The signer the server uses, on the app's database (the key is the database's).
    static func signer(_ api: TestAPI, reader: String, expires: Int64? = nil) async throws -> MediaURLSigner {
        try await api.withDatabase { db in
            try await MediaCapabilities(keys: ServerKeyStore(db: db)).signer(
                for: Int64(reader) ?? 0, expires: expires)
        }
    }

    @Test func aFollowersOnlyPhotoLoadsWithoutCredentialsUntilTheReaderLosesIt() async throws {
        try await withApp { api async throws in
            let world = try await Self.world(api)
            let (url, preview) = try await Self.attachment(api, status: world.post.id, token: world.benToken)
            let fields = Self.query(url)
            #expect(fields["r"] == world.ben.id && fields["e"] != nil && fields["s"]?.count == 43, "\(url)")
            let now = Int64(Date().timeIntervalSince1970)
            let expires = try #require(fields["e"].flatMap { Int64($0) })
            #expect(
                (now + MediaCapabilities.lifetime...now + MediaCapabilities.longest).contains(expires)
                    && expires % MediaCapabilities.bucket == 0, "valid 24 to 30 hours, on a 6-hour boundary")
            // MUT: no credentials at all, as an image loader.
            let loaded = try await api.fetch(url)
            #expect(loaded.status == .ok)
            #expect(loaded.headers[.contentType] == "image/jpeg")
            let maxAge = try #require(
                loaded.headers[.cacheControl].flatMap { $0.split(separator: "=").last.flatMap { Int64($0) } })
            #expect(loaded.headers[.cacheControl]?.hasPrefix("private, max-age=") == true)
            #expect(maxAge <= expires - now && maxAge > MediaCapabilities.lifetime - 60)
            #expect(try await api.fetch(preview).status == .ok)
            #expect(try await api.fetch(url, method: .head).status == .ok)
            // The same URL for the same reader while the bucket lasts.
            #expect(try await Self.attachment(api, status: world.post.id, token: world.benToken).url == url)
            // The key alone is not enough without a session.
            let plain = try #require(url.components(separatedBy: "&r=").first)
            #expect(try await api.fetch(plain).status == .notFound)

            // Ben unfollows: his URL stops working; following again, it works again.
            #expect(try await api.call(.delete, "/users/ana/follow", as: world.ben).status == .ok)
            #expect(try await api.fetch(url).status == .notFound)
            try await api.follow(world.ben, "ana")
            #expect(try await api.fetch(url).status == .ok)
            // Ana blocks Ben.
            #expect(try await api.call(.put, "/users/ben/block", as: world.ana).status == .ok)
            #expect(try await api.fetch(url).status == .notFound)
            #expect(try await api.fetch(preview).status == .notFound)
        }
    }

    @Test func aDeletedOrNarrowedPostsURLsStopWorking() async throws {
        try await withApp { api async throws in
            let world = try await Self.world(api, audience: .public)
            let cat = try await api.register("cat")
            let catToken = try await api.mastodonToken(cat)
            // Public: plain URLs, cached by anyone for good.
            let (plain, _) = try await Self.attachment(api, status: world.post.id, token: catToken)
            #expect(!plain.contains("&r=") && plain.hasSuffix("?k=\(Self.query(plain)["k"] ?? "-")"), "\(plain)")
            #expect(try await api.fetch(plain).headers[.cacheControl] == "public, max-age=31536000, immutable")
            // Narrowed to followers: Ben's URL works, Cat (not a follower) reads no status.
            let narrowed = try await api.call(
                .patch, "/posts/\(world.post.id)", as: world.ana, json: UpdatePostRequest(audience: .followers))
            #expect(narrowed.status == .ok, "\(narrowed.text)")
            #expect(
                try await api.mastodon(.get, "/api/v1/statuses/\(world.post.id)", token: catToken).status == .notFound)
            let (url, _) = try await Self.attachment(api, status: world.post.id, token: world.benToken)
            #expect(try await api.fetch(url).status == .ok)
            // A URL signed for Cat (as if handed out before) does not serve: she may not read the post.
            let catsURL = try await Self.signer(api, reader: cat.id).sign(
                plain, id: Self.mediaID(plain), variant: "original")
            #expect(try await api.fetch(catsURL).status == .notFound)
            // Deleted: gone for everyone.
            #expect(try await api.call(.delete, "/posts/\(world.post.id)", as: world.ana).status == .noContent)
            #expect(try await api.fetch(url).status == .notFound)
        }
    }

    static func mediaID(_ path: String) -> String {
        path.split(separator: "/").dropFirst().first.map(String.init) ?? ""
    }

    @Test func expiredTamperedOrMovedURLsAreUnknown() async throws {
        try await withApp { api async throws in
            let world = try await Self.world(api)
            let cat = try await api.register("cat")
            try await api.follow(cat, "ana")
            let (url, _) = try await Self.attachment(api, status: world.post.id, token: world.benToken)
            #expect(try await api.fetch(url).status == .ok)
            let fields = Self.query(url)
            let (id, key) = (Self.mediaID(url), try #require(fields["k"]))
            let (r, e, s) = (try #require(fields["r"]), try #require(fields["e"]), try #require(fields["s"]))
            let base = "/media/\(id)/original?k=\(key)"
            // Another photo of Ana's, to move the signature onto.
            let other = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: world.ana)
            _ = try await api.post(
                world.ana, CreatePostRequest(kind: .photo, mediaIds: [other.id], audience: .followers))
            let flipped = String(s.dropLast()) + (s.last == "A" ? "E" : "A")
            let now = Int64(Date().timeIntervalSince1970)
            let expired = try await Self.signer(api, reader: world.ben.id, expires: now - 1).sign(
                base, id: id, variant: "original")
            let farFuture = try await Self.signer(
                api, reader: world.ben.id, expires: now + MediaCapabilities.longest + 3600
            ).sign(base, id: id, variant: "original")
            let bad = [
                expired, farFuture,
                "\(base)&r=\(r)&e=\(e)&s=\(flipped)",  // tampered signature
                "\(other.url)&r=\(r)&e=\(e)&s=\(s)",  // other media
                "/media/\(id)/medium?k=\(key)&r=\(r)&e=\(e)&s=\(s)",  // other variant
                "\(base)&r=\(cat.id)&e=\(e)&s=\(s)",  // other reader, who may read the post too
                "\(base)&r=\(r)&e=\((Int64(e) ?? 0) + MediaCapabilities.bucket)&s=\(s)",  // longer life
                "\(base)&r=\(r)&e=\(e)", "\(base)&s=\(s)", "\(base)&r=&e=&s=",
                "\(base)&r=-\(r)&e=\(e)&s=\(s)", "\(base)&r=0\(r)&e=\(e)&s=\(s)",
                "\(base)&r=99999999999999999999&e=\(e)&s=\(s)", "\(base)&r=\(r)&e=\(e)&s=\(s)%3D",
                "\(base)&r=\(r)&e=1e9&s=\(s)", "\(base)&r=\(r)&e=\(e)&s=\(s.prefix(42))",
            ]
            for path in bad {
                let response = try await api.fetch(path)
                #expect(response.status == .notFound, "\(path)")
                // A session does not rescue a bad capability: the same 404 for its own reader.
                #expect(try await api.fetch(path, as: world.ben).status == .notFound, "\(path) as Ben")
            }
            #expect(try await api.fetch("\(base)&r=\(r)&e=\(e)&s=\(s)").status == .ok)
        }
    }

    @Test func aSpacePostsPhotoReachesItsMembersUntilTheyLeave() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let created = try await api.call(
                .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "cs101", name: "CS 101", visibility: .open))
            #expect(created.status == .created)
            #expect(try await api.call(.put, "/spaces/cs101/membership", as: bob).status == .ok)
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let post = try await api.post(
                ana,
                CreatePostRequest(kind: .photo, spaces: ["cs101"], mediaIds: [media.id], audience: .members))
            #expect(post.audience == .members)
            let token = try await api.mastodonToken(bob)
            let (url, _) = try await Self.attachment(api, status: post.id, token: token)
            #expect(Self.query(url)["r"] == bob.id)
            #expect(try await api.fetch(url).status == .ok)
            #expect(try await api.call(.delete, "/spaces/cs101/membership", as: bob).status == .ok)
            #expect(try await api.fetch(url).status == .notFound)
        }
    }

    /// A followers-only photo told on the user stream carries the follower's own URLs.
    @Test func aStreamedStatusCarriesItsReadersURLs() async throws {
        try await withLiveApp { api, port async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            try await api.follow(ben, "ana")
            let token = try await api.mastodonToken(ben)
            let stream = try await EventStreamClient.connect(port: port, token: token, path: "/api/v1/streaming/user")
            defer { stream.close() }
            #expect(await stream.waitForHeartbeat())
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            _ = try await api.post(
                ana, CreatePostRequest(kind: .photo, mediaIds: [media.id], audience: .followers))
            let told = try #require(await stream.waitFor(1).first?.decode(JSONValue.self))
            guard case .array(let attachments) = told["media_attachments"] else {
                Issue.record("no attachments")
                return
            }
            let url = try Self.path(try #require(attachments.first?["url"]?.stringValue))
            #expect(Self.query(url)["r"] == ben.id, "\(url)")
            #expect(try await api.fetch(url).status == .ok)
        }
    }

    /// An upload is its owner's alone until posted: the app shows it in the composer from a
    /// capability URL of the owner's.
    @Test func anUploadsURLsAreItsOwners() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let token = try await api.mastodonToken(ana)
            let form = MediaFixtures.multipart(
                try MediaFixtures.sample(.jpeg), filename: "p.jpg", contentType: "image/jpeg")
            let uploaded = try await api.client.execute(
                uri: "/api/v2/media", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: form.contentType], body: form.body)
            #expect(uploaded.status == .ok)
            let media = try JSONDecoder().decode(JSONValue.self, from: Data(uploaded.body.readableBytesView))
            let url = try Self.path(try #require(media["url"]?.stringValue))
            #expect(Self.query(url)["r"] == ana.id)
            #expect(try await api.fetch(url).status == .ok)
        }
    }

    /// With S3 storage the server still streams the bytes (`S3MediaStorage.open`), so a capability
    /// URL is honoured there as on the disk.
    @Test(.enabled(if: TestS3.endpoint != nil)) func capabilityURLsServeFromS3() async throws {
        let settings = S3MediaStorageTests.settings()
        try await S3MediaStorage(settings: settings, client: .shared).createBucket()
        try await withApp({ $0.media.s3 = settings }) { api async throws in
            let world = try await Self.world(api)
            let (url, _) = try await Self.attachment(api, status: world.post.id, token: world.benToken)
            let stored = try await S3MediaStorage(settings: settings, client: .shared).get(
                "\(Self.mediaID(url))/original")
            let loaded = try await api.fetch(url)
            #expect(loaded.status == .ok)
            #expect(Array(loaded.body.readableBytesView) == stored.map { Array($0.readableBytesView) })
            #expect(try await api.call(.delete, "/users/ana/follow", as: world.ben).status == .ok)
            #expect(try await api.fetch(url).status == .notFound)
        }
    }
}

extension FuzzTests {
    /// Capability queries (`r`, `e`, `s`) through Hummingbird's query parsing and ours: nothing
    /// traps, what parses reads back as it was written, and only the signed capability passes the check.
    @Test func mediaCapabilities() {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
        let now: Int64 = 1_900_000_000
        let signer = MediaURLSigner(key: key, reader: 123_456_789, expires: MediaCapabilities.expiry(now: now))
        let signed = signer.sign("/media/42/original?k=abcdefghijklmnopqrstuv", id: "42", variant: "original")
        let query = String(signed.split(separator: "?", maxSplits: 1).last ?? "")
        let seeds = Fuzz.seeds(query, "k=abcdefghijklmnopqrstuv&r=1&e=2&s=", "r=&e=&s=")
        var passed = 0
        Fuzz.run(
            "media capabilities", seeds: seeds,
            dictionary: ["&", "=", "r=", "e=", "s=", "%", "%00", "-", "+", "0", "9223372036854775808", "_", "AAAA"]
        ) { input, _ in
            let parameters = URI(
                String(decoding: input, as: UTF8.self).isEmpty ? "/" : "/m?" + String(decoding: input, as: UTF8.self)
            ).queryParameters
            let (r, e, s) = (parameters.get("r"), parameters.get("e"), parameters.get("s"))
            guard case .capability(let capability) = MediaCapability.parse(reader: r, expires: e, mac: s) else {
                return
            }
            if r != String(capability.reader) || e != String(capability.expires)
                || s != ByteText.base64url(capability.mac)
            {
                Issue.record("\(capability) does not read back, from \(input)")
            }
            if MediaCapabilities.reader(of: capability, id: 42, variant: "original", now: now, key: key) != nil {
                passed += 1
                if capability.reader != signer.reader || capability.expires != signer.expires {
                    Issue.record("\(capability) passed, from \(input)")
                }
            }
        }
        let original = URI(signed).queryParameters
        guard
            case .capability(let capability) = MediaCapability.parse(
                reader: original.get("r"), expires: original.get("e"), mac: original.get("s"))
        else {
            Issue.record("the signed URL does not parse: \(signed)")
            return
        }
        #expect(MediaCapabilities.reader(of: capability, id: 42, variant: "original", now: now, key: key) != nil)
        #expect(MediaCapabilities.reader(of: capability, id: 43, variant: "original", now: now, key: key) == nil)
        #expect(MediaCapabilities.reader(of: capability, id: 42, variant: "medium", now: now, key: key) == nil)
        #expect(
            MediaCapabilities.reader(of: capability, id: 42, variant: "original", now: signer.expires, key: key) == nil)
        #expect(passed > 0, "the seed itself passes")
    }
}
