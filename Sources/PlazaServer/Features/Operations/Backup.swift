import Foundation
import Logging

/// `plaza backup DIR` and `plaza restore DIR`: the database as of one moment, taken while the
/// server runs, and the media files it refers to.
///
/// - SQLite: SQLite's online backup API copies the file in one read transaction (`plaza.sqlite`).
/// - PostgreSQL: `pg_dump --format=custom` (`plaza.pgdump`), which reads in one snapshot too.
/// - Media, local or in S3: every file of every media row of that copy (`media/<id>/<variant>`),
///   read after the database, so none it refers to is missed for being newer.
///
/// A restore goes into an empty data folder or an empty database only: it puts the media back,
/// then the database in one step (a renamed file; one pg_restore transaction), then runs the
/// migrations (a backup of an older Plaza is brought up to date). A restore that failed can
/// be run again.
public enum Backup {
    /// What `manifest.json` says about a backup.
    public struct Manifest: Codable, Sendable, Equatable {
        public var format = 1
        public var createdAt: String
        public var database: String
        public var migration: Int
        public var mediaFiles: Int
        public var mediaBytes: Int64
        /// Media rows none of whose files were found: deleted between the database's copy and
        /// the files' (their posts went with them).
        public var missingMedia: Int
    }

    static let sqliteFile = "plaza.sqlite"
    static let postgresFile = "plaza.pgdump"
    static let manifestFile = "manifest.json"
    /// The longest pg_dump or pg_restore may run.
    static let toolTimeout: Duration = .seconds(6 * 3600)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    public static func backup(config: PlazaConfig, to directory: String, logger: Logger) async throws -> Manifest {
        let files = FileManager.default
        if files.fileExists(atPath: directory) {
            guard (try? files.contentsOfDirectory(atPath: directory))?.isEmpty == true else {
                throw Failure("\(directory) is not empty: back up into a new or empty folder.")
            }
        }
        try files.createDirectory(atPath: directory + "/media", withIntermediateDirectories: true)
        let copy = try await copyDatabase(config: config, into: directory, logger: logger)
        let (ids, migration) = try await copy.withRunning { db in
            try await db.read { conn in
                let ids = try await conn.rows("SELECT id FROM media ORDER BY id").map {
                    try $0.decode(column: "id", as: Int64.self)
                }
                let version = try await conn.first("SELECT max(version) AS v FROM plaza_migrations")
                return (ids, Int(try version?.decode(column: "v", as: Int64?.self) ?? 0))
            }
        }
        let storage = AppServices.mediaStorage(config: config)
        let (count, bytes, missing) = try await copyMedia(ids, from: storage, into: "\(directory)/media")
        let manifest = Manifest(
            createdAt: Date().formatted(.iso8601), database: config.databaseURL == nil ? "sqlite" : "postgres",
            migration: migration, mediaFiles: count, mediaBytes: bytes, missingMedia: missing)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: URL(fileURLWithPath: "\(directory)/\(manifestFile)"))
        if missing > 0 {
            logger.warning("\(missing) media were deleted while the backup ran: their files are not in it")
        }
        logger.info("Backed up the database and \(count) media files (\(bytes) bytes) to \(directory)")
        return manifest
    }

    /// The database copied into the backup (`pg_dump`, or SQLite's online backup), opened: the
    /// media rows to copy files of are read from it.
    private static func copyDatabase(config: PlazaConfig, into directory: String, logger: Logger) async throws
        -> Database
    {
        if let url = config.databaseURL {
            try await pgTool(
                "pg_dump", url: url, ["--format=custom", "--no-owner", "--file=\(directory)/\(postgresFile)"])
            // The media rows as of now: the dump's, less those deleted since (their files went
            // with them), and any newer ones.
            return try await Database.open(config.database, logger: logger)
        } else {
            guard FileManager.default.fileExists(atPath: config.database.sqlitePath) else {
                throw Failure("There is no database at \(config.database.sqlitePath).")
            }
            let source = try SQLiteHandle(path: config.database.sqlitePath)
            try source.execute(script: "PRAGMA busy_timeout = 10000")
            try source.backup(to: "\(directory)/\(sqliteFile)")
            var copied = config.database
            copied.sqlitePath = "\(directory)/\(sqliteFile)"
            return try await Database.open(copied, logger: logger)
        }
    }

    /// Copies the files of `ids`, several media at a time (from S3 each file is a request): the
    /// files and bytes copied, and the media whose files were gone (deleted since).
    private static func copyMedia(_ ids: [Int64], from storage: any MediaStorage, into root: String) async throws
        -> (files: Int, bytes: Int64, missing: Int)
    {
        var count = 0
        var bytes: Int64 = 0
        var missing = 0
        try await withThrowingTaskGroup(of: (files: Int, bytes: Int64).self) { group in
            var next = ids.makeIterator()
            func add() {
                guard let id = next.next() else { return }
                group.addTask { try await copyFiles(ofMedia: id, from: storage, into: root) }
            }
            for _ in 0..<mediaCopies { add() }
            while let copied = try await group.next() {
                count += copied.files
                bytes += copied.bytes
                if copied.files == 0 { missing += 1 }
                add()
            }
        }
        return (count, bytes, missing)
    }

    /// Media whose files are copied at once.
    static let mediaCopies = 8

    /// Copies the files of one media into `root/<id>/<variant>`: how many there were, and their bytes.
    private static func copyFiles(ofMedia id: Int64, from storage: any MediaStorage, into root: String) async throws
        -> (files: Int, bytes: Int64)
    {
        let files = FileManager.default
        try files.createDirectory(atPath: "\(root)/\(id)", withIntermediateDirectories: true)
        var copied = (files: 0, bytes: Int64(0))
        for key in MediaFile.keys(of: id) {
            let path = "\(root)/\(key)"
            // A variant the media never had (a photo has no video), or a file deleted since.
            guard try await storage.get(key, into: path) else { continue }
            copied.files += 1
            copied.bytes += Int64((try? files.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        return copied
    }

    public static func restore(config: PlazaConfig, from directory: String, logger: Logger) async throws -> Manifest {
        let files = FileManager.default
        guard let data = files.contents(atPath: "\(directory)/\(manifestFile)"),
            let manifest = try? JSONDecoder().decode(Manifest.self, from: data)
        else { throw Failure("\(directory) has no readable \(manifestFile): it is not a Plaza backup.") }
        guard manifest.migration <= Migrations.latest else {
            throw Failure(
                "The backup is of a newer Plaza (migration \(manifest.migration)): restore it with that version.")
        }
        // Refused before anything is written: a database or media folder with data in it.
        try await checkEmpty(config: config, for: manifest, logger: logger)
        let sqliteTarget = config.database.sqlitePath
        // The media first: a failure after them leaves only files a retry writes again.
        try await restoreMedia(from: "\(directory)/media", config: config)
        // Then the database, all or nothing.
        if let url = config.databaseURL {
            try await pgTool(
                "pg_restore", url: url,
                ["--no-owner", "--exit-on-error", "--single-transaction", "\(directory)/\(postgresFile)"])
        } else {
            try files.createDirectory(
                atPath: (sqliteTarget as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let partial = sqliteTarget + ".restoring"
            try? files.removeItem(atPath: partial)
            try files.copyItem(atPath: "\(directory)/\(sqliteFile)", toPath: partial)
            try files.moveItem(atPath: partial, toPath: sqliteTarget)
        }
        _ = try await Admin.migrate(config: config, logger: logger)
        logger.info("Restored the database and \(manifest.mediaFiles) media files from \(directory)")
        return manifest
    }

    /// Refuses a database or a media folder with data in it, and a backup of the other database.
    private static func checkEmpty(config: PlazaConfig, for manifest: Manifest, logger: Logger) async throws {
        let files = FileManager.default
        let sqliteTarget = config.database.sqlitePath
        if config.databaseURL != nil {
            guard manifest.database == "postgres" else {
                throw Failure("The backup is of a SQLite database: restore it without a PostgreSQL URL.")
            }
            let db = try await Database.open(config.database, logger: logger)
            let tables = try await db.withRunning { db in
                try await db.read { conn in
                    try await conn.first(
                        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'")
                }
            }.map { try $0.decode(column: "n", as: Int64.self) }
            guard tables == 0 else { throw Failure("The database is not empty: restore into a new database.") }
        } else {
            guard manifest.database == "sqlite" else {
                throw Failure("The backup is of a PostgreSQL database: restore it with its --database-url.")
            }
            // A write-ahead log left beside a removed database would be replayed into the copy.
            for path in [sqliteTarget, sqliteTarget + "-wal", sqliteTarget + "-shm"]
            where files.fileExists(atPath: path) {
                throw Failure("\(path) exists: restore into an empty data folder.")
            }
        }
        if config.media.s3 == nil {
            let media = (config.dataDir as NSString).appendingPathComponent("media")
            guard (try? files.contentsOfDirectory(atPath: media))?.isEmpty ?? true else {
                throw Failure("\(media) is not empty: restore into an empty data folder.")
            }
        }
    }

    /// Stores every file of the backup's media folder.
    private static func restoreMedia(from root: String, config: PlazaConfig) async throws {
        let files = FileManager.default
        let storage = AppServices.mediaStorage(config: config)
        for folder in (try? files.contentsOfDirectory(atPath: root)) ?? [] where Int64(folder) != nil {
            for variant in try files.contentsOfDirectory(atPath: "\(root)/\(folder)") {
                let path = "\(root)/\(folder)/\(variant)"
                let type = contentType(variant: variant, head: try MediaIngest.firstBytes(of: path))
                try await storage.put("\(folder)/\(variant)", file: path, contentType: type)
            }
        }
    }

    /// A stored file's type, as it was given when stored: the variants are JPEG, PNG or WebP
    /// images, a transcoded video is MP4, and a video's upload is kept as bytes.
    static func contentType(variant: String, head: [UInt8]) -> String {
        guard variant != MediaFile.source else { return "application/octet-stream" }
        switch ImageFormat.sniff(head) {
        case .jpeg, .heif: return "image/jpeg"
        case .png: return "image/png"
        case .webp: return "image/webp"
        case .gif: return "image/gif"
        case nil: return VideoFormat.sniff(head) == nil ? "application/octet-stream" : VideoPipeline.contentType
        }
    }

    /// Runs pg_dump or pg_restore against `url`; the password goes in the environment, not
    /// the command line that `ps` shows.
    private static func pgTool(_ name: String, url: String, _ arguments: [String]) async throws {
        guard let tool = ChildProcess.which(name) else {
            throw Failure("\(name) was not found: install PostgreSQL's client tools (Debian: postgresql-client).")
        }
        guard var parts = URLComponents(string: url) else { throw Failure("The database URL is not a URL.") }
        let password = parts.password
        parts.password = nil
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-\(name)-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let outcome = try await ChildProcess.run(
            [tool, "--dbname=\(parts.string ?? url)"] + arguments, timeout: toolTimeout, errorLog: log,
            environment: password.map { ["PGPASSWORD=\($0)"] } ?? [])
        guard outcome.status == 0, !outcome.timedOut else {
            throw Failure("\(name) failed (\(outcome.status)): \(outcome.errorTail)")
        }
    }
}
