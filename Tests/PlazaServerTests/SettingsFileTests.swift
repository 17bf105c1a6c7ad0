import Foundation
import Testing

@testable import PlazaServer

/// The settings file `plaza setup` writes is the one the archive ships as its example.
@Suite struct SettingsFileTests {
    static let packaged = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/plaza.env")

    @Test func theArchivesExampleIsWhatSetupWritesWithTheExamplesValues() throws {
        #expect(try String(contentsOf: Self.packaged, encoding: .utf8) == SettingsFile.example.text)
    }

    @Test func valuesThatWouldBreakTheFileAreRefused() {
        var settings = SettingsFile.example
        settings.name = "Plaza\nPLAZA_DATA_DIR=/"
        #expect(throws: ConfigurationError.self) { try settings.validate() }
        settings = .example
        settings.publicURL = "plaza.example.com"
        #expect(throws: ConfigurationError.self) { try settings.validate() }
        settings = .example
        settings.dataDir = "data"
        #expect(throws: ConfigurationError.self) { try settings.validate() }
        #expect(throws: Never.self) { try SettingsFile.example.validate() }
    }
}
