import Foundation

/// A message Plaza sends: to one address, in plain text and HTML.
struct MailMessage: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable {
        case verifyEmail = "verify_email"
        case passwordReset = "password_reset"
        case emailChanged = "email_changed"
        case providerLinked = "provider_linked"
        case deletionScheduled = "deletion_scheduled"
        case registrationApproved = "registration_approved"
        case registrationRejected = "registration_rejected"
        case signUpWaiting = "sign_up_waiting"
    }
    var kind: Kind
    var to: String
    var subject: String
    var text: String
    var html: String
}

/// A mailbox as a header shows it: `Plaza <noreply@example.com>` or a bare address
/// (`PLAZA_MAIL_FROM`).
package struct MailAddress: Sendable, Equatable {
    var name: String?
    package var address: String

    static func parse(_ text: String) throws -> MailAddress {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var name: String?
        var address = trimmed
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            let display = trimmed[..<open].trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            name = display.isEmpty ? nil : display
        }
        guard MIME.isDeliverable(address),
            name?.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 32 } == true }) != true
        else { throw ConfigurationError("mail-from must be an address or Name <address>, not \(text).") }
        return MailAddress(name: name, address: address)
    }

    /// The header form: the name quoted, or as an RFC 2047 encoded word when it is not ASCII.
    var header: String {
        guard let name else { return address }
        return "\(MIME.phrase(name)) <\(address)>"
    }
}

/// RFC 5322 and MIME formatting of outgoing mail.
enum MIME {
    /// An address Plaza can hand to SMTP as it is: ASCII, no control characters or brackets.
    static func isDeliverable(_ address: String) -> Bool {
        (try? Validate.email(address)) == address && address.allSatisfy(\.isASCII)
    }

    /// The whole message: headers, then the text and HTML as multipart/alternative, each base64
    /// (so no line is long and none starts with a dot), with CRLF line ends.
    static func render(
        _ message: MailMessage, from: MailAddress, messageID: String, date: Date, boundary: String
    ) -> [UInt8] {
        var lines = [
            "From: \(from.header)",
            "To: \(message.to)",
            "Subject: \(encodedHeader(message.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", message.text), ("text/html", message.html)] {
            lines.append("--\(boundary)")
            lines.append("Content-Type: \(type); charset=utf-8")
            lines.append("Content-Transfer-Encoding: base64")
            lines.append("")
            lines.append(contentsOf: base64Lines(Array(body.utf8)))
        }
        lines.append("--\(boundary)--")
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines
    }

    /// A header value with any control characters dropped, as an RFC 2047 encoded word when it
    /// is not plain ASCII.
    static func encodedHeader(_ value: String) -> String {
        let clean = String(value.unicodeScalars.filter { $0.value >= 32 && $0.value != 127 }.map(Character.init))
        if clean.allSatisfy(\.isASCII) { return clean }
        return "=?UTF-8?B?\(Data(clean.utf8).base64EncodedString())?="
    }

    /// A display name: quoted when ASCII, an encoded word when not.
    static func phrase(_ value: String) -> String {
        let clean = encodedHeader(value)
        guard clean.hasPrefix("=?") == false else { return clean }
        return "\"" + clean.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// `Thu, 26 Nov 2026 09:33:01 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }
}
