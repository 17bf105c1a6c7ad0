import Foundation
import Logging

/// Log lines as JSON objects, one per line on standard error, for log collectors
/// (`PLAZA_LOG_FORMAT=json`): `time` (ISO 8601, UTC, milliseconds), `level`, `label`, `message`,
/// `source`, and the metadata's keys (a request's `request_id` among them) as strings.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let write: @Sendable (String) -> Void

    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        // One write per line (whole lines, never interleaved below the pipe's atomic size);
        // a failing standard error loses the line, it never stops the server (`write(_:)`
        // would trap).
        self.init(label: label, metadataProvider: metadataProvider) { line in
            try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
        }
    }

    init(
        label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields: [String: String] = [:]
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let extra = event.metadata { all.merge(extra) { $1 } }
        for (key, value) in all { fields[key] = "\(value)" }
        fields["time"] = Self.timestamp(Date())
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        fields["source"] = event.source
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(fields) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}
