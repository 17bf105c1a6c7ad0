import Foundation
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Per-person storage quota, daily caps on uploads and link previews, and the release of
/// link-preview images nothing shows.
@Suite("Quotas")
struct QuotasTests {
    static func mediaBytes(_ api: TestAPI, _ account: Account) async throws -> Int64 {
        try await api.withDatabase { db in
            try await db.read {
                try await $0.first("SELECT media_bytes FROM users WHERE id = \(bind: Int64(account.id) ?? 0)")
            }?
            .decode(column: "media_bytes", as: Int64.self) ?? -1
        }
    }

    @Test func theStorageQuotaRefusesUploadsPastItUntilSpaceIsFreed() async throws {
        let jpeg = try MediaFixtures.sample(.jpeg, width: 200, height: 150)
        // The stored size of one upload of this image (every variant).
        let stored = try await Self.storedSize(of: jpeg)
        #expect(stored > 0)
        try await withApp({ $0.media.quotas.storageBytes = stored }) { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let first = try await api.uploaded(jpeg, as: ana)
            #expect(try await Self.mediaBytes(api, ana) == stored)
            // Full: refused before the body is processed.
            let full = try await api.upload(jpeg, as: ana)
            #expect(full.status == .contentTooLarge, "\(full.text)")
            #expect(full.error?.code == "storage_quota_exceeded")
            #expect(
                try await api.page("/me/media", as: ana, of: Media.self).items.map(\.id) == [first.id], "nothing kept")
            // Others have their own quota.
            #expect(try await api.upload(jpeg, as: ben).status == .created)
            // Deleting the post that shows the photo frees the space.
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "hi", mediaIds: [first.id]))
            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            #expect(try await Self.mediaBytes(api, ana) == 0)
            #expect(try await api.upload(jpeg, as: ana).status == .created)
        }
        // Room left, but not for this upload once processed: 413, and nothing kept.
        try await withApp({ $0.media.quotas.storageBytes = stored - 1 }) { api async throws in
            let ana = try await api.register("ana")
            let response = try await api.upload(jpeg, as: ana)
            #expect(response.status == .contentTooLarge)
            #expect(response.error?.code == "storage_quota_exceeded")
            #expect(try await api.page("/me/media", as: ana, of: Media.self).items.isEmpty)
            #expect(try await Self.mediaBytes(api, ana) == 0)
        }
    }

    static func storedSize(of bytes: [UInt8]) async throws -> Int64 {
        let size = NIOLockedValueBox<Int64>(0)
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.uploaded(bytes, as: ana)
            let stored = try await mediaBytes(api, ana)
            size.withLockedValue { $0 = stored }
        }
        return size.withLockedValue { $0 }
    }

    @Test func uploadsPastTheDailyCapAre429UntilTomorrow() async throws {
        try await withApp({ $0.media.quotas.uploadsPerDay = 2 }) { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let jpeg = try MediaFixtures.sample(.jpeg)
            for _ in 0..<2 { #expect(try await api.upload(jpeg, as: ana).status == .created) }
            let third = try await api.upload(jpeg, as: ana)
            #expect(third.status == .tooManyRequests)
            #expect(third.error?.code == "daily_upload_limit")
            let wait = try #require(third.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...86_400).contains(wait))
            #expect(try await api.page("/me/media", as: ana, of: Media.self).items.count == 2)
            #expect(try await api.upload(jpeg, as: ben).status == .created, "per person")
        }
    }

    @Test func newLinkPreviewsPastTheDailyCapAre429() async throws {
        try await withApp({ $0.media.quotas.linkPreviewsPerDay = 2 }) { api async throws in
            let ana = try await api.register("ana")
            for n in 1...2 {
                _ = try await api.post(
                    ana, CreatePostRequest(kind: .link, body: "see", link: LinkInput(url: "https://example.com/\(n)")))
            }
            let third = try await api.call(
                .post, "/posts", as: ana,
                json: CreatePostRequest(kind: .link, body: "see", link: LinkInput(url: "https://example.com/3")))
            #expect(third.status == .tooManyRequests)
            #expect(third.error?.code == "daily_link_preview_limit")
            #expect(third.headers[.retryAfter] != nil)
            // A URL already known fetches nothing and costs nothing.
            _ = try await api.post(
                ana, CreatePostRequest(kind: .link, body: "again", link: LinkInput(url: "https://example.com/1")))
            let collection = try await api.call(.post, "/collections", as: ana, json: CollectionRequest(name: "Links"))
                .decode(SavedCollection.self)
            let known = try await api.call(
                .post, "/collections/\(collection.id)/items", as: ana,
                json: SaveItemRequest(url: "https://example.com/2"))
            #expect(known.status == .created)
            let new = try await api.call(
                .post, "/collections/\(collection.id)/items", as: ana,
                json: SaveItemRequest(url: "https://example.com/4"))
            #expect(new.status == .tooManyRequests)
            #expect(new.error?.code == "daily_link_preview_limit")
            #expect(
                try await api.page("/users/ana/posts", of: Post.self).items.count == 3, "the refused post was not made")
        }
    }

    /// Waits until the post's link preview is no longer pending.
    static func previewed(_ api: TestAPI, _ post: Post) async throws -> Post {
        var shown = post
        let deadline = ContinuousClock.now + .seconds(30)
        while shown.link?.fetchedAt == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            shown = try await api.get("/posts/\(post.id)").decode(Post.self)
        }
        return shown
    }

    @Test func previewImagesThatNothingShowsAreReleased() async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(LinkPreviewTests.configure) { api async throws in
                let ana = try await api.register("ana")
                let post = try await Self.previewed(
                    api,
                    try await api.post(
                        ana, CreatePostRequest(kind: .link, body: "a", link: LinkInput(url: "\(base)/page/youtube"))))
                let postImage = try #require(post.link?.imageURL)
                let item = try await LinkPreviewTests.savedLink(api, ana, "\(base)/page/instagram")
                let itemImage = try #require(item.link?.imageURL)
                let before = try await Self.mediaBytes(api, ana)
                #expect(before > 0, "preview images count against the requester's storage")
                #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)

                try await api.withDatabase { db in
                    let services = try AppServices(config: api.config, db: db)
                    let maintenance = MaintenanceService(
                        accounts: services.accounts, media: services.media, mediaStorage: services.mediaStorage,
                        events: services.eventFeed, outbox: services.outbox, pushes: services.pushes,
                        eventRetentionMillis: 7 * 86_400_000, logger: .init(label: "test"))
                    // While its preview may still be copied onto new posts, the image stays.
                    await maintenance.runOnce(now: Timestamp.now.milliseconds + 2 * 3_600_000)
                    #expect(try await api.fetch(postImage).status == .ok)
                    await maintenance.runOnce(
                        now: Timestamp.now.milliseconds + LinkPreviewStore.readyReuseMillis + 2 * 3_600_000 + 60_000)
                }
                #expect(try await api.fetch(postImage).status == .notFound, "no post or item shows it")
                #expect(try await api.fetch(itemImage).status == .ok, "a saved item still shows it")
                #expect(try await Self.mediaBytes(api, ana) < before)
                let id = try #require(Int64(postImage.split(separator: "/")[1]))
                let rows = try await api.withDatabase { db in
                    try await db.read { try await $0.rows("SELECT id FROM media WHERE id = \(bind: id)") }
                }
                #expect(rows.isEmpty)
                let files = try await api.withDatabase { db in
                    try await AppServices(config: api.config, db: db).mediaStorage.get("\(id)/medium")
                }
                #expect(files == nil, "its files go too")
            }
        }
    }
}
