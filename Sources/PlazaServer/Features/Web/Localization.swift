import Foundation
import Hummingbird
import PlazaAPI

/// The languages the web app speaks. English is the source: the templates, the Swift views
/// and the scripts are written in English, and each other language has a message catalog
/// (`Locales/<code>.json`) that maps every English text to its translation (gettext's model: the
/// English text is the key, so English is complete by construction and a missing translation
/// shows English, never a key).
enum Language: String, Sendable, CaseIterable, Codable {
    case en, de, ar

    /// The language of a BCP 47 tag (`de-AT` is German), if the web app speaks it.
    init?(tag: String) {
        let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
        self.init(rawValue: primary)
    }

    /// Right to left: the page's `dir`.
    var isRightToLeft: Bool { self == .ar }

    /// The language's own name, for the language menu.
    var name: String {
        switch self {
        case .en: "English"
        case .de: "Deutsch"
        case .ar: "العربية"
        }
    }

    /// The CLDR plural category of `count` in this language (integers only).
    func pluralCategory(_ count: Int) -> PluralCategory {
        switch self {
        case .en, .de: return count == 1 ? .one : .other
        case .ar:
            let hundreds = abs(count) % 100
            switch abs(count) {
            case 0: return .zero
            case 1: return .one
            case 2: return .two
            default:
                if (3...10).contains(hundreds) { return .few }
                if (11...99).contains(hundreds) { return .many }
                return .other
            }
        }
    }

    /// The best language for an `Accept-Language` header (RFC 9110 §12.5.4): the supported
    /// language with the highest weight, matched on the primary subtag (`de-AT` is German);
    /// English when nothing matches. Malformed entries are skipped.
    static func preferred(acceptLanguage header: String?) -> Language {
        guard let header, header.utf8.count <= 1024 else { return .en }
        var best: (language: Language, weight: Double)?
        for entry in header.split(separator: ",").prefix(32) {
            let parts = entry.split(separator: ";")
            guard let tag = parts.first?.trimmingCharacters(in: .whitespaces).lowercased(), !tag.isEmpty else {
                continue
            }
            var weight = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.trimmingCharacters(in: .whitespaces)
                if pair.hasPrefix("q="), let q = Double(pair.dropFirst(2)), q.isFinite, (0...1).contains(q) {
                    weight = q
                }
            }
            guard weight > 0 else { continue }
            guard let language = Language(tag: tag) else { continue }
            if weight > (best?.weight ?? -1) { best = (language, weight) }
        }
        return best?.language ?? .en
    }
}

extension Language {
    /// The language a person chose (`language` in their stored preferences JSON), else English:
    /// what their mails and pushes speak.
    init(preferences json: String) {
        self = AccountStore.decodePreferences(json)["language"]?.stringValue.flatMap(Language.init(tag:)) ?? .en
    }
}

enum PluralCategory: String, Sendable, Codable, CaseIterable {
    case zero, one, two, few, many, other
}

/// One language's translations: English text → translated text, or for a plural English text
/// (its `other` form) → the forms of each plural category the language has.
struct MessageCatalog: Sendable {
    enum Entry: Sendable, Decodable {
        case text(String)
        case plural([PluralCategory: String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                let forms = try container.decode([String: String].self)
                var plural: [PluralCategory: String] = [:]
                for (key, value) in forms {
                    guard let category = PluralCategory(rawValue: key) else {
                        throw DecodingError.dataCorruptedError(
                            in: container, debugDescription: "\(key) is not a plural category")
                    }
                    plural[category] = value
                }
                self = .plural(plural)
            }
        }

        /// As the scripts read it: a text, or an object of plural forms.
        var json: JSONValue {
            switch self {
            case .text(let text): .string(text)
            case .plural(let forms):
                .object(Dictionary(uniqueKeysWithValues: forms.map { ($0.key.rawValue, .string($0.value)) }))
            }
        }
    }

    /// The English texts a script asks for: `t('…')`, and `plural(n, '… one', '… other')`
    /// whose key is the `other` form. Scripts write them in single quotes without escapes.
    static func scriptTexts(in script: String) -> [String] {
        quotedTexts(in: script, call: "t(", quote: "'", skipping: 0)
            + quotedTexts(in: script, call: "plural(", quote: "'", skipping: 1)
    }

    /// The `skipping`+1-th quoted text inside each `call` that is not part of a longer name
    /// (`t(` but not `set(`), when the call has that many; the same scan finds the Swift views'
    /// texts in the tests.
    static func quotedTexts(in source: String, call: String, quote: Character, skipping: Int) -> [String] {
        var texts: [String] = []
        var rest = Substring(source)
        while let found = rest.range(of: call) {
            defer { rest = rest[found.upperBound...] }
            if found.lowerBound > rest.startIndex {
                let before = rest[rest.index(before: found.lowerBound)]
                if before.isLetter || before.isNumber || before == "_" || before == "." { continue }
            }
            var cursor = rest[found.upperBound...]
            var quoted: [Substring] = []
            while quoted.count <= skipping, let open = cursor.firstIndex(of: quote),
                // The quoted text must be inside this call: no closing parenthesis before it.
                !cursor[..<open].contains(")")
            {
                let after = cursor.index(after: open)
                guard let close = cursor[after...].firstIndex(of: quote) else { break }
                quoted.append(cursor[after..<close])
                cursor = cursor[cursor.index(after: close)...]
            }
            let text = quoted.count == skipping + 1 ? quoted.last : nil
            if let text { texts.append(String(text)) }
        }
        return texts
    }

    let language: Language
    let entries: [String: Entry]

    static let english = MessageCatalog(language: .en, entries: [:])

    /// The catalogs in Plaza's resources, read once: what mails and pushes are written with
    /// (the web app checks at start that every one of them loads).
    static let bundled: [Language: MessageCatalog] =
        Bundle.module.resourcePath.flatMap { try? load(from: $0 + "/Locales") } ?? [.en: .english]

    /// Texts in `language` from the bundled catalogs, times in UTC (mails and pushes do not
    /// know the reader's clock).
    static func localizer(_ language: Language) -> Localizer {
        Localizer(catalog: bundled[language] ?? .english, timeZone: .gmt)
    }

    /// Every catalog from `folder` (`de.json`, …), English's empty one included.
    static func load(from folder: String) throws -> [Language: MessageCatalog] {
        var catalogs: [Language: MessageCatalog] = [.en: .english]
        for language in Language.allCases where language != .en {
            let url = URL(fileURLWithPath: folder + "/" + language.rawValue + ".json")
            let entries = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: url))
            catalogs[language] = MessageCatalog(language: language, entries: entries)
        }
        return catalogs
    }

    /// `text` in this language (English when it has no translation).
    func text(_ english: String) -> String {
        switch entries[english] {
        case .text(let translated): translated
        case .plural(let forms): forms[.other] ?? english
        case nil: english
        }
    }

    /// The form of a plural text for `count`: English's `one`/`other`, or the catalog's form of
    /// the language's category (its `other` when that category is missing).
    func plural(_ count: Int, one: String, other: String) -> String {
        switch entries[other] {
        case .plural(let forms): forms[language.pluralCategory(count)] ?? forms[.other] ?? other
        case .text(let translated): translated
        case nil: count == 1 ? one : other
        }
    }

    /// A template's source with each `[[English text]]` replaced by its translation (the
    /// markers dropped for English). Unclosed markers are left as they are (a test checks
    /// that templates have none).
    func translating(template source: String) -> String {
        var output = ""
        output.reserveCapacity(source.utf8.count)
        var rest = Substring(source)
        while let open = rest.range(of: "[["), let close = rest[open.upperBound...].range(of: "]]") {
            output += rest[..<open.lowerBound]
            output += text(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        output += rest
        return output
    }
}

/// The web app's language and time zone for one request, with what formats in them: texts,
/// plurals, numbers and dates. Handlers get it from `WebController.localizer(context)`.
struct Localizer: Sendable {
    let catalog: MessageCatalog
    let timeZone: TimeZone

    var language: Language { catalog.language }
    var locale: Locale { Locale(identifier: language.rawValue) }

    /// `text` translated, with each `{name}` replaced by its argument (after translation, so
    /// the translation may move them).
    func callAsFunction(_ text: String, _ arguments: KeyValuePairs<String, String> = [:]) -> String {
        Self.fill(catalog.text(text), Dictionary(arguments.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }))
    }

    /// The form of a plural text for `count`, with `{count}` as the locale writes the number.
    func plural(
        _ count: Int, one: String, other: String, _ arguments: KeyValuePairs<String, String> = [:]
    ) -> String {
        var values = Dictionary(arguments.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        values["count"] = number(count)
        return Self.fill(catalog.plural(count, one: one, other: other), values)
    }

    func number(_ value: Int) -> String {
        value.formatted(.number.locale(locale))
    }

    /// A date and time as people of this language write it, in the reader's time zone.
    func dateTime(_ timestamp: Timestamp) -> String {
        var style = Date.FormatStyle(date: .abbreviated, time: .shortened, locale: locale, timeZone: timeZone)
        style.calendar = Calendar(identifier: .gregorian)
        return timestamp.date.formatted(style)
    }

    /// A date without the time, in the reader's time zone.
    func date(_ timestamp: Timestamp) -> String {
        var style = Date.FormatStyle(date: .abbreviated, time: .omitted, locale: locale, timeZone: timeZone)
        style.calendar = Calendar(identifier: .gregorian)
        return timestamp.date.formatted(style)
    }

    /// `text` with each `{name}` that has a value replaced, in one pass (a value that itself
    /// holds `{…}`, a display name say, is left as it is).
    static func fill(_ text: String, _ values: [String: String]) -> String {
        guard !values.isEmpty, text.contains("{") else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            let name = String(rest[rest.index(after: open)..<close])
            output += rest[..<open]
            if let value = values[name] {
                output += value
            } else {
                output += rest[open...close]
            }
            rest = rest[rest.index(after: close)...]
        }
        output += rest
        return output
    }
}
