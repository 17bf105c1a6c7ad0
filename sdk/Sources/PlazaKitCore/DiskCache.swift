import Foundation

/// One Codable value kept as a JSON file in an app's cache directory, so a screen opens on what
/// it showed last time before the network answers. Reads that fail (first launch, an older
/// format) give nil; writes that fail are dropped: a cache is never the only copy.
struct DiskCache: Sendable {
    let file: URL

    /// The file `plaza-<kind>-<name>.json` in `directory`, with `name` reduced to letters,
    /// digits and dashes.
    init(directory: URL, kind: String, name: String) {
        let safe = name.unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) || $0 == "-" ? Character($0) : "_"
        }
        file = directory.appendingPathComponent("plaza-\(kind)-\(String(safe)).json")
    }

    func load<Value: Decodable>(_ type: Value.Type) -> Value? {
        guard let data = try? Data(contentsOf: file) else { return nil }
        return try? JSONDecoder().decode(Value.self, from: data)
    }

    func store(_ value: some Encodable) {
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? JSONEncoder().encode(value).write(to: file, options: .atomic)
    }

    func remove() { try? FileManager.default.removeItem(at: file) }
}
