import Configuration
import Foundation
import HTTPTypes
import Testing

@testable import PlazaAPI
@testable import PlazaServer

/// The web app in every language: each catalog has every text of the templates, the Swift
/// views and the scripts, with the same placeholders and tags; pages come in the person's
/// language or the browser's, right to left in Arabic; nothing English is left on a German page.
@Suite("Web app in every language")
struct LocalizationTests {
    static let features = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/PlazaServer/Features")
    static let web = features.appendingPathComponent("Web")

    enum Kind: Equatable { case text, plural }

    /// Every English text the web app shows (and the mails and pushes, written with the same
    /// catalogs), found as `LocalizationTests`' docs say: `[[…]]` in templates, `t("…")` and
    /// `t.plural(…, other: "…")` in Swift, `t('…')`/`plural(…)` in scripts.
    static func englishTexts() throws -> [String: Kind] {
        var texts: [String: Kind] = [:]
        let files = try FileManager.default.subpathsOfDirectory(atPath: features.path).sorted()
        for file in files where [".mustache", ".swift", ".js"].contains(where: file.hasSuffix) {
            let source = try String(contentsOf: features.appendingPathComponent(file), encoding: .utf8)
            if file.hasSuffix(".mustache") {
                var rest = Substring(source)
                while let open = rest.range(of: "[["), let close = rest[open.upperBound...].range(of: "]]") {
                    texts[String(rest[open.upperBound..<close.lowerBound]), default: .text] = .text
                    rest = rest[close.upperBound...]
                }
            } else if file.hasSuffix(".swift"), file != "Web/Localization.swift" {
                for text in MessageCatalog.quotedTexts(in: source, call: "t(", quote: "\"", skipping: 0) {
                    texts[text, default: .text] = .text
                }
                for text in MessageCatalog.quotedTexts(in: source, call: "t.plural(", quote: "\"", skipping: 1) {
                    texts[text] = .plural
                }
            } else if file.hasSuffix(".js") {
                for text in MessageCatalog.quotedTexts(in: source, call: "t(", quote: "'", skipping: 0) {
                    texts[text, default: .text] = .text
                }
                for text in MessageCatalog.quotedTexts(in: source, call: "plural(", quote: "'", skipping: 1) {
                    texts[text] = .plural
                }
            }
        }
        return texts
    }

    /// Placeholders (`{{name}}`, `{{{name}}}`, `{name}`) and HTML tags, which a translation keeps.
    static func marks(_ text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "<" }) {
            let closer: Character = rest[open] == "{" ? "}" : ">"
            guard var close = rest[open...].firstIndex(of: closer) else { break }
            while rest.index(after: close) < rest.endIndex, rest[rest.index(after: close)] == closer {
                close = rest.index(after: close)
            }
            found.append(String(rest[open...close]))
            rest = rest[rest.index(after: close)...]
        }
        return found.sorted()
    }

    static func catalogs() throws -> [Language: MessageCatalog] {
        try MessageCatalog.load(from: web.appendingPathComponent("Locales").path)
    }

    @Test func everyCatalogHasEveryTextWithItsPlaceholdersAndTags() throws {
        let english = try Self.englishTexts()
        #expect(english.count > 400, "the scan finds the web app's texts")
        #expect(english["Sign in"] == .text && english["{count} likes"] == .plural)
        for text in english.keys {
            #expect(!text.contains("\\("), "no interpolation inside a translated text: \(text)")
            #expect(!text.contains("{{#") && !text.contains("{{^") && !text.contains("{{/"), "no section: \(text)")
        }
        for (language, catalog) in try Self.catalogs() where language != .en {
            let categories = Set((0...200).map(language.pluralCategory))
            let missing = english.keys.filter { catalog.entries[$0] == nil }.sorted()
            #expect(missing.isEmpty, "\(language): \(missing.count) texts untranslated: \(missing.prefix(20))")
            let stale = catalog.entries.keys.filter { english[$0] == nil }.sorted()
            #expect(stale.isEmpty, "\(language): no longer used: \(stale.prefix(20))")
            for (key, entry) in catalog.entries {
                switch (entry, english[key]) {
                case (.text(let translated), .text?):
                    #expect(Self.marks(translated) == Self.marks(key), "\(language): \(key) → \(translated)")
                case (.plural(let forms), .plural?):
                    #expect(Set(forms.keys) == categories, "\(language): the plural forms of \(key)")
                    for form in forms.values {
                        #expect(
                            Self.marks(form).filter { $0 != "{count}" } == Self.marks(key).filter { $0 != "{count}" },
                            "\(language): \(key) → \(form)")
                    }
                case (_, nil): break
                default: Issue.record("\(language): \(key) is a text in one place and a plural in the other")
                }
            }
        }
    }

    @Test func templatesHaveNoBrokenMarkers() throws {
        for file in try FileManager.default.contentsOfDirectory(
            atPath: Self.web.appendingPathComponent("Templates").path)
        {
            let source = try String(
                contentsOf: Self.web.appendingPathComponent("Templates/" + file), encoding: .utf8)
            for (language, catalog) in try Self.catalogs() {
                let translated = catalog.translating(template: source)
                #expect(!translated.contains("[[") && !translated.contains("]]"), "\(file) in \(language)")
            }
        }
    }

    /// A form field's length is the rule's, by name (`WebRenderer.fieldLengths`): no template
    /// writes a number of its own, so a form cannot take more than the API will (the compose
    /// form's title stopped at 200 characters while posts take 300, a price at 40 while the API
    /// refused more than 32).
    @Test func formFieldLengthsAreTheRules() throws {
        for file in try FileManager.default.contentsOfDirectory(
            atPath: Self.web.appendingPathComponent("Templates").path)
        {
            let source = try String(contentsOf: Self.web.appendingPathComponent("Templates/" + file), encoding: .utf8)
            #expect(source.firstRange(of: /(max|min)length="\d/) == nil, "\(file) writes a length of its own")
            let filled = try WebRenderer.fillingFieldLengths(in: source)
            #expect(!filled.contains("length=\"@"), "\(file)")
        }
        let compose = try WebRenderer.fillingFieldLengths(
            in: #"<input name="title" maxlength="@post.title"><input name="password" minlength="@password.min">"#)
        #expect(compose == #"<input name="title" maxlength="300"><input name="password" minlength="8">"#)
        #expect(throws: ConfigurationError.self) { try WebRenderer.fillingFieldLengths(in: #"maxlength="@nothing""#) }
    }

    @Test func theLanguageComesFromThePreferenceThenTheBrowser() {
        #expect(Language.preferred(acceptLanguage: "de-CH;q=0.9, en;q=0.5") == .de)
        #expect(Language.preferred(acceptLanguage: "fr, ar-EG;q=0.8, de;q=0.7") == .ar, "the best one spoken")
        #expect(Language.preferred(acceptLanguage: "en;q=0.2, de;q=0") == .en, "q=0 means not this one")
        #expect(Language.preferred(acceptLanguage: "fr, ja") == .en)
        #expect(Language.preferred(acceptLanguage: ";;;q=abc,,") == .en)
        #expect(Language.preferred(acceptLanguage: nil) == .en)
        #expect(Language(tag: "DE-at") == .de && Language(tag: "pt-BR") == nil)
        #expect(
            [0, 1, 2, 3, 10, 11, 99, 100, 102, 111].map(Language.ar.pluralCategory) == [
                .zero, .one, .two, .few, .few, .many, .many, .other, .other, .many,
            ])
        #expect([0, 1, 2].map(Language.de.pluralCategory) == [.other, .one, .other])
        let catalog = MessageCatalog(
            language: .ar,
            entries: ["{count} likes": .plural([.one: "إعجاب واحد", .few: "{count} إعجابات", .other: "{count} إعجاب"])])
        let t = Localizer(catalog: catalog, timeZone: .gmt)
        #expect(t.plural(1, one: "{count} like", other: "{count} likes") == "إعجاب واحد")
        #expect(t.plural(3, one: "{count} like", other: "{count} likes") == "\(t.number(3)) إعجابات")
        #expect(t.plural(100, one: "{count} like", other: "{count} likes") == "\(t.number(100)) إعجاب")
        let german = Localizer(catalog: MessageCatalog(language: .de, entries: [:]), timeZone: .gmt)
        #expect(german.plural(1000, one: "{count} like", other: "{count} likes") == "1.000 likes", "German digits")
        #expect(t("Hi {name}", ["name": "{count}"]) == "Hi {count}", "a value is not filled in again")
    }

    @Test func pagesComeInThePersonsLanguageOrTheBrowsers() async throws {
        try await withApp { api async throws in
            let catalogs = try Self.catalogs()
            let german = try #require(catalogs[.de])
            let arabic = try #require(catalogs[.ar])
            let login = try await api.page(.get, "/login", headers: [.acceptLanguage: "de-DE,de;q=0.9,en;q=0.8"])
            #expect(login.text.contains(#"<html lang="de" dir="ltr">"#))
            #expect(login.headers[.contentLanguage] == "de")
            #expect(login.text.contains(german.text("Sign in")) && german.text("Sign in") != "Sign in")
            let rtl = try await api.page(.get, "/login", headers: [.acceptLanguage: "ar"])
            #expect(rtl.text.contains(#"<html lang="ar" dir="rtl">"#))
            #expect(rtl.text.contains(arabic.text("Sign in")))
            #expect(try await api.page(.get, "/login").text.contains(#"<html lang="en" dir="ltr">"#))

            // A person's own setting wins over the browser.
            let ana = try await api.register("ana")
            try await api.call(.patch, "/me/preferences", as: ana, json: ["language": "ar"])
            let home = try await api.page(.get, "/", cookie: ana.cookie, headers: [.acceptLanguage: "de"])
            #expect(home.text.contains(#"<html lang="ar" dir="rtl">"#))
            // The scripts' texts come along, as JSON that cannot end the script element.
            #expect(home.text.contains(#"<script type="application/json" id="plaza-messages">{"#))
            #expect(!home.text.contains(#"id="plaza-messages">{}<"#))
            // An error page too, in the browser's language.
            let missing = try await api.page(.get, "/p/1", headers: [.acceptLanguage: "de"])
            #expect(missing.status == .notFound && missing.text.contains(#"<html lang="de""#))
        }
    }

    /// Every page a person reaches, rendered in German: no text between tags is still one of
    /// the English texts the catalog translates differently.
    @Test func noEnglishIsLeftOnGermanPages() async throws {
        try await withApp { api async throws in
            let german = try #require(try Self.catalogs()[.de])
            let english = Set(
                german.entries.compactMap { key, entry -> String? in
                    guard case .text(let text) = entry, text != key, !key.contains("{"), !key.contains("<") else {
                        return nil
                    }
                    return key
                })
            let (ana, bob) = try await api.register("ana", "bob")
            try await api.call(.patch, "/me/preferences", as: ana, json: ["language": "de"])
            try await api.call(.post, "/spaces", as: ana, json: CreateSpaceRequest(slug: "cs101", name: "Compilers"))
            let post = try await api.post(
                ana,
                CreatePostRequest(kind: .activity, title: "Run", activity: ActivityInput(type: "Run", progress: 40)))
            _ = try await api.call(.put, "/posts/\(post.id)/like", as: bob)
            _ = try await api.call(.put, "/users/ana/follow", as: bob)
            for path in [
                "/", "/explore", "/compose", "/notifications", "/u/ana", "/u/bob", "/p/\(post.id)", "/search?q=run",
                "/spaces", "/s/cs101", "/s/cs101/manage", "/collections", "/history", "/activities", "/settings",
                "/u/ana/followers", "/p/\(post.id)/likes", "/recommended", "/follow-requests",
                "/search?q=bob&type=accounts", "anonymous /login", "anonymous /signup", "anonymous /forgot-password",
                "anonymous /explore",
            ] {
                let anonymous = path.hasPrefix("anonymous ")
                let page = try await api.page(
                    .get, String(path.dropFirst(anonymous ? 10 : 0)), cookie: anonymous ? nil : ana.cookie,
                    headers: [.acceptLanguage: "de"])
                #expect(page.status == .ok, "\(path)")
                var leftovers: [String] = []
                for piece in page.text.components(separatedBy: ">").dropFirst() {
                    let text = piece.prefix { $0 != "<" }.trimmingCharacters(in: .whitespacesAndNewlines)
                    if english.contains(text) { leftovers.append(text) }
                }
                #expect(leftovers.isEmpty, "\(path) still shows \(leftovers)")
            }
        }
    }
}
