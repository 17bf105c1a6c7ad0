import Foundation

/// Which Plaza this is: `plaza --version`, `GET /api/v1/about` and Mastodon's instance entity.
public enum PlazaVersion {
    /// The release (CHANGELOG.md); raised with every release, so a database can tell which
    /// binary last migrated it.
    public static let number = "1.0.0"

    /// The commit the binary was built from. `make dist` writes it into the resources as `BUILD`;
    /// a binary built by hand says nil.
    public static let commit: String? = {
        guard let root = Bundle.module.resourcePath,
            let text = try? String(contentsOfFile: root + "/BUILD", encoding: .utf8)
        else { return nil }
        let commit = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return commit.isEmpty ? nil : commit
    }()

    /// `1.0.0 (commit 1a2b3c4)`, or `1.0.0 (built from source)`.
    public static var description: String {
        "\(number) (\(commit.map { "commit \($0)" } ?? "built from source"))"
    }
}
