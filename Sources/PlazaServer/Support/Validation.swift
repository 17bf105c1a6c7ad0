import Foundation

/// Field rules shared by the routes. Each throws a 422 naming the field.
package enum Validate {
    static func username(_ value: String) throws -> String {
        let ok =
            AccountRules.usernameLength.contains(value.utf8.count)
            && value.utf8.allSatisfy {
                ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 || ($0 >= 65 && $0 <= 90)
            }
        guard ok else {
            let (low, high) = (AccountRules.usernameLength.lowerBound, AccountRules.usernameLength.upperBound)
            throw PlazaError.invalid(
                "username", "username must be \(low)–\(high) characters: letters a–z, digits and _.")
        }
        return value.lowercased()
    }

    static func email(_ value: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= AccountRules.maxEmailLength, parts.count == 2, !parts[0].isEmpty,
            parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !trimmed.contains(where: {
                $0.isWhitespace || $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true
                    || "<>()[]\\,;:\"".contains($0)
            })
        else { throw PlazaError.invalid("email", "email must be an address like name@example.com.") }
        return trimmed
    }

    static func password(_ value: String, field: String = "password") throws {
        let (low, high) = (AccountRules.passwordLength.lowerBound, AccountRules.passwordLength.upperBound)
        guard value.count >= low else {
            throw PlazaError.invalid(field, "\(field) must be at least \(low) characters.")
        }
        guard value.count <= high else {
            throw PlazaError.invalid(field, "\(field) must be at most \(high) characters.")
        }
    }

    /// Trims surrounding whitespace and checks length (in characters); nil when left empty.
    package static func text(_ value: String?, field: String, max: Int, required: Bool = false) throws -> String? {
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

    /// A display name: `text` made trustworthy (`trustworthy`), on one line; nil when nothing
    /// visible is left, a 422 when `required`.
    package static func displayName(_ value: String?, field: String = "displayName", required: Bool = false) throws
        -> String?
    {
        let cleaned = value.map { trustworthy($0, lines: false) }
        return try text(cleaned, field: field, max: AccountRules.maxDisplayNameLength, required: required)
    }

    /// A bio: `text` made trustworthy, its line breaks kept.
    package static func bio(_ value: String?, field: String = "bio") throws -> String? {
        try text(value.map { trustworthy($0, lines: true) }, field: field, max: AccountRules.maxBioLength)
    }

    /// Text that names or presents a person, with nothing in it that reads differently from
    /// what it shows, so nobody can pose as someone else: bidi controls (overrides, embeddings,
    /// isolates and marks, which can turn `moc.elgoog` into what looks like another name) and
    /// invisible characters (zero-width spaces, word joiners, soft hyphens, blank Hangul fillers,
    /// tags, other control characters) are removed; a zero-width joiner or non-joiner stays only
    /// between two characters of scripts that need it (emoji sequences, Persian, Indic), never
    /// in Latin text. Runs of white space become one space (a name is one line unless `lines`).
    static func trustworthy(_ value: String, lines: Bool) -> String {
        let scalars = Array(value.unicodeScalars)
        var kept = String.UnicodeScalarView()
        var pendingSpace = false
        for (index, scalar) in scalars.enumerated() {
            let v = scalar.value
            if lines, v == 0x0A {
                kept.append("\n")
                pendingSpace = false
                continue
            }
            if scalar.properties.isWhitespace || v == 0x0A || v == 0x0D {
                pendingSpace = true
                continue
            }
            if isInvisible(v) { continue }
            if isJoiner(v) {
                // Between what is kept before it and what follows it, both letters of such scripts.
                let after = scalars[(index + 1)...].first { !isInvisible($0.value) }
                guard !pendingSpace, let before = kept.last, let after, before.value > 0xFF, after.value > 0xFF,
                    !isJoiner(before.value), !isJoiner(after.value), !after.properties.isWhitespace
                else { continue }
            }
            if pendingSpace, let last = kept.last, last != "\n" { kept.append(" ") }
            pendingSpace = false
            kept.append(scalar)
        }
        return String(kept)
    }

    private static func isJoiner(_ v: UInt32) -> Bool { v == 0x200C || v == 0x200D }

    /// Characters that show nothing, or change how the characters around them show.
    private static func isInvisible(_ v: UInt32) -> Bool {
        switch v {
        case 0x00...0x08, 0x0B...0x0C, 0x0E...0x1F, 0x7F...0x9F,  // control characters (tab, line breaks apart)
            0xAD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B...0x180F,
            0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x206F, 0x3164, 0xFEFF, 0xFFA0,
            0xFFF9...0xFFFB, 0x1D173...0x1D17A, 0xE0000...0xE007F:
            true
        default: false
        }
    }

    /// `text` for a field that must have some: the trimmed text, or 422.
    package static func requiredText(_ value: String?, field: String, max: Int) throws -> String {
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

    static let maxURLLength = 2048

    static func url(_ value: String, field: String) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maxURLLength, let url = URLComponents(string: trimmed),
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

    /// A time zone by its IANA name (`America/Los_Angeles`, `Etc/UTC`, `UTC`); nil for anything
    /// else, abbreviations (`PST`) and offsets (`+05:00`) included: only a named zone knows its
    /// DST rules. Foundation's list of known zones leaves out IANA's links (`Etc/UTC`,
    /// `US/Pacific`), so a name is checked by its form and by the time zone database itself.
    static func timeZone(_ name: String) -> TimeZone? {
        guard name.utf8.count <= 64 else { return nil }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        let wellFormed =
            parts.allSatisfy { part in
                part.first.map { $0.isASCII && $0.isLetter } == true
                    && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-+".contains($0)) }
            } && (parts.count > 1 || name == "UTC" || name == "GMT")
        guard wellFormed else { return nil }
        return TimeZone(identifier: name)
    }

    /// A BCP 47 language tag as devices send them: letters, digits and hyphens, a 2–3 letter
    /// primary language (`de`, `pt-BR`, `zh-Hant-TW`).
    static func languageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard tag.utf8.count <= 35, let primary = parts.first, (2...3).contains(primary.count) else { return false }
        return primary.allSatisfy { $0.isASCII && $0.isLetter }
            && parts.dropFirst().allSatisfy {
                (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            }
    }
}
