import Foundation
import Testing

/// The README and docs/ link only to files of the repository, and those files are there.
@Suite("Links in the docs")
struct DocsLinksTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
        .standardizedFileURL

    /// `[text](target)` and `![alt](target)` targets of a Markdown file.
    static func targets(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.range(of: "](") {
            rest = rest[open.upperBound...]
            guard let close = rest.firstIndex(of: ")") else { break }
            found.append(String(rest[..<close]))
            rest = rest[close...]
        }
        return found
    }

    @Test func everyRelativeLinkResolvesInsideTheRepository() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        var broken: [String] = []
        var checked = 0
        for file in ["README.md", "CONTRIBUTING.md"] + docs {
            let url = Self.root.appendingPathComponent(file)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            for target in Self.targets(in: text)
            where !target.contains("://") && !target.hasPrefix("#") && !target.hasPrefix("mailto:") {
                let path = String(target.split(separator: "#", maxSplits: 1).first ?? "")
                let resolved = url.deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL
                checked += 1
                if !resolved.path.hasPrefix(Self.root.path) || !FileManager.default.fileExists(atPath: resolved.path) {
                    broken.append("\(file): \(target)")
                }
            }
        }
        #expect(checked > 20, "the docs' links were read")
        #expect(broken == [])
    }
}
