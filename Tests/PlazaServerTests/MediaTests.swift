import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Media")
struct MediaTests {
    @Test(arguments: [
        (ImageFormat.jpeg, "image/jpeg"), (.png, "image/png"), (.webp, "image/webp"), (.gif, "image/png"),
        (.heif, "image/jpeg"),
    ])
    func everyAcceptedTypeBecomesThreeServedVariants(format: ImageFormat, originalType: String) async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            // The file's name and declared type say PNG whatever it is: only the bytes count.
            let response = try await api.upload(
                try MediaFixtures.sample(format, width: 1600, height: 1200), as: ana, filename: "x.png",
                contentType: "image/png")
            #expect(response.status == .created, "\(response.text)")
            let media = try response.decode(Media.self)
            #expect(media.contentType == originalType)
            #expect((media.width, media.height) == (1600, 1200))
            #expect(media.blurhash?.count == 28)
            #expect(media.url.hasPrefix("/media/\(media.id)/original?k="))
            let expected: [(String, String, Int)] = [
                (media.variants.thumbnail, "thumbnail", 320), (media.variants.medium, "medium", 1080),
                (media.variants.original, "original", 4096),
            ]
            for (url, variant, longEdge) in expected {
                let file = try await api.fetch(url, as: ana)
                #expect(file.status == .ok, "\(variant): \(file.text)")
                #expect(file.headers[.contentType] == (variant == "original" ? originalType : "image/jpeg"))
                #expect(file.headers[.cacheControl] == "private, no-cache", "not used yet: its owner's alone")
                #expect(file.headers[.xContentTypeOptions] == "nosniff")
                #expect(file.headers[.contentSecurityPolicy] == "sandbox")
                #expect(file.headers[.eTag] == "\"\(media.id)-\(variant)\"")
                let bytes = Array(file.body.readableBytesView)
                let header = try #require(try Self.header(of: bytes))
                #expect(max(header.width, header.height) <= longEdge)
                if variant == "thumbnail" { #expect(header.width == 320 && header.height == 320) }
                if variant == "medium" { #expect((header.width, header.height) == (1080, 810)) }
            }
        }
    }

    @Test func metadataIsStrippedAndOrientationApplied() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let original = try MediaFixtures.jpegWithEXIF(width: 40, height: 20, orientation: 6)
            #expect(MediaFixtures.contains(original, "PlazaTestCam"))
            let media = try await api.uploaded(original, as: ana)
            // Orientation 6 means "rotate 90° clockwise": the stored image stands upright.
            #expect((media.width, media.height) == (20, 40))
            for url in [media.variants.thumbnail, media.variants.medium, media.variants.original] {
                let bytes = Array(try await api.fetch(url, as: ana).body.readableBytesView)
                #expect(!bytes.isEmpty)
                #expect(!MediaFixtures.contains(bytes, "Exif"), "\(url) keeps EXIF")
                #expect(!MediaFixtures.contains(bytes, "PlazaTestCam"), "\(url) keeps the camera make")
                #expect(!MediaFixtures.contains(bytes, "http://ns.adobe.com/xap"), "\(url) keeps XMP")
                #expect(!Self.hasSegment(bytes, marker: 0xE1), "\(url) keeps an APP1 segment")
            }
        }
    }

    @Test func animatedGIFsBecomeAnimatedWebP() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.gif, width: 60, height: 40, pages: 4), as: ana)
            #expect(media.contentType == "image/webp")
            #expect((media.width, media.height) == (60, 40))
            let original = Array(try await api.fetch(media.variants.original, as: ana).body.readableBytesView)
            #expect(MediaFixtures.contains(original, "ANIM"), "the original keeps its animation")
            let medium = try await api.fetch(media.variants.medium, as: ana)
            #expect(medium.headers[.contentType] == "image/webp")
        }
    }

    @Test func refusesWhatIsNotAnAcceptedImage() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            for (bytes, name) in [
                (MediaFixtures.html, "page.jpg"), (MediaFixtures.svg, "image.svg"), (Array("just text".utf8), "a.png"),
            ] {
                let response = try await api.upload(bytes, as: ana, filename: name)
                #expect(response.status == .unsupportedMediaType, "\(name): \(response.text)")
                #expect(response.error?.code == "unsupported_media_type")
            }
            let jpeg = try MediaFixtures.sample(.jpeg, width: 300, height: 200)
            let truncated = try await api.upload(Array(jpeg.prefix(jpeg.count / 2)), as: ana)
            #expect(truncated.status == .unprocessableContent, "\(truncated.text)")
            #expect(truncated.error?.field == "file")
            let bomb = try await api.upload(try MediaFixtures.pngClaiming(width: 30000, height: 30000), as: ana)
            #expect(bomb.status == .unprocessableContent, "\(bomb.text)")
            #expect(bomb.error?.code == "image_too_large")
            // Not multipart, and multipart without a file field.
            let json = try await api.call(.post, "/me/media", as: ana, json: ["file": "x"])
            #expect(json.status == .unsupportedMediaType)
            let form = MediaFixtures.multipart(jpeg, field: "photo")
            let noFile = try await api.client.execute(
                uri: "/api/v1/me/media", method: .post,
                headers: [.contentType: form.contentType, .authorization: "Bearer \(ana.token)"], body: form.body)
            #expect(noFile.status == .unprocessableContent)
            // Nothing was kept.
            #expect(try await api.page("/me/media", as: ana, of: Media.self).items.isEmpty)
        }
    }

    /// MultipartKit traps on a non-ASCII byte in a part header's name (found by schemathesis):
    /// such a body is refused with 400 before the parser sees it, whether the byte is in the
    /// first part or a later one, and a non-ASCII file name (a header value) still uploads.
    @Test func nonASCIIPartHeaderNamesAre400AndNonASCIIFileNamesUpload() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let boundary = "df6c869846a5bc947ce5a0830bd1f0d3"
            let firstPart: [UInt8] =
                Array("--\(boundary)\r\n".utf8) + [0xC2, 0x8C] + Array(": x\r\n\r\nhi\r\n--\(boundary)--\r\n".utf8)
            let laterPart: [UInt8] =
                Array(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhi\r\n--\(boundary)\r\nX"
                        .utf8) + [0xF0, 0xB5]
                + Array(": y\r\n\r\nhi\r\n--\(boundary)--\r\n".utf8)
            for body in [firstPart, laterPart] {
                let response = try await api.client.execute(
                    uri: "/api/v1/me/media", method: .post,
                    headers: [
                        .contentType: "multipart/form-data; boundary=\(boundary)",
                        .authorization: "Bearer \(ana.token)",
                    ],
                    body: ByteBuffer(bytes: body))
                #expect(response.status == .badRequest)
            }
            let jpeg = try MediaFixtures.sample(.jpeg, width: 30, height: 20)
            let named = try await api.upload(jpeg, as: ana, filename: "café-été.jpg")
            #expect(named.status == .created, "\(named.text)")
        }
    }

    @Test func uploadsOverTheCapAre413() async throws {
        let cap = 64 * 1024
        try await withApp({ $0.media.maxBytes = cap }) { api async throws in
            let ana = try await api.register("ana")
            var exact = try MediaFixtures.sample(.png, width: 16, height: 16)
            // PNG decoders ignore bytes after IEND: pad to exactly the cap, then one byte more.
            exact += [UInt8](repeating: 0, count: cap - exact.count)
            let atCap = try await api.upload(exact, as: ana)
            #expect(atCap.status == .created, "\(atCap.text)")
            let over = try await api.upload(exact + [0], as: ana)
            #expect(over.status == .contentTooLarge, "\(over.text)")
            #expect(over.error?.code == "payload_too_large")
            #expect(try await api.page("/me/media", as: ana, of: Media.self).items.count == 1)
        }
    }

    @Test func uploadsNeedAnAccountAndListOnlyMine() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let jpeg = try MediaFixtures.sample(.jpeg)
            #expect(try await api.upload(jpeg, as: nil).status == .unauthorized)
            #expect(try await api.get("/me/media").status == .unauthorized)
            var mine: [String] = []
            for _ in 0..<3 { mine.append(try await api.uploaded(jpeg, as: ana).id) }
            _ = try await api.uploaded(jpeg, as: ben)
            let first = try await api.page("/me/media?limit=2", as: ana, of: Media.self)
            let cursor = try #require(first.nextCursor)
            let second = try await api.page("/me/media?limit=2&cursor=\(cursor)", as: ana, of: Media.self)
            #expect((first.items + second.items).map(\.id) == mine.reversed())
            #expect(second.nextCursor == nil)
        }
    }

    @Test func servingAnswers404And304() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let key = try #require(media.url.split(separator: "=").last)
            #expect(try await api.fetch("/media/123/original?k=\(key)", as: ana).status == .notFound)
            #expect(try await api.fetch("/media/\(media.id)/huge?k=\(key)", as: ana).status == .notFound)
            #expect(try await api.fetch("/media/abc/original?k=\(key)", as: ana).status == .notFound)
            let cached = try await api.fetch(
                media.variants.medium, as: ana, headers: [.ifNoneMatch: "\"\(media.id)-medium\""])
            #expect(cached.status == .notModified)
            #expect(cached.body.readableBytes == 0)
        }
    }

    @Test func photoPostsClaimTheirMediaOnce() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let jpeg = try MediaFixtures.sample(.jpeg)
            let a1 = try await api.uploaded(jpeg, as: ana)
            let a2 = try await api.uploaded(jpeg, as: ana)
            let b1 = try await api.uploaded(jpeg, as: ben)

            // Someone else's upload, an unknown id and a repeated id are refused; nothing is claimed.
            for ids in [[a1.id, b1.id], [a1.id, "999"], [a1.id, a1.id], ["x"]] {
                let response = try await api.call(
                    .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, body: "hi", mediaIds: ids))
                #expect(response.status == .unprocessableContent, "\(ids): \(response.text)")
                #expect(response.error?.field == "mediaIds")
            }
            let none = try await api.call(.post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, body: "hi"))
            #expect(none.status == .unprocessableContent)
            let eleven = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, mediaIds: (1...11).map(String.init)))
            #expect(eleven.status == .unprocessableContent)

            let post = try await api.post(
                ana, CreatePostRequest(kind: .photo, body: "two photos", mediaIds: [a2.id, a1.id]))
            #expect(post.media.map(\.id) == [a2.id, a1.id])
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).media == post.media)
            #expect(try await api.page("/feed/global", of: Post.self).items.first?.media == post.media)
            // Used once means used: another post cannot take it.
            let again = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, mediaIds: [a1.id]))
            #expect(again.status == .unprocessableContent)

            // Deleting the post deletes its media.
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await api.fetch(a1.variants.original, as: ana).status == .notFound)
            #expect(try await api.fetch(a2.variants.thumbnail, as: ana).status == .notFound)
            #expect(try await api.fetch(b1.variants.thumbnail, as: ben).status == .ok)
        }
    }

    @Test func avatarsShowOnProfilesAndPosts() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let jpeg = try MediaFixtures.sample(.jpeg)
            let first = try await api.uploaded(jpeg, as: ana)
            let bens = try await api.uploaded(jpeg, as: ben)
            #expect(
                try await api.call(.put, "/me/avatar", json: SetAvatarRequest(mediaId: first.id)).status
                    == .unauthorized)
            let other = try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: bens.id))
            #expect(other.status == .unprocessableContent)

            let me = try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: first.id)).decode(
                Me.self)
            #expect(me.user.avatar == first)
            #expect(try await api.get("/users/ana").decode(User.self).avatar == first)
            let post = try await api.textPost(ana, "with a face")
            #expect(post.author.avatar == first)
            #expect(try await api.page("/feed/global", of: Post.self).items.first?.author.avatar == first)

            // A new avatar replaces the old one, whose files go.
            let second = try await api.uploaded(jpeg, as: ana)
            let changed = try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: second.id))
                .decode(Me.self)
            #expect(changed.user.avatar == second)
            #expect(try await api.fetch(first.variants.thumbnail, as: ana).status == .notFound)
            let cleared = try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: nil)).decode(
                Me.self)
            #expect(cleared.user.avatar == nil)
            #expect(try await api.fetch(second.variants.thumbnail, as: ana).status == .notFound)
        }
    }

    @Test func buildingTheServicesMakesNoFoldersServingDoes() async throws {
        try await withDatabase { db, config in
            _ = try AppServices(config: config, db: db)
            for folder in ["uploads", "media"] {
                #expect(
                    !FileManager.default.fileExists(
                        atPath: (config.dataDir as NSString).appendingPathComponent(folder)), "\(folder)")
            }
        }
        try await withApp { api async throws in
            #expect(
                FileManager.default.fileExists(
                    atPath: (api.config.dataDir as NSString).appendingPathComponent("uploads")))
        }
    }

    @Test func unusedUploadsAreDeletedAfterADay() async throws {
        try await withDatabase { db, config in
            let services = try AppServices(config: config, db: db)
            let owner = try await services.accounts.createUser(
                .init(username: "ana", email: "ana@example.com", passwordHash: "x", displayName: "Ana"))
            let result = try await services.ingest.pipeline.process(
                path: try Self.write(try MediaFixtures.sample(.png), in: config), format: .png)
            let unused = try await services.media.create(
                id: services.ids.next(), owner: owner, result, linkPreview: false, quota: 0)
            let used = try await services.media.create(
                id: services.ids.next(), owner: owner, result, linkPreview: false, quota: 0)
            for record in [unused, used] {
                for (variant, output) in result.variants {
                    try await services.mediaStorage.put(
                        "\(record.id)/\(variant.rawValue)", bytes: output.bytes, contentType: output.contentType)
                }
            }
            _ = try await services.media.setAvatar(user: owner, mediaID: used.id)
            let maintenance = MaintenanceService(
                accounts: services.accounts, media: services.media, mediaStorage: services.mediaStorage,
                events: services.eventFeed, outbox: services.outbox, pushes: services.pushes,
                eventRetentionMillis: 7 * 86_400_000, logger: .init(label: "test"))
            await maintenance.runOnce(now: Timestamp.now.milliseconds + 23 * 3_600_000)
            #expect(
                try await services.media.served(id: unused.id, key: unused.key ?? "", viewer: owner) != nil,
                "kept for a day")
            await maintenance.runOnce(now: Timestamp.now.milliseconds + 25 * 3_600_000)
            #expect(try await services.media.served(id: unused.id, key: unused.key ?? "", viewer: owner) == nil)
            #expect(try await services.mediaStorage.get("\(unused.id)/original") == nil)
            #expect(try await services.media.served(id: used.id, key: used.key ?? "", viewer: owner) != nil)
            #expect(try await services.mediaStorage.get("\(used.id)/original") != nil)
        }
    }

    @Test func altTextComesWithTheUploadAndFollowsItsChangesOntoThePost() async throws {
        try await withApp { api async throws in
            let (ana, bea) = try await api.register("ana", "bea")
            let jpeg = try MediaFixtures.sample(.jpeg, width: 40, height: 30)
            let upload = try await api.upload(jpeg, as: ana, fields: ["description": "  A bowl of ramen, steaming  "])
            #expect(upload.status == .created, "\(upload.text)")
            let media = try upload.decode(Media.self)
            #expect(media.description == "A bowl of ramen, steaming", "trimmed, as every text")
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "Dinner", mediaIds: [media.id]))
            #expect(post.media.first?.description == "A bowl of ramen, steaming")
            #expect(try await api.page(.get, "/p/\(post.id)").text.contains(#"alt="A bowl of ramen, steaming""#))

            // Changed after posting: the post shows the new text, spaces and line breaks kept.
            let text = "Ramen: egg, nori\nand 100% broth"
            let changed = try await api.call(
                .patch, "/me/media/\(media.id)", as: ana, json: UpdateMediaRequest(description: text))
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(try changed.decode(Media.self).description == text)
            let read = try await api.get("/posts/\(post.id)", as: bea).decode(Post.self)
            #expect(read.media.first?.description == text)
            #expect(read.media.first?.id == media.id && read.media.first?.url == media.url, "the rest of the line kept")

            // Someone else's media is not found; nobody signed in is refused; too long is a 422.
            let other = try await api.call(
                .patch, "/me/media/\(media.id)", as: bea, json: UpdateMediaRequest(description: "mine now"))
            #expect(other.status == .notFound)
            #expect(
                try await api.call(.patch, "/me/media/\(media.id)", json: UpdateMediaRequest(description: "x")).status
                    == .unauthorized)
            let long = try await api.call(
                .patch, "/me/media/\(media.id)", as: ana,
                json: UpdateMediaRequest(description: String(repeating: "a", count: MediaActions.maxAltTextLength + 1)))
            #expect(long.status == .unprocessableContent)
            let tooLongUpload = try await api.upload(
                jpeg, as: ana, fields: ["description": String(repeating: "b", count: MediaActions.maxAltTextLength + 1)]
            )
            #expect(tooLongUpload.status == .unprocessableContent, "refused before it is processed")
            // A text field is kept in memory, so it is cut off as it arrives, long before the file's cap.
            let hugeField = try await api.upload(
                jpeg, as: ana, fields: ["description": String(repeating: "c", count: MultipartUpload.maxTextBytes + 1)])
            #expect(hugeField.status == .unprocessableContent)
            #expect(hugeField.text.contains("KB together"), "\(hugeField.text)")
            #expect(try await api.get("/posts/\(post.id)", as: bea).decode(Post.self).media.first?.description == text)

            // Null removes it: the page falls back to the post's own text.
            let cleared = try await api.call(
                .patch, "/me/media/\(media.id)", as: ana, json: UpdateMediaRequest(description: nil))
            #expect(try cleared.decode(Media.self).description == nil)
            #expect(try await api.get("/posts/\(post.id)", as: ana).decode(Post.self).media.first?.description == nil)
            #expect(try await api.page(.get, "/p/\(post.id)").text.contains(#"alt="Dinner""#))
        }
    }

    @Test func aLineKeepsItsAltTextThroughAnyCharacters() throws {
        for text in ["plain", "two words", "line\nbreak", "100% % %%", "ünïcödé 🍜 مرحبا", "-", "a b c d e f"] {
            let record = MediaRecord(
                id: 7, contentType: "image/jpeg", width: 3, height: 4, blurhash: nil, key: "k123456789012345",
                description: text)
            let parsed = try #require(MediaRecord(line: Substring(record.line)))
            #expect(parsed == record, "\(text) → \(record.line)")
        }
        let video = MediaRecord(
            id: 8, contentType: "video/mp4", width: 3, height: 4, blurhash: "abc", key: "k123456789012345",
            state: .processing, durationMillis: 1500, description: "a clip")
        #expect(MediaRecord(line: Substring(video.line)) == video)
    }

    @Test func blurhashOfASolidColourIsThatColour() throws {
        let pixels = [UInt8](repeating: 0, count: 8 * 8 * 3).enumerated().map { $0.offset % 3 == 0 ? UInt8(255) : 0 }
        let hash = try #require(Blurhash.encode(pixels: pixels, width: 8, height: 8))
        #expect(hash.count == 28)
        // Size flag (4 − 1) + (3 − 1)·9 = 21 → "L"; then the maximum, then four digits of DC colour.
        let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        let dc = hash.dropFirst(2).prefix(4).reduce(0) { $0 * 83 + digits.firstIndex(of: $1)! }
        #expect(hash.first == "L")
        #expect(dc == 0xFF0000)
        // A left-to-right gradient and its mirror share the DC but not the first AC component.
        let ramp = (0..<(8 * 8)).flatMap { i -> [UInt8] in
            let v = UInt8((i % 8) * 32)
            return [v, v, v]
        }
        let mirrored = (0..<(8 * 8)).flatMap { i -> [UInt8] in
            let v = UInt8((7 - i % 8) * 32)
            return [v, v, v]
        }
        let a = try #require(Blurhash.encode(pixels: ramp, width: 8, height: 8))
        let b = try #require(Blurhash.encode(pixels: mirrored, width: 8, height: 8))
        #expect(a.dropFirst(2).prefix(4) == b.dropFirst(2).prefix(4) && a != b)
    }

    @Test func signaturesDecideTheType() {
        #expect(ImageFormat.sniff([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFormat.sniff(Array("GIF89a".utf8)) == .gif)
        #expect(ImageFormat.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)) == .webp)
        #expect(ImageFormat.sniff([0, 0, 0, 24] + Array("ftypheic".utf8)) == .heif)
        #expect(ImageFormat.sniff([0, 0, 0, 24] + Array("ftypavif".utf8)) == nil)
        #expect(ImageFormat.sniff(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8)) == nil)
        #expect(ImageFormat.sniff(MediaFixtures.svg) == nil)
    }

    // MARK: helpers

    static func write(_ bytes: [UInt8], in config: PlazaConfig) throws -> String {
        let path = (config.dataDir as NSString).appendingPathComponent("fixture-\(UUID().uuidString)")
        // There is no data folder on PostgreSQL.
        try FileManager.default.createDirectory(atPath: config.dataDir, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Width and height from a JPEG, PNG or WebP (VP8/VP8L/VP8X) header.
    static func header(of bytes: [UInt8]) throws -> (width: Int, height: Int)? {
        switch ImageFormat.sniff(Array(bytes.prefix(ImageFormat.signatureLength))) {
        case .png:
            func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
            return (be32(16), be32(20))
        case .jpeg:
            var i = 2
            while i + 9 < bytes.count {
                guard bytes[i] == 0xFF else { return nil }
                let marker = bytes[i + 1]
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    return (Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]), Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
                }
                i += 2 + length
            }
            return nil
        case .webp:
            let chunk = String(decoding: bytes[12..<16], as: UTF8.self)
            func le(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
            switch chunk {
            case "VP8X": return (le(24, 3) + 1, le(27, 3) + 1)
            case "VP8L":
                let bits = le(21, 4)
                return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
            case "VP8 ": return (le(26, 2) & 0x3FFF, le(28, 2) & 0x3FFF)
            default: return nil
            }
        default: return nil
        }
    }

    /// True when a JPEG has a segment with this marker before its image data.
    static func hasSegment(_ bytes: [UInt8], marker: UInt8) -> Bool {
        guard ImageFormat.sniff(Array(bytes.prefix(4))) == .jpeg else { return false }
        var i = 2
        while i + 4 < bytes.count, bytes[i] == 0xFF {
            if bytes[i + 1] == marker { return true }
            if bytes[i + 1] == 0xDA { return false }
            i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
        }
        return false
    }
}
