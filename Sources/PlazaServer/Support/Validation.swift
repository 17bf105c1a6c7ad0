import Foundation

/// Field rules shared by the routes. Each throws a 422 naming the field.
enum Validate {
    static func username(_ value: String) throws -> String {
        let ok =
            (3...30).contains(value.utf8.count)
            && value.utf8.allSatisfy {
                ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 || ($0 >= 65 && $0 <= 90)
            }
        guard ok else {
            throw PlazaError.invalid("username", "username must be 3–30 characters: letters a–z, digits and _.")
        }
        return value.lowercased()
    }

    static func email(_ value: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !trimmed.contains(where: {
                $0.isWhitespace || $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true
                    || "<>()[]\\,;:\"".contains($0)
            })
        else { throw PlazaError.invalid("email", "email must be an address like name@example.com.") }
        return trimmed
    }

    static func password(_ value: String, field: String = "password") throws {
        guard value.count >= 8 else { throw PlazaError.invalid(field, "\(field) must be at least 8 characters.") }
        guard value.count <= 128 else { throw PlazaError.invalid(field, "\(field) must be at most 128 characters.") }
    }

    /// Trims surrounding whitespace and checks length (in characters); nil when left empty.
    static func text(_ value: String?, field: String, max: Int, required: Bool = false) throws -> String? {
        let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if trimmed.isEmpty {
            if required { throw PlazaError.invalid(field, "\(field) must not be empty.") }
            return nil
        }
        guard trimmed.count <= max else {
            throw PlazaError.invalid(field, "\(field) must be at most \(max) characters.")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.value == 0 }) else {
            throw PlazaError.invalid(field, "\(field) must not contain NUL characters.")
        }
        return trimmed
    }

    /// `text` for a field that must have some: the trimmed text, or 422.
    static func requiredText(_ value: String?, field: String, max: Int) throws -> String {
        guard let text = try text(value, field: field, max: max, required: true) else {
            throw PlazaError.invalid(field, "\(field) must not be empty.")
        }
        return text
    }

    static func statusKind(_ value: String) throws -> String {
        let ok =
            (1...32).contains(value.utf8.count)
            && value.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || $0 == 95 || ($0 >= 48 && $0 <= 57) }
        guard ok else {
            throw PlazaError.invalid("status.kind", "status.kind must be 1–32 characters of a–z, 0–9 and _.")
        }
        return value
    }

    static func color(_ value: String) throws -> String {
        let hex = value.utf8.dropFirst()
        guard value.utf8.count == 7, value.hasPrefix("#"),
            hex.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) || ($0 >= 65 && $0 <= 70) })
        else { throw PlazaError.invalid("activity.color", "activity.color must be a colour like #ff8800.") }
        return value.lowercased()
    }

    static func url(_ value: String, field: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= 2048, let url = URLComponents(string: trimmed),
            let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { throw PlazaError.invalid(field, "\(field) must be an http or https URL.") }
        return trimmed
    }

    /// An ID sent in a body (e.g. a media id): a decimal string, else 422 on `field`.
    static func id(_ value: String, field: String) throws -> Int64 {
        guard let id = parseID(value) else { throw PlazaError.invalid(field, "\(value) is not an id.") }
        return id
    }

    /// A time zone by its IANA name (`America/Los_Angeles`, `UTC`); nil for anything else,
    /// abbreviations (`PST`) and offsets included: only a named zone knows its DST rules.
    static func timeZone(_ name: String) -> TimeZone? {
        guard name.utf8.count <= 64, name == "UTC" || knownZones.contains(name) else { return nil }
        return TimeZone(identifier: name)
    }

    private static let knownZones = Set(TimeZone.knownTimeZoneIdentifiers)

    /// A BCP 47 language tag as devices send them: letters, digits and hyphens, a 2–3 letter
    /// primary language (`de`, `pt-BR`, `zh-Hant-TW`).
    static func languageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.utf8.count <= 35, let primary = parts.first, (2...3).contains(primary.count) else { return false }
        return primary.allSatisfy { $0.isASCII && $0.isLetter }
            && parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }
}
