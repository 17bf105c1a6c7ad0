import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// `plaza backup` and `plaza restore`, on SQLite (the backup API) and PostgreSQL (pg_dump).
@Suite("Backups: online, under writes, restored and compared")
struct BackupTests {
    typealias PostRow = [String]

    /// Every post (id, author, kind, body), media row (id, owner) and follow, in order.
    static func rows(_ db: Database) async throws -> (posts: [PostRow], media: [PostRow], users: [PostRow]) {
        try await db.read { conn in
            let posts = try await conn.rows("SELECT id, author_id, kind, body FROM posts ORDER BY id").map { row in
                [
                    String(try row.decode(column: "id", as: Int64.self)),
                    String(try row.decode(column: "author_id", as: Int64.self)),
                    try row.decode(column: "kind", as: String.self),
                    try row.decode(column: "body", as: String?.self) ?? "",
                ]
            }
            let media = try await conn.rows("SELECT id, owner_id FROM media ORDER BY id").map { row in
                [
                    String(try row.decode(column: "id", as: Int64.self)),
                    String(try row.decode(column: "owner_id", as: Int64.self)),
                ]
            }
            let users = try await conn.rows("SELECT id, username, password_hash FROM users ORDER BY id").map { row in
                [
                    String(try row.decode(column: "id", as: Int64.self)),
                    try row.decode(column: "username", as: String.self),
                    try row.decode(column: "password_hash", as: String.self),
                ]
            }
            return (posts, media, users)
        }
    }

    /// Media in the data folder, and (with moto, as `make test` runs it) in an S3 bucket
    /// restored into another bucket.
    static func bucket() async throws -> S3MediaSettings {
        let settings = S3MediaStorageTests.settings()
        try await S3MediaStorage(settings: settings, client: .shared).createBucket()
        return settings
    }

    @Test(arguments: TestS3.endpoint == nil ? [false] : [false, true])
    func aBackupTakenWhilePeoplePostRestoresToAConsistentCopy(s3: Bool) async throws {
        let buckets: [S3MediaSettings?] = s3 ? [try await Self.bucket(), try await Self.bucket()] : [nil, nil]
        let config = try await TestDatabase.config { $0.media.s3 = buckets[0] }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-backup-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TestDatabase.cleaningUp(config) {
            let app = try await buildApplication(config: config, logger: Logger(label: "test"))
            let (manifest, before, photo) = try await app.test(.router) { client in
                let api = TestAPI(client: client, config: config)
                let (ana, bea) = try await api.register("ana", "bea")
                let photoBytes = try MediaFixtures.jpegWithEXIF(width: 64, height: 48)
                let photo = try await api.uploaded(photoBytes, as: ana)
                _ = try await api.post(ana, CreatePostRequest(kind: .photo, body: "Kept", mediaIds: [photo.id]))
                for i in 0..<10 { _ = try await api.textPost(bea, "Before \(i)") }
                let before = try await api.withDatabase { try await Self.rows($0) }
                // Two people keep posting while the backup is taken.
                let done = NIOLockedValueBox(false)
                let written = NIOLockedValueBox(0)
                let manifest = try await withThrowingTaskGroup(of: Backup.Manifest?.self) { group in
                    for account in [ana, bea] {
                        group.addTask {
                            var count = 0
                            while !done.withLockedValue({ $0 }) {
                                _ = try await api.textPost(account, "During \(count)")
                                count += 1
                                written.withLockedValue { $0 += 1 }
                            }
                            return nil
                        }
                    }
                    group.addTask {
                        defer { done.withLockedValue { $0 = true } }
                        // Once the writers are under way.
                        while written.withLockedValue({ $0 }) < 4 { try await Task.sleep(for: .milliseconds(5)) }
                        return try await Backup.backup(config: config, to: directory, logger: Logger(label: "test"))
                    }
                    var manifest: Backup.Manifest?
                    for try await result in group { manifest = manifest ?? result }
                    return try #require(manifest)
                }
                return (manifest, before, photo)
            }
            let source = try await Database.open(config.database, logger: Logger(label: "test")).withRunning {
                try await Self.rows($0)
            }
            #expect(manifest.database == (config.databaseURL == nil ? "sqlite" : "postgres"))
            #expect(manifest.migration == Migrations.latest)
            #expect(manifest.mediaFiles >= 3, "the photo's original and its variants")

            // Restored into an empty data folder or database: every row as of one moment.
            let target = try await TestDatabase.config(migrated: false) { $0.media.s3 = buckets[1] }
            try await TestDatabase.cleaningUp(target) {
                let restored = try await Backup.restore(config: target, from: directory, logger: Logger(label: "test"))
                #expect(restored == manifest)
                let copy = try await Database.open(target.database, logger: Logger(label: "test")).withRunning {
                    try await Self.rows($0)
                }
                #expect(copy.users == source.users)
                #expect(copy.media == source.media)
                // What was there before the backup, all of it; what came during, a prefix of it
                // in each author's order (one moment's copy: no later post without the earlier).
                #expect(Set(before.posts.map { $0[0] }).isSubset(of: copy.posts.map { $0[0] }))
                #expect(copy.posts.filter { $0[3].hasPrefix("During") }.count >= 4)
                #expect(Set(copy.posts.map { $0 }).isSubset(of: Set(source.posts.map { $0 })))
                for author in Set(source.posts.map { $0[1] }) {
                    let mine = source.posts.filter { $0[1] == author }
                    let kept = copy.posts.filter { $0[1] == author }
                    #expect(Array(mine.prefix(kept.count)) == kept, "author \(author)")
                }
                // The photo's files are back, byte for byte.
                let id = try #require(Int64(photo.id))
                let from = AppServices.mediaStorage(config: config)
                let to = AppServices.mediaStorage(config: target)
                for key in MediaFile.keys(of: id) {
                    let original = try await from.get(key)
                    #expect(try await to.get(key) == original, "\(key)")
                }
                // A second restore is refused and leaves the first alone.
                await #expect(throws: Backup.Failure.self) {
                    try await Backup.restore(config: target, from: directory, logger: Logger(label: "test"))
                }
                let again = try await Database.open(target.database, logger: Logger(label: "test")).withRunning {
                    try await Self.rows($0)
                }
                #expect(again.posts == copy.posts)
            }
            // A write-ahead log left in a folder would be replayed into the copy: refused.
            if config.databaseURL == nil {
                let stale = try await TestDatabase.config(migrated: false)
                try FileManager.default.createDirectory(atPath: stale.dataDir, withIntermediateDirectories: true)
                _ = FileManager.default.createFile(
                    atPath: stale.database.sqlitePath + "-wal", contents: Data([1, 2, 3]))
                await #expect(throws: Backup.Failure.self) {
                    try await Backup.restore(config: stale, from: directory, logger: Logger(label: "test"))
                }
                #expect(!FileManager.default.fileExists(atPath: stale.database.sqlitePath))
                TestDatabase.dispose(stale)
            }
            #expect(manifest.missingMedia == 0)
            // A backup goes into a new or empty folder only.
            await #expect(throws: Backup.Failure.self) {
                try await Backup.backup(config: config, to: directory, logger: Logger(label: "test"))
            }
        }
    }
}
