import Foundation
import Hummingbird
import Logging
import Testing
import ZIPFoundation

@testable import PlazaAPI
@testable import PlazaServer

/// `DELETE /me`: the account is hidden at once, kept if its owner signs in within the grace
/// period, and then deleted with everything only theirs (`AccountDeletion`).
@Suite("Account deletion")
struct AccountDeletionTests {
    static let password = "correct horse battery"

    static func deleteMe(_ api: TestAPI, _ account: Account, password: String = password) async throws -> TestResponse {
        try await api.call(.delete, "/me", as: account, json: CurrentPasswordRequest(currentPassword: password))
    }

    /// Runs the purge as the maintenance service would once the grace period is over.
    static func purgeDue(_ api: TestAPI) async throws -> Int {
        try await api.withDatabase { db in
            try await AppServices(config: api.config, db: db).deletions.purgeDue(
                now: Timestamp.now.milliseconds + 31 * 86_400_000, logger: Logger(label: "test"))
        }
    }

    static func count(_ api: TestAPI, _ sql: SQL) async throws -> Int {
        try await api.withDatabase { db in
            try await db.read { try await $0.first(sql)?.decode(column: "n", as: Int.self) ?? -1 }
        }
    }

    @Test func askingNeedsThePasswordHidesTheAccountAndSigningInAgainKeepsIt() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let post = try await api.textPost(ana, "still here?")
            #expect(try await Self.deleteMe(api, ana, password: "not my password").status == .forbidden)
            #expect(
                try await api.call(.delete, "/me", json: CurrentPasswordRequest(currentPassword: "x")).status
                    == .unauthorized)
            #expect(try await api.get("/users/ana", as: bob).status == .ok, "a refused request changes nothing")

            let asked = try await Self.deleteMe(api, ana)
            #expect(asked.status == .accepted, "\(asked.text)")
            let due = try asked.decode(AccountDeletionScheduled.self).deletesAt.milliseconds
            let expected = Timestamp.now.milliseconds + 30 * 86_400_000
            #expect(abs(due - expected) < 600_000, "30 days from now")
            // Hidden at once, signed out everywhere, and told by mail.
            #expect(try await api.get("/me", as: ana).status == .unauthorized)
            #expect(try await api.get("/users/ana", as: bob).status == .notFound)
            #expect(try await api.get("/posts/\(post.id)", as: bob).status == .notFound)
            let mail = try await Self.count(
                api,
                "SELECT COUNT(*) AS n FROM mail_outbox WHERE kind = 'deletion_scheduled' AND recipient = 'ana@example.com'"
            )
            #expect(mail == 1)

            // Signing in again within the grace period keeps the account as it was.
            let login = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: Self.password))
            #expect(login.status == .ok, "\(login.text)")
            #expect(try await api.get("/users/ana", as: bob).status == .ok)
            #expect(try await api.get("/posts/\(post.id)", as: bob).status == .ok)
            #expect(try await Self.purgeDue(api) == 0, "nothing is due any more")
            #expect(try await api.get("/users/ana", as: bob).status == .ok)
        }
    }

    @Test func anAdminCannotDeleteTheirOwnAccount() async throws {
        try await withApp { api async throws in
            let root = try await api.register("root")
            try await api.withDatabase { db in
                try await db.write { try await $0.exec("UPDATE users SET is_admin = TRUE WHERE username_key = 'root'") }
            }
            let refused = try await Self.deleteMe(api, root)
            #expect(refused.status == .forbidden && refused.text.contains("admin_cannot_delete"))
            #expect(try await api.get("/me", as: root).status == .ok)
        }
    }

    @Test func aDueDeletionRemovesEverythingOnlyTheirsAndKeepsEveryoneElses() async throws {
        try await withApp { api async throws in
            let (ana, bob, cy) = try await api.register("ana", "bob", "cyd")
            // Ana's photo post, which Bob likes, comments on and saves; her comment and like on
            // Bob's post; follows both ways; her avatar; a space Bob moderates and one only she is in.
            let photo = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)
            let anaPost = try await api.post(ana, CreatePostRequest(kind: .photo, body: "ramen", mediaIds: [photo.id]))
            let bobPost = try await api.textPost(bob, "bob's")
            #expect(try await api.call(.put, "/posts/\(anaPost.id)/like", as: bob).status == .ok)
            #expect(try await api.call(.put, "/posts/\(bobPost.id)/like", as: ana).status == .ok)
            #expect(
                try await api.call(
                    .post, "/posts/\(anaPost.id)/comments", as: bob, json: CreateCommentRequest(body: "yum")
                )
                .status == .created)
            #expect(
                try await api.call(
                    .post, "/posts/\(bobPost.id)/comments", as: ana, json: CreateCommentRequest(body: "hi")
                )
                .status == .created)
            #expect(
                try await api.call(
                    .post, "/posts/\(bobPost.id)/comments", as: cy, json: CreateCommentRequest(body: "hey")
                )
                .status == .created)
            let saved = try await api.call(.post, "/collections", as: bob, raw: #"{"name":"Food"}"#)
            let collection = try saved.decode(SavedCollection.self)
            #expect(
                try await api.call(
                    .post, "/collections/\(collection.id)/items", as: bob, json: SaveItemRequest(postId: anaPost.id)
                ).status == .created)
            try await api.follow(ana, "bob")
            try await api.follow(bob, "ana")
            let avatar = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)
            #expect(
                try await api.call(.put, "/me/avatar", as: ana, json: SetAvatarRequest(mediaId: avatar.id)).status
                    == .ok)
            let image = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)
            #expect(
                try await api.call(
                    .post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "ramen", name: "Ramen", imageId: image.id)
                ).status == .created)
            #expect(
                try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "solo", name: "Solo"))
                    .status == .created)
            #expect(try await api.call(.put, "/spaces/ramen/membership", as: cy).status == .ok)
            #expect(try await api.call(.put, "/spaces/ramen/membership", as: bob).status == .ok)
            #expect(
                try await api.call(.patch, "/spaces/ramen/members/bob", as: ana, raw: #"{"role":"moderator"}"#).status
                    == .ok)
            let photoFile = try #require(anaPost.media.first?.variants.original)
            #expect(try await api.fetch(photoFile).status == .ok)

            #expect(try await Self.deleteMe(api, ana).status == .accepted)
            #expect(try await Self.purgeDue(api) == 1)

            // Her account and what was hers are gone; her name stays retired.
            #expect(try await Self.count(api, "SELECT COUNT(*) AS n FROM users WHERE username_key = 'ana'") == 0)
            for table in [
                "posts WHERE author_id", "comments WHERE author_id", "likes WHERE user_id", "media WHERE owner_id",
            ] {
                #expect(
                    try await Self.count(api, "SELECT COUNT(*) AS n FROM \(unsafeRaw: table) = \(bind: Int64(ana.id)!)")
                        == 0, "\(table)")
            }
            // Her files go too: the storage itself no longer has them.
            let storage = try await api.withDatabase { db in try AppServices(config: api.config, db: db).mediaStorage }
            for media in [photo.id, avatar.id] {
                for variant in ImagePipeline.Variant.allCases {
                    #expect(try await storage.get("\(media)/\(variant.rawValue)") == nil, "\(media)/\(variant)")
                }
            }
            let again = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(username: "Ana", email: "new@example.com", password: Self.password))
            #expect(again.status == .conflict && again.text.contains("username_taken"))
            #expect(
                try await api.call(.post, "/auth/login", json: LoginRequest(login: "ana", password: Self.password))
                    .status == .unauthorized)

            // Everyone else's things stay, with their counts right.
            let bobsPost = try await api.get("/posts/\(bobPost.id)", as: bob).decode(Post.self)
            #expect(bobsPost.counts.likes == 0 && bobsPost.counts.comments == 1)
            let bobNow = try await api.get("/users/bob", as: cy).decode(User.self)
            #expect(bobNow.counts.followers == 0 && bobNow.counts.following == 0)
            let items = try await api.page(
                "/collections/\(collection.id)/items?limit=10", as: bob, of: CollectionItem.self)
            #expect(items.items.isEmpty, "a saved post of hers goes from the collection")
            // The space Bob moderates is his now, with its image; the one only she was in is gone.
            let ramen = try await api.get("/spaces/ramen", as: cy).decode(Space.self)
            #expect(ramen.owner.username == "bob" && ramen.counts.members == 2)
            #expect(try await api.fetch(try #require(ramen.image?.variants.original)).status == .ok)
            #expect(try await api.get("/spaces/solo", as: cy).status == .notFound)
            #expect(try await api.get("/me", as: bob).status == .ok)
        }
    }

    @Test func othersKeepTheirGroupedNotificationsAndTheLinkPreviewImagesHerRequestsFetched() async throws {
        try await FixtureServer.run { base, _ in
            try await withApp(LinkPreviewTests.configure) { api async throws in
                let (ana, bob, cyd) = try await api.register("ana", "bob", "cyd")
                // Ana saves a link first: its preview image is fetched for her, then shown to Bob too.
                let anasItem = try await LinkPreviewTests.savedLink(api, ana, "\(base)/page/instagram")
                let bobsItem = try await LinkPreviewTests.savedLink(api, bob, "\(base)/page/instagram")
                let image = try #require(bobsItem.link?.imageURL)
                #expect(anasItem.link?.imageURL == image, "one image, fetched at Ana's request")
                // Cyd, then Ana, like Bob's post: one grouped notification, Ana its latest actor.
                let post = try await api.textPost(bob, "like me")
                for liker in [cyd, ana] {
                    #expect(try await api.call(.put, "/posts/\(post.id)/like", as: liker).status == .ok)
                }
                #expect(try await Self.deleteMe(api, ana).status == .accepted)
                #expect(try await Self.purgeDue(api) == 1)

                #expect(try await api.fetch(image).status == .ok, "Bob's saved link keeps its image")
                let id = try #require(Int64(image.split(separator: "/")[1]))
                #expect(
                    try await Self.count(
                        api,
                        "SELECT COUNT(*) AS n FROM media WHERE id = \(bind: id) AND owner_id = \(bind: Int64(bob.id)!)")
                        == 1, "the image is Bob's now")
                let notifications = try await api.get("/me/notifications", as: bob).decode(
                    Page<PlazaAPI.Notification>.self)
                let like = try #require(notifications.items.first { $0.kind == .like })
                #expect(like.actors.map(\.username) == ["cyd"] && like.actorCount == 1, "Cyd's like stays, without Ana")
            }
        }
    }

    @Test func aPasswordResetWorksDuringTheGracePeriodAndAnAppsSessionDoesNotKeepTheAccount() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            #expect(try await Self.deleteMe(api, ana).status == .accepted)
            #expect(
                try await api.call(.post, "/auth/password/forgot", raw: #"{"email":"ana@example.com"}"#).status
                    == .accepted)
            let mails = try await Self.count(
                api,
                "SELECT COUNT(*) AS n FROM mail_outbox WHERE kind = 'password_reset' AND recipient = 'ana@example.com'")
            #expect(mails == 1, "someone who forgot their password can still keep the account")
            // A session made for an app (not a sign-in) does not bring the account back.
            _ = try await api.withDatabase { db in
                try await AppServices(config: api.config, db: db).accounts.createSession(
                    userID: Int64(ana.id)!, userAgent: nil, ip: nil)
            }
            #expect(try await api.get("/users/ana", as: bob).status == .notFound)
        }
    }

    @Test func aDeletionAlreadyDueGoesOnWhateverTheModeratorsDo() async throws {
        try await withApp { api async throws in
            let root = try await api.register("root")
            try await api.withDatabase { db in
                try await db.write { try await $0.exec("UPDATE users SET is_admin = TRUE WHERE username_key = 'root'") }
            }
            let ana = try await api.register("ana")
            #expect(try await Self.deleteMe(api, ana).status == .accepted)
            try await api.withDatabase { db in
                try await db.write {
                    try await $0.exec("UPDATE users SET deletion_due_at = 1 WHERE username_key = 'ana'")
                }
            }
            #expect(try await api.call(.put, "/admin/users/ana/suspension", as: root).status == .noContent)
            #expect(try await Self.purgeDue(api) == 1)
            #expect(try await Self.count(api, "SELECT COUNT(*) AS n FROM users WHERE username_key = 'ana'") == 0)
        }
    }

    @Test func aModeratorsSuspensionCallsOffAPendingDeletion() async throws {
        try await withApp { api async throws in
            let root = try await api.register("root")
            try await api.withDatabase { db in
                try await db.write { try await $0.exec("UPDATE users SET is_admin = TRUE WHERE username_key = 'root'") }
            }
            let ana = try await api.register("ana")
            _ = try await api.textPost(ana, "evidence")
            #expect(try await Self.deleteMe(api, ana).status == .accepted)
            // Reinstating is not possible while the deletion is pending: that is the owner's call.
            #expect(try await api.call(.delete, "/admin/users/ana/suspension", as: root).status == .noContent)
            #expect(try await api.get("/users/ana", as: root).status == .notFound)
            #expect(try await api.call(.put, "/admin/users/ana/suspension", as: root).status == .noContent)
            #expect(try await Self.purgeDue(api) == 0, "the moderators keep the account")
            let login = try await api.call(
                .post, "/auth/login", json: LoginRequest(login: "ana", password: Self.password))
            #expect(login.status == .forbidden && login.text.contains("account_suspended"))
            #expect(try await Self.count(api, "SELECT COUNT(*) AS n FROM posts") == 1)
        }
    }
}

/// `GET /me/export` and `plaza export`: a person's data as a ZIP archive (`AccountExport`).
@Suite("Account export")
struct AccountExportTests {
    /// The archive's files by path.
    static func entries(_ data: [UInt8]) throws -> [String: Data] {
        let archive = try Archive(data: Data(data), accessMode: .read)
        var files: [String: Data] = [:]
        for entry in archive where entry.type == .file {
            var bytes = Data()
            _ = try archive.extract(entry) { bytes.append($0) }
            files[entry.path] = bytes
        }
        return files
    }

    static func json(_ data: Data?) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: try #require(data))
    }

    @Test func theArchiveHoldsThePersonsDataAndMediaReadableWithoutPlaza() async throws {
        try await withApp { api async throws in
            let (ana, bob) = try await api.register("ana", "bob")
            let photo = try await api.uploaded(try MediaFixtures.jpegWithEXIF(), as: ana)
            let post = try await api.post(ana, CreatePostRequest(kind: .photo, body: "ramen <3", mediaIds: [photo.id]))
            let bobPost = try await api.post(
                bob,
                CreatePostRequest(
                    kind: .text, body: "bob's",
                    poll: PollInput(options: ["a", "b", "c"], multiple: true, expiresInSeconds: 600)))
            #expect(
                try await api.call(
                    .post, "/posts/\(bobPost.id)/poll/votes", as: ana, json: PollVoteRequest(choices: [2, 0])
                ).status == .ok)
            #expect(
                try await api.call(
                    .post, "/posts/\(bobPost.id)/comments", as: ana, json: CreateCommentRequest(body: "nice")
                )
                .status == .created)
            #expect(try await api.call(.put, "/posts/\(bobPost.id)/like", as: ana).status == .ok)
            try await api.follow(ana, "bob")
            #expect(try await api.call(.put, "/posts/\(bobPost.id)/boost", as: ana).status == .ok)
            #expect(try await api.call(.put, "/hashtags/Ramen/follow", as: ana).status == .noContent)
            let collection = try await api.call(.post, "/collections", as: ana, raw: #"{"name":"Later"}"#).decode(
                SavedCollection.self)
            #expect(
                try await api.call(
                    .post, "/collections/\(collection.id)/items", as: ana, json: SaveItemRequest(postId: bobPost.id)
                ).status == .created)

            #expect(try await api.get("/me/export").status == .unauthorized)
            let response = try await api.get("/me/export", as: ana)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/zip")
            #expect(response.headers[.contentDisposition]?.contains("attachment; filename=\"plaza-ana-") == true)
            let files = try Self.entries(Array(response.body.readableBytesView))
            let root = "ana-plaza/"
            let account = try Self.json(files[root + "account.json"])
            #expect(account["username"]?.stringValue == "ana" && account["email"]?.stringValue == "ana@example.com")
            let posts = try Self.json(files[root + "posts.json"])
            #expect(posts.arrayValue?.map { $0["id"]?.stringValue } == [post.id], "her posts, not Bob's")
            #expect(try Self.json(files[root + "comments.json"]).arrayValue?.first?["body"]?.stringValue == "nice")
            #expect(try Self.json(files[root + "likes.json"]).arrayValue?.first?["postId"]?.stringValue == bobPost.id)
            #expect(try Self.json(files[root + "boosts.json"]).arrayValue?.first?["postId"]?.stringValue == bobPost.id)
            let votes = try Self.json(files[root + "votes.json"]).arrayValue
            #expect(votes?.first?["postId"]?.stringValue == bobPost.id)
            #expect(votes?.first?["choices"] == .array([.number(0), .number(2)]))
            #expect(try Self.json(files[root + "hashtags.json"]).arrayValue?.first?["tag"]?.stringValue == "Ramen")
            #expect(
                try Self.json(files[root + "follows.json"])["following"]?.arrayValue?.first?["username"]?.stringValue
                    == "bob")
            let saved = try Self.json(files[root + "collections.json"]).arrayValue?.first
            #expect(saved?["collection"]?["name"]?.stringValue == "Later" && saved?["items"]?.arrayValue?.count == 1)
            // The photo is in the archive, byte for byte what the server serves, and the page shows it.
            let media = try #require(try Self.json(files[root + "media.json"]).arrayValue?.first)
            let file = try #require(media["file"]?.stringValue)
            #expect(media["id"]?.stringValue == photo.id && media["postId"]?.stringValue == post.id)
            #expect(media["contentType"]?.stringValue == "image/jpeg" && file.hasSuffix(".jpg"), "\(file)")
            let served = try await api.fetch(photo.variants.original)
            #expect(files[root + file] == Data(served.body.readableBytesView))
            let index = String(decoding: try #require(files[root + "index.html"]), as: UTF8.self)
            #expect(index.contains("<img src=\"\(file)\"") && index.contains("ramen &lt;3"))
            #expect(files[root + "README.txt"] != nil)
            // Nothing is left in the scratch folder.
            let uploads = try FileManager.default.contentsOfDirectory(
                atPath: (api.config.dataDir as NSString).appendingPathComponent("uploads"))
            #expect(uploads.filter { $0.hasPrefix("export-") }.isEmpty, "\(uploads)")
        }
    }

    @Test func theCommandWritesTheSameArchive() async throws {
        try await withApp { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.textPost(ana, "from the command line")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-export-\(UUID())").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let file = folder + "/ana.zip"
            let name = try await Admin.export(
                config: api.config, user: "ANA@example.com", to: file, logger: Logger(label: "test"))
            #expect(name == "ana")
            let files = try Self.entries(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            #expect(try Self.json(files["ana-plaza/posts.json"]).arrayValue?.count == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["ana.zip"], "no staging left")
            #expect(
                try await Admin.export(config: api.config, user: "nobody", to: file, logger: Logger(label: "test"))
                    == nil)
            // A suspended person's posts, hidden from everyone, are still theirs to take.
            try await api.withDatabase { db in
                try await db.write { try await $0.exec("UPDATE users SET suspended_at = 1 WHERE username_key = 'ana'") }
            }
            _ = try await Admin.export(config: api.config, user: "ana", to: file, logger: Logger(label: "test"))
            let again = try Self.entries(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            #expect(try Self.json(again["ana-plaza/posts.json"]).arrayValue?.count == 1)
        }
    }
}

extension JSONValue {
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}
