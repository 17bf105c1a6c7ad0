import Foundation
import HTTPTypes
import Logging
import NIOCore
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Video")
struct VideoTests {
    /// Polls `GET /me/media/{id}` until the video is no longer processing (the worker runs in
    /// the background); the cap only keeps a broken worker from hanging the suite.
    static func processed(_ api: TestAPI, _ media: Media, as account: Account) async throws -> Media {
        var current = media
        for _ in 0..<2_400 where current.state == .processing {
            try await Task.sleep(for: .milliseconds(50))
            let response = try await api.get("/me/media/\(media.id)", as: account)
            #expect(response.status == .ok, "\(response.text)")
            current = try response.decode(Media.self)
        }
        return current
    }

    static func uploadVideo(_ api: TestAPI, _ bytes: [UInt8], as account: Account) async throws -> Media {
        let response = try await api.upload(bytes, as: account, filename: "clip.mov", contentType: "video/quicktime")
        #expect(response.status == .accepted, "\(response.text)")
        let media = try response.decode(Media.self)
        #expect(media.state == .processing)
        #expect(media.contentType == "video/mp4")
        return media
    }

    @Test(arguments: ["mov", "hevc", "webm"])
    func everyContainerBecomesAnMP4WithAPosterAndNoMetadata(kind: String) async throws {
        let (bytes, size): ([UInt8], (Int, Int)) =
            switch kind {
            case "mov": (try VideoFixtures.mov(width: 1920, height: 1080), (1280, 720))
            case "hevc": (try VideoFixtures.hevc(), (480, 270))
            default: (try VideoFixtures.webm(), (320, 240))
            }
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let uploaded = try await Self.uploadVideo(api, bytes, as: ana)
            #expect((uploaded.width, uploaded.height) == size)
            #expect(uploaded.blurhash?.count == 28)
            #expect(uploaded.duration.map { $0 > 0.5 && $0 < 2.5 } == true, "\(String(describing: uploaded.duration))")
            // The poster is there at once, as an image.
            let poster = try await api.fetch(uploaded.variants.medium, as: ana)
            #expect(poster.status == .ok)
            #expect(poster.headers[.contentType] == "image/jpeg")

            let ready = try await Self.processed(api, uploaded, as: ana)
            #expect(ready.state == .ready)
            #expect(ready.progress == nil)
            let file = try await api.fetch(ready.url, as: ana)
            #expect(file.status == .ok)
            #expect(file.headers[.contentType] == "video/mp4")
            #expect(file.headers[.acceptRanges] == "bytes")
            let mp4 = Array(file.body.readableBytesView)
            let probe = try VideoFixtures.probe(mp4)
            #expect(probe.codec == "h264")
            #expect((probe.width, probe.height) == size)
            // Fast start: the index (`moov`) comes before the frames (`mdat`).
            let moov = try #require(Self.offset(of: "moov", in: mp4))
            let mdat = try #require(Self.offset(of: "mdat", in: mp4))
            #expect(moov < mdat)
            #expect(!MediaFixtures.contains(mp4, "+48.8577"), "the location is gone")
            #expect(!MediaFixtures.contains(mp4, "PlazaSecretTitle"))
            #expect(probe.tags["location"] == nil)
            // The upload itself is not kept once transcoded.
            #expect(try await api.fetch("/media/\(ready.id)/source?k=x", as: ana).status == .notFound)
        }
    }

    static func offset(of atom: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(atom.utf8)
        return (0...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    @Test func aPortraitPhoneVideoIsTurnedUpright() async throws {
        // Recorded sideways with a rotation in its metadata, as phones do.
        let bytes = try VideoFixtures.turned()
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let uploaded = try await Self.uploadVideo(api, bytes, as: ana)
            #expect((uploaded.width, uploaded.height) == (360, 640))
            let ready = try await Self.processed(api, uploaded, as: ana)
            let probe = try VideoFixtures.probe(Array(try await api.fetch(ready.url, as: ana).body.readableBytesView))
            #expect((probe.width, probe.height) == (360, 640))
        }
    }

    @Test func filesThatAreNotVideosPlazaTakesAreRefusedAndNothingIsKept() async throws {
        let good = try VideoFixtures.mov(seconds: 3, extra: ["-movflags", "+faststart"])
        let cases: [(String, [UInt8], HTTPResponse.Status, String)] = [
            (
                "truncated", Array(try VideoFixtures.mov(seconds: 2).prefix(3_000)), .unprocessableContent,
                "unreadable_video"
            ),
            ("huge", try VideoFixtures.huge(), .unprocessableContent, "video_too_large"),
            ("audio only", try VideoFixtures.audioOnly(), .unprocessableContent, "no_video"),
            ("too long", good, .unprocessableContent, "video_too_long"),
            (
                "garbage after a video header", Array(good.prefix(64)) + [UInt8](repeating: 0x41, count: 4_000),
                .unprocessableContent, "unreadable_video"
            ),
        ]
        try await withApp({ $0.video.maxSeconds = 2 }) { api async throws in
            let ana = try await api.register("ana")
            for (name, bytes, status, code) in cases {
                let response = try await api.upload(bytes, as: ana, filename: "x.mp4", contentType: "video/mp4")
                #expect(response.status == status, "\(name): \(response.text)")
                #expect(try response.decode(ErrorBody.self).error.code == code, "\(name): \(response.text)")
            }
            #expect(try await api.page("/me/media", as: ana, of: Media.self).items.isEmpty)
            let used = try await api.withDatabase { db in
                try await db.read { try await $0.first("SELECT media_bytes FROM users WHERE username = 'ana'") }?
                    .decode(column: "media_bytes", as: Int64.self)
            }
            #expect(used == 0)
        }
    }

    @Test func aVideoHasItsOwnSizeCapAndAPhotoKeepsItsOwn() async throws {
        let video = try VideoFixtures.mov(seconds: 1)
        try await withApp({
            $0.video.maxBytes = video.count - 1
            $0.media.maxBytes = 1024 * 1024
        }) { api async throws in
            let ana = try await api.register("ana")
            let response = try await api.upload(video, as: ana, filename: "x.mov", contentType: "video/quicktime")
            #expect(response.status == .contentTooLarge, "\(response.text)")
            let photo = try MediaFixtures.sample(.jpeg, width: 64, height: 64)
            #expect(try await api.upload(photo, as: ana).status == .created)
        }
    }

    @Test func spansOfAVideoAreServedForPlayersToSeek() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let ready = try await Self.processed(
                api, try await Self.uploadVideo(api, try VideoFixtures.mov(seconds: 1), as: ana), as: ana)
            let whole = Array(try await api.fetch(ready.url, as: ana).body.readableBytesView)
            let total = whole.count
            let cases: [(String, HTTPResponse.Status, String?, ArraySlice<UInt8>?)] = [
                ("bytes=0-99", .partialContent, "bytes 0-99/\(total)", whole[0...99]),
                ("bytes=100-", .partialContent, "bytes 100-\(total - 1)/\(total)", whole[100...]),
                ("bytes=-10", .partialContent, "bytes \(total - 10)-\(total - 1)/\(total)", whole[(total - 10)...]),
                ("bytes=0-999999999", .partialContent, "bytes 0-\(total - 1)/\(total)", whole[...]),
                ("bytes=\(total)-", .rangeNotSatisfiable, "bytes */\(total)", nil),
                // Not one span of bytes: the whole file, as if no Range were sent.
                ("bytes=0-1,5-9", .ok, nil, whole[...]),
                ("items=0-1", .ok, nil, whole[...]),
                ("bytes=9-1", .ok, nil, whole[...]),
            ]
            for (range, status, contentRange, body) in cases {
                let response = try await api.fetch(ready.url, as: ana, headers: [.range: range])
                #expect(response.status == status, "\(range)")
                #expect(response.headers[.contentRange] == contentRange, "\(range)")
                if let body { #expect(Array(response.body.readableBytesView) == Array(body), "\(range)") }
            }
            // HEAD describes the whole file whatever the Range; a span past the end is not cached.
            let head = try await api.fetch(ready.url, as: ana, headers: [.range: "bytes=0-9"], method: .head)
            #expect(head.status == .ok && head.headers[.contentLength] == String(total))
            let past = try await api.fetch(ready.url, as: ana, headers: [.range: "bytes=\(total + 5)-"])
            #expect(past.headers[.cacheControl] == "no-store")
            // Someone who may not see the upload gets no span of it either.
            let ben = try await api.register("ben")
            #expect(try await api.fetch(ready.url, as: ben, headers: [.range: "bytes=0-9"]).status == .notFound)
            #expect(try await api.fetch(ready.url, headers: [.range: "bytes=0-9"]).status == .notFound)
        }
    }

    @Test func myUploadsProgressIsMineAlone() async throws {
        try await withApp({ $0.video.worker = false }) { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let uploaded = try await Self.uploadVideo(api, try VideoFixtures.mov(seconds: 1), as: ana)
            let mine = try await api.get("/me/media/\(uploaded.id)", as: ana)
            #expect(mine.status == .ok)
            #expect(try mine.decode(Media.self).progress == 0)
            #expect(try await api.get("/me/media/\(uploaded.id)", as: ben).status == .notFound)
            #expect(try await api.get("/me/media/\(uploaded.id)").status == .unauthorized)
            #expect(try await api.get("/me/media/123", as: ana).status == .notFound)
            #expect(try await api.get("/me/media/abc", as: ana).status == .notFound)
            // A video is no avatar.
            let avatar = try await api.call(.put, "/me/avatar", as: ana, json: ["mediaId": uploaded.id])
            #expect(avatar.status == .unprocessableContent, "\(avatar.text)")
        }
    }

    /// Transcodes what is queued, as the worker of another app server on the same database would.
    static func runWorker(_ api: TestAPI) async throws -> Bool {
        try await api.withDatabase { db in
            var config = api.config
            config.video.worker = true
            let services = try AppServices(config: config, db: db)
            let worker = try #require(services.videoService(logger: Logger(label: "test")))
            return await worker.runOnce()
        }
    }

    @Test func aPostWithAVideoIsItsAuthorsAloneUntilTheVideoIsReady() async throws {
        try await withApp({ $0.video.worker = false }) { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            #expect(try await api.call(.put, "/users/ana/follow", as: ben).status == .ok)
            let video = try await Self.uploadVideo(api, try VideoFixtures.mov(seconds: 1), as: ana)
            let created = try await api.call(
                .post, "/posts", as: ana,
                json: CreatePostRequest(kind: .photo, body: "Recipe video for @ben", mediaIds: [video.id]))
            #expect(created.status == .created, "\(created.text)")
            let post = try created.decode(Post.self)
            #expect(post.media.first?.state == .processing)

            // Ana sees her post, marked processing; nobody else sees it anywhere yet.
            #expect(try await api.get("/posts/\(post.id)", as: ana).status == .ok)
            #expect(try await api.get("/posts/\(post.id)", as: ben).status == .notFound)
            #expect(try await api.get("/posts/\(post.id)").status == .notFound)
            #expect(try await api.page("/feed/home", as: ben, of: Post.self).items.isEmpty)
            #expect(try await api.page("/feed/global", of: Post.self).items.isEmpty)
            #expect(try await api.page("/users/ana/posts", as: ben, of: Post.self).items.isEmpty)
            #expect(try await api.page("/users/ana/posts", as: ana, of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.page("/me/notifications", as: ben, of: PlazaAPI.Notification.self).items.isEmpty)
            #expect(try await api.fetch(video.variants.medium, as: ben).status == .notFound)
            // The web app shows Ana her video's progress, over its poster.
            let processingPage = try await api.page(.get, "/p/\(post.id)", cookie: ana.cookie)
            #expect(processingPage.text.contains("data-processing=\"\(video.id)\""))
            #expect(processingPage.text.contains("Only you see this post"))
            #expect(!processingPage.text.contains("<video"))
            #expect(try await api.page(.get, "/p/\(post.id)", cookie: ben.cookie).status == .notFound)

            #expect(try await Self.runWorker(api))
            #expect(try await Self.runWorker(api) == false, "nothing left to do")

            // Ready: the post is everyone's, its media ready, and Ben is told of the mention now.
            let seen = try await api.get("/posts/\(post.id)", as: ben)
            #expect(seen.status == .ok)
            let media = try #require(try seen.decode(Post.self).media.first)
            #expect(media.state == .ready)
            #expect(media.duration != nil)
            #expect(try await api.fetch(media.url, as: ben).headers[.contentType] == "video/mp4")
            #expect(try await api.page("/feed/home", as: ben, of: Post.self).items.map(\.id) == [post.id])
            #expect(try await api.page("/feed/global", of: Post.self).items.map(\.id) == [post.id])
            let notifications = try await api.page("/me/notifications", as: ben, of: PlazaAPI.Notification.self)
            #expect(notifications.items.map(\.kind) == [.mention])
            // Ben's feed plays it in place, with its poster; the page's policy lets it play.
            let feed = try await api.page(.get, "/", cookie: ben.cookie)
            #expect(
                feed.text.contains(
                    "<video class=\"video\" controls preload=\"metadata\" playsinline poster=\"\(media.variants.medium)\" src=\"\(media.url)\""
                ), "\(feed.text)")
            #expect(feed.headers[.contentSecurityPolicy]?.contains("media-src 'self'") == true)
        }
    }

    @Test func aVideoThatCannotBeTranscodedFailsAndItsPostStaysHidden() async throws {
        // A file whose header reads as a video and whose frames are cut off.
        let full = try VideoFixtures.mov(seconds: 2, extra: ["-movflags", "+faststart"])
        let cut = Array(full.prefix(full.count / 3))
        try await withApp({ $0.video.worker = false }) { api async throws in
            let ana = try await api.register("ana")
            let response = try await api.upload(cut, as: ana, filename: "x.mov", contentType: "video/quicktime")
            guard response.status == .accepted else {
                // ffprobe may already see the cut: then it is refused at once, which is fine too.
                #expect(response.status == .unprocessableContent, "\(response.text)")
                return
            }
            let video = try response.decode(Media.self)
            let post = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, mediaIds: [video.id])
            ).decode(Post.self)
            #expect(try await Self.runWorker(api))
            let after = try await api.get("/me/media/\(video.id)", as: ana).decode(Media.self)
            if after.state == .ready { return }  // ffmpeg salvaged what frames there were
            #expect(after.state == .failed)
            let mine = try await api.get("/posts/\(post.id)", as: ana).decode(Post.self)
            #expect(mine.media.first?.state == .failed)
            #expect(try await api.get("/posts/\(post.id)").status == .notFound)
            // A failed video cannot go on another post.
            let again = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, mediaIds: [video.id]))
            #expect(again.status == .unprocessableContent)
        }
    }

    @Test func aVideoThatRunsOutOfTimeFailsAndItsUploadLeavesTheOwnersStorage() async throws {
        let clip = try VideoFixtures.mov(seconds: 2)
        try await withApp({
            $0.video.worker = false
            $0.video.timeout = .milliseconds(1)
        }) { api async throws in
            let ana = try await api.register("ana")
            let video = try await Self.uploadVideo(api, clip, as: ana)
            @Sendable func used() async throws -> Int64 {
                try await api.withDatabase { db in
                    try await db.read { try await $0.first("SELECT media_bytes FROM users WHERE username = 'ana'") }?
                        .decode(column: "media_bytes", as: Int64.self) ?? -1
                }
            }
            let before = try await used()
            #expect(try await Self.runWorker(api))
            let after = try await api.get("/me/media/\(video.id)", as: ana).decode(Media.self)
            #expect(after.state == .failed)
            #expect(try await used() == before - Int64(clip.count), "the upload is deleted and no longer counted")
            let files = try FileManager.default.subpathsOfDirectory(atPath: api.config.dataDir + "/media")
                .filter { $0.contains("\(video.id)-") }.sorted()
            #expect(files == ["\(video.id)-medium", "\(video.id)-thumbnail"].map { "\(Self.folder(video.id))/\($0)" })
        }
    }

    static func folder(_ id: String) -> String { String(format: "%02x", Int((UInt64(id) ?? 0) % 256)) }

    @Test func aVideoDeletedWhileProcessingLeavesNoFiles() async throws {
        try await withApp({ $0.video.worker = false }) { api async throws in
            let ana = try await api.register("ana")
            let video = try await Self.uploadVideo(api, try VideoFixtures.mov(seconds: 1), as: ana)
            let post = try await api.call(
                .post, "/posts", as: ana, json: CreatePostRequest(kind: .photo, mediaIds: [video.id])
            ).decode(Post.self)
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await Self.runWorker(api) == false, "the video went with its post")
            let files = try FileManager.default.subpathsOfDirectory(atPath: api.config.dataDir + "/media")
                .filter { $0.contains(video.id) }
            #expect(files.isEmpty, "\(files)")
        }
    }

    @Test(arguments: [
        ("bytes=0-99", ByteRange.from(0, through: 99)), ("bytes=5-", .from(5, through: nil)), ("bytes=-7", .suffix(7)),
        (" BYTES=1-1 ", .from(1, through: 1)),
    ])
    func rangeHeadersAreRead(header: String, range: ByteRange) {
        #expect(ByteRange.parse(header) == range)
    }

    @Test(arguments: [
        "", "bytes=", "bytes=-", "bytes=a-b", "bytes=1-2,3-4", "bytes=9-1", "bits=1-2", "bytes=+1-2",
        "bytes=99999999999999999999-", "bytes=1 -2",
    ])
    func malformedRangeHeadersAreIgnored(header: String) {
        #expect(ByteRange.parse(header) == nil)
    }

    /// Two servers' workers on one queue: each takes a different video (PostgreSQL's `SKIP
    /// LOCKED`, SQLite's one writer), and each video is transcoded once.
    @Test func twoServersWorkersShareTheQueueWithoutDoingAVideoTwice() async throws {
        try await withApp({ $0.video.worker = false }) { api async throws in
            let ana = try await api.register("ana")
            var videos: [Media] = []
            for _ in 0..<2 {
                videos.append(try await Self.uploadVideo(api, try VideoFixtures.mov(seconds: 1), as: ana))
            }
            async let first = Self.runWorker(api)
            async let second = Self.runWorker(api)
            #expect(try await [first, second] == [true, true], "each took one")
            #expect(try await Self.runWorker(api) == false, "nothing left")
            for video in videos {
                #expect(try await api.get("/me/media/\(video.id)", as: ana).decode(Media.self).state == .ready)
            }
            let ids = videos.compactMap { Int64($0.id) }
            let attempts = try await api.withDatabase { db in
                try await db.read { db in
                    try await db.rows("SELECT attempts FROM media WHERE id IN (\(binds: ids))")
                }.map { try $0.decode(column: "attempts", as: Int.self) }
            }
            #expect(attempts == [1, 1])
        }
    }

    /// A server killed mid-transcode (or mid-upload) leaves its work folder behind; the hourly
    /// clean-up removes what is older than any work still running could be, and nothing newer.
    @Test func leftoverWorkFilesAreSweptOnceStale() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-scratch-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = FileManager.default
        for name in ["video-1", "upload-2", "video-3"] {
            try files.createDirectory(atPath: "\(directory)/\(name)", withIntermediateDirectories: true)
            #expect(files.createFile(atPath: "\(directory)/\(name)/source", contents: Data([1, 2, 3])))
        }
        #expect(files.createFile(atPath: "\(directory)/preview-4", contents: Data([1])))
        let old = Date(timeIntervalSinceNow: -7200)
        for name in ["video-1", "upload-2", "preview-4"] {
            try files.setAttributes([.modificationDate: old], ofItemAtPath: "\(directory)/\(name)")
        }
        let cutoff = Timestamp.now.milliseconds - 3_600_000
        #expect(MaintenanceService.sweep(directory, olderThan: cutoff) == 3)
        #expect(try files.contentsOfDirectory(atPath: directory) == ["video-3"], "the one still being worked on")
        #expect(MaintenanceService.sweep(directory + "/missing", olderThan: cutoff) == 0)
    }

    @Test func videoSizesStayWithin720pAndEven() {
        #expect(VideoProbe(width: 3840, height: 2160, durationMillis: 1, hasAudio: true).outputSize == (1280, 720))
        #expect(VideoProbe(width: 1080, height: 1920, durationMillis: 1, hasAudio: true).outputSize == (720, 1280))
        #expect(VideoProbe(width: 321, height: 241, durationMillis: 1, hasAudio: true).outputSize == (322, 242))
        #expect(VideoProbe(width: 5000, height: 10, durationMillis: 1, hasAudio: true).outputSize == (1280, 2))
    }
}
