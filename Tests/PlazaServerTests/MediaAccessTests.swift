import Foundation
import HTTPTypes
import Logging
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// Who may fetch `/media/{id}/{variant}?k={key}`: unused uploads are their owner's, a post's
/// media follow the post, every URL needs its media's key, and the route is rate limited.
@Suite("Media access")
struct MediaAccessTests {
    @Test func anUnusedUploadIsItsOwnersAloneUntilItIsPosted() async throws {
        try await withApp { api async throws in
            let (ana, ben) = try await api.register("ana", "ben")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let mine = try await api.fetch(media.variants.medium, as: ana)
            #expect(mine.status == .ok)
            #expect(mine.headers[.cacheControl] == "private, no-cache", "no shared cache may keep it")
            #expect(try await api.fetch(media.variants.medium, as: ben).status == .notFound)
            #expect(try await api.fetch(media.variants.original).status == .notFound)
            #expect(try await api.fetch(media.variants.thumbnail, method: .head).status == .notFound)
            // A cached copy is revalidated: only its owner gets the 304.
            let etag: HTTPFields = [.ifNoneMatch: "\"\(media.id)-medium\""]
            #expect(try await api.fetch(media.variants.medium, as: ana, headers: etag).status == .notModified)
            #expect(try await api.fetch(media.variants.medium, as: ben, headers: etag).status == .notFound)

            _ = try await api.post(ana, CreatePostRequest(kind: .photo, body: "posted", mediaIds: [media.id]))
            let posted = try await api.fetch(media.variants.medium)
            #expect(posted.status == .ok)
            #expect(posted.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(try await api.fetch(media.variants.medium, as: ben).status == .ok)
        }
    }

    @Test func aPostsMediaFollowThePost() async throws {
        try await withApp { api async throws in
            let (ana, ben, cat, dan) = try await api.register("ana", "ben", "cat", "dan")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "hi", mediaIds: [media.id]))
            let url = try #require(post.media.first?.variants.thumbnail)
            #expect(try await api.call(.put, "/users/ben/block", as: ana).status == .ok)  // Ana blocked Ben
            #expect(try await api.call(.put, "/users/ana/block", as: cat).status == .ok)  // Cat blocked Ana
            #expect(try await api.fetch(url, as: ben).status == .notFound)
            #expect(try await api.fetch(url, as: cat).status == .notFound)
            #expect(try await api.fetch(url, as: cat, method: .head).status == .notFound)
            #expect(try await api.fetch(url, as: dan).status == .ok)
            #expect(try await api.fetch(url).status == .ok)

            #expect(try await api.call(.delete, "/posts/\(post.id)", as: ana).status == .noContent)
            for viewer in [ana, dan] { #expect(try await api.fetch(url, as: viewer).status == .notFound) }
            #expect(try await api.fetch(url).status == .notFound)
            let rows = try await api.withDatabase { db in
                try await db.read { try await $0.rows("SELECT id FROM media WHERE id = \(bind: Int64(media.id) ?? 0)") }
            }
            #expect(rows.isEmpty, "the media rows go with the post")
        }
    }

    @Test func everyURLCarriesItsMediasKeyAndNothingElseServes() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            let jpeg = try MediaFixtures.sample(.jpeg)
            let first = try await api.uploaded(jpeg, as: ana)
            let second = try await api.uploaded(jpeg, as: ana)
            let key = try #require(first.url.components(separatedBy: "?k=").last)
            let otherKey = try #require(second.url.components(separatedBy: "?k=").last)
            #expect(key.count == 22 && key != otherKey, "128 random bits each, base64url")
            for url in [first.url, first.variants.thumbnail, first.variants.medium, first.variants.original] {
                #expect(url.hasSuffix("?k=\(key)"), "\(url)")
            }
            let nearMiss = key.dropLast() + (key.last == "A" ? "Q" : "A")
            for bad in ["", "?k=", "?k=\(otherKey)", "?k=\(nearMiss)", "?k=\(key)%00", "?k=../../etc", "?x=\(key)"] {
                let response = try await api.fetch("/media/\(first.id)/medium\(bad)", as: ana)
                #expect(response.status == .notFound, "\(bad)")
            }
            #expect(try await api.fetch("/media/\(first.id)/medium?k=\(key)", as: ana).status == .ok)

            // The copies on posts and profiles carry the key too.
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "hi", mediaIds: [first.id]))
            #expect(post.media == [first])
            #expect(try await api.get("/posts/\(post.id)").decode(Post.self).media == [first])
            _ = try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: second.id))
            let avatar = try #require(try await api.get("/users/ana").decode(User.self).avatar)
            #expect(avatar == second)
            #expect(try await api.fetch(avatar.variants.thumbnail).status == .ok)
        }
    }

    @Test func theMediaRouteIsRateLimited() async throws {
        try await withApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy.reads = RateLimiter.Limit(burst: 3, perMinute: 1)
        }) { api async throws in
            let ana = try await api.register("ana")
            let media = try await api.uploaded(try MediaFixtures.sample(.jpeg), as: ana)
            _ = try await api.post(ana, CreatePostRequest(kind: .photo, body: "hi", mediaIds: [media.id]))
            var limited: TestResponse?
            for _ in 0..<5 {
                let response = try await api.fetch(media.variants.thumbnail)
                if response.status == .tooManyRequests {
                    limited = response
                    break
                }
                #expect(response.status == .ok)
            }
            let refused = try #require(limited, "five reads with a burst of three")
            #expect(refused.headers[.retryAfter] != nil)
        }
    }

    /// Migration 7 gives existing media a key and rewrites every copy of their URLs.
    @Test func migrationSevenKeysExistingMediaAndTheirCopies() async throws {
        // A database as version 6 left it, with media shown on a post, an avatar, a space and a link preview.
        try await withDatabase(before: 7) { db in
            try await db.write { conn in
                try await conn.exec(
                    """
                    INSERT INTO users (id, username, username_key, email, email_key, password_hash, display_name, created_at, avatar)
                    VALUES (1, 'ana', 'ana', 'ana@example.com', 'ana@example.com', 'x', 'Ana', 0, '12 image/jpeg 10 10 -')
                    """)
                for (id, preview) in [(10, false), (11, false), (12, false), (13, true)] {
                    try await conn.exec(
                        """
                        INSERT INTO media (id, owner_id, content_type, variant_type, width, height, bytes, used_at, link_preview, created_at)
                        VALUES (\(bind: id), 1, 'image/jpeg', 'image/jpeg', 10, 10, 1000, 1, \(bind: preview), 0)
                        """)
                }
                try await conn.exec(
                    """
                    INSERT INTO posts (id, author_id, kind, body, media, link_url, link_image_url, created_at)
                    VALUES (100, 1, 'photo', 'hi', \(bind: "10 image/jpeg 10 10 -\n11 image/png 10 10 LKO2?U%2Tw=w"), 'https://example.com/', '/media/13/medium', 0)
                    """)
                try await conn.exec(
                    """
                    INSERT INTO link_previews (url, state, next_attempt_at, requested_by, image_url, created_at)
                    VALUES ('https://example.com/', 'ready', 0, 1, '/media/13/medium', 0)
                    """)
            }
            #expect(try await Migrations.run(on: db, logger: Logger(label: "test")).contains(7))
            let keys = try await db.read { conn in
                Dictionary(
                    uniqueKeysWithValues: try await conn.rows("SELECT id, access_key FROM media").map {
                        (
                            try $0.decode(column: "id", as: Int64.self),
                            try $0.decode(column: "access_key", as: String.self)
                        )
                    })
            }
            #expect(keys.count == 4 && Set(keys.values).count == 4 && keys.values.allSatisfy(MediaRecord.isKeyShaped))
            let post = try #require(
                try await db.read { try await $0.first("SELECT media, link_image_url FROM posts WHERE id = 100") })
            let media = MediaRecord.list(try post.decode(column: "media", as: String?.self))
            #expect(media.map(\.id) == [10, 11] && media.map(\.key) == [keys[10], keys[11]])
            #expect(media[1].blurhash == "LKO2?U%2Tw=w")
            #expect(
                try post.decode(column: "link_image_url", as: String.self) == "/media/13/medium?k=\(keys[13] ?? "")")
            let avatar = try #require(
                try await db.read { try await $0.first("SELECT avatar, media_bytes FROM users WHERE id = 1") })
            #expect(MediaRecord.list(try avatar.decode(column: "avatar", as: String?.self)).first?.key == keys[12])
            #expect(try avatar.decode(column: "media_bytes", as: Int64.self) == 4000)
            let preview = try await db.read { try await $0.first("SELECT image_url FROM link_previews") }
            #expect(try preview?.decode(column: "image_url", as: String.self) == "/media/13/medium?k=\(keys[13] ?? "")")
        }
    }
}
