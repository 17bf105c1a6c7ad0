import Foundation
import Testing

/// Mastodon's door is a target of its own that sees only what the core declares `package`; these
/// keep the target from reaching past that: no database module, no `@testable` import of the
/// core, no SQL in its sources.
@Suite("The Mastodon door's boundary")
struct DoorBoundaryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let databaseModules = ["SQLKit", "SQLiteKit", "SQLiteNIO", "PostgresKit", "PostgresNIO", "CSQLiteShim"]

    @Test func theTargetDependsOnNoDatabaseModule() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let start = try #require(manifest.range(of: #"name: "PlazaMastodon""#))
        let rest = manifest[start.upperBound...]
        let target = rest[..<(rest.range(of: ".executableTarget(")?.lowerBound ?? rest.endIndex)]
        #expect(target.contains(#""PlazaServer""#), "the door is built on the core")
        for module in Self.databaseModules + ["sql-kit", "postgres", "sqlite"] {
            #expect(!target.lowercased().contains(module.lowercased()), "PlazaMastodon depends on \(module)")
        }
    }

    @Test func itsSourcesImportTheCoreAsAnyOtherModuleAndRunNoSQL() throws {
        let folder = Self.root.appendingPathComponent("Sources/PlazaMastodon")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 10)
        let sql = try Regex(#"(?i)\b(SELECT\s+[\w*]|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b)"#)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(!text.contains("@testable"), "\(file) imports with @testable")
            for module in Self.databaseModules {
                #expect(!text.contains("import \(module)"), "\(file) imports \(module)")
            }
            #expect(text.firstMatch(of: sql) == nil, "\(file) holds SQL")
        }
    }
}
