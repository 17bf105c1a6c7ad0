import Logging
import Testing

@testable import PlazaServer

/// The database knows which releases ran on it; `plaza migrate --check` says what would run;
/// a binary older than the database's schema refuses it.
@Suite struct SchemaVersionTests {
    @Test func checkSaysWhatWouldRunAndRunRecordsTheRelease() async throws {
        try await withDatabase(before: Migrations.latest) { db in
            let before = try await Migrations.pending(on: db)
            // The one before the newest (versions may skip a number another branch took).
            #expect(before.schema == Migrations.all.dropLast().last?.version)
            #expect(before.pending.map(\.version) == [Migrations.latest])
            // Checking changed nothing.
            #expect(try await Migrations.pending(on: db).pending.map(\.version) == [Migrations.latest])

            #expect(try await Migrations.run(on: db, logger: Logger(label: "test")) == [Migrations.latest])
            let after = try await Migrations.pending(on: db)
            #expect(after.schema == Migrations.latest && after.pending.isEmpty)
            #expect(after.release == PlazaVersion.number)
            // A second start records the same release once.
            try await Migrations.run(on: db, logger: Logger(label: "test"))
            let releases = try await db.read { try await $0.rows("SELECT release FROM plaza_releases") }
            #expect(try releases.map { try $0.decode(column: "release", as: String.self) } == [PlazaVersion.number])
        }
    }

    @Test func anOlderBinaryRefusesANewerSchema() async throws {
        try await withDatabase { db, _ in
            let newer = Migrations.latest + 1
            try await db.write { conn in
                try await conn.exec(
                    "INSERT INTO plaza_migrations (version, name, applied_at) VALUES (\(bind: newer), 'from the future', 0)"
                )
                try await conn.exec(
                    "INSERT INTO plaza_releases (release, schema_version, first_run_at) VALUES ('9.9.9', \(bind: newer), 1)"
                )
            }
            let refused = await #expect(throws: SchemaTooNew.self) {
                try await Migrations.run(on: db, logger: Logger(label: "test"))
            }
            #expect(
                refused?.description.hasPrefix(
                    "The database was migrated by Plaza 9.9.9 (schema \(newer)); this binary, Plaza \(PlazaVersion.number), knows schema \(Migrations.latest) at most."
                ) == true)
            await #expect(throws: SchemaTooNew.self) { try await Migrations.pending(on: db) }
        }
    }
}
