import Foundation
import Testing

@testable import PlazaServer

/// A message as a mail client reads it: headers, and the text and HTML parts decoded.
struct ReceivedMail: Sendable {
    var headers: [String: String]
    var text: String
    var html: String
    var to: String { headers["to"] ?? "" }
    /// The subject, its RFC 2047 encoded words (`=?UTF-8?B?…?=`, as non-ASCII subjects are
    /// sent) decoded.
    var subject: String {
        let raw = headers["subject"] ?? ""
        guard raw.hasPrefix("=?") else { return raw }
        return raw.split(separator: " ").map { word -> String in
            let parts = word.split(separator: "?")
            guard parts.count == 5, parts[1].uppercased() == "UTF-8", parts[2].uppercased() == "B",
                let bytes = Data(base64Encoded: String(parts[3]))
            else { return String(word) }
            return String(decoding: bytes, as: UTF8.self)
        }.joined()
    }

    /// The token of the first link in the text (`…?token=…`).
    var token: String? {
        guard let range = text.range(of: "token=") else { return nil }
        return String(text[range.upperBound...].prefix(while: { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }))
    }

    /// Reads what `MIME.render` writes: headers, then base64 parts of multipart/alternative.
    static func parse(_ data: Data) -> ReceivedMail? {
        let raw = String(decoding: data, as: UTF8.self)
        guard let split = raw.range(of: "\r\n\r\n") else { return nil }
        var headers: [String: String] = [:]
        for line in raw[..<split.lowerBound].components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        guard let type = headers["content-type"], let b = type.range(of: "boundary=\"") else { return nil }
        let boundary = String(type[b.upperBound...].prefix(while: { $0 != "\"" }))
        var parts: [String: String] = [:]
        for part in raw[split.upperBound...].components(separatedBy: "--\(boundary)") {
            guard let body = part.range(of: "\r\n\r\n") else { continue }
            let head = part[..<body.lowerBound].lowercased()
            let encoded = part[body.upperBound...].components(separatedBy: "\r\n").joined()
            guard let decoded = Data(base64Encoded: encoded) else { continue }
            parts[head.contains("text/html") ? "html" : "text"] = String(decoding: decoded, as: UTF8.self)
        }
        return ReceivedMail(headers: headers, text: parts["text"] ?? "", html: parts["html"] ?? "")
    }
}

/// The `.eml` files in `folder`, oldest first, as they arrive: waits until `count` match (the
/// mail worker runs beside the test), and throws after a minute of looks without them. Each file
/// is read once, and the folder looked at every 50 ms: hundreds of tests wait at once, and a
/// tight loop of reads would take the threads the servers under test need.
func mails(
    in folder: String, count: Int = 1, matching: @Sendable (ReceivedMail) -> Bool = { _ in true }
) async throws -> [ReceivedMail] {
    var read: [String: ReceivedMail] = [:]
    for _ in 0..<1_200 {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".eml") }.sorted()
        for name in names where read[name] == nil {
            if let mail = FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent(name))
                .flatMap(ReceivedMail.parse)
            {
                read[name] = mail
            }
        }
        let found = names.compactMap { read[$0] }.filter(matching)
        if found.count >= count { return found }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw MailboxTimeout(description: "fewer than \(count) mails arrived in \(folder) within a minute of looks")
}

struct MailboxTimeout: Error, CustomStringConvertible {
    let description: String
}

extension TestAPI {
    /// Mail the app wrote to its outbox folder (no SMTP server is configured in tests).
    var outboxFolder: String { (config.dataDir as NSString).appendingPathComponent("outbox") }

    /// The mails to `address` once `count` arrived, oldest first.
    func mails(to address: String, count: Int = 1, subject: String = "") async throws -> [ReceivedMail] {
        try await PlazaServerTests.mails(in: outboxFolder, count: count) {
            $0.to == address && (subject.isEmpty || $0.subject.contains(subject))
        }
    }
}
