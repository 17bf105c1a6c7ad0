import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import PlazaAPI

/// Renders the web app's Mustache templates and serves its static files, both read once at
/// start-up from the target's resources. The templates are translated then, once per language
/// (`MessageCatalog.translating(template:)`), so rendering a page costs the same in any language.
struct WebRenderer: Sendable {
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
        /// The body gzipped, for the text files it makes smaller.
        var gzipped: ByteBuffer?
    }

    /// The templates in each language.
    let libraries: [Language: MustacheLibrary]
    let catalogs: [Language: MessageCatalog]
    /// Each language's translations of the scripts' texts (`t('…')` in the assets), which the
    /// layout hands to `app.js` as JSON.
    let scriptMessages: [Language: String]
    let assets: [String: Asset]
    /// A hash of every asset, appended to asset URLs so they can be cached for a year.
    let assetVersion: String
    let contentSecurityPolicy: String

    /// The templates and assets; `map`'s tile server is allowed as an image source.
    static func load(map: MapSettings = MapSettings()) async throws -> WebRenderer {
        guard let root = Bundle.module.resourcePath else {
            throw ConfigurationError("The web app's resources are missing.")
        }
        let catalogs = try MessageCatalog.load(from: root + "/Locales")
        var libraries: [Language: MustacheLibrary] = [:]
        let templateFolder = root + "/Templates"
        let templateNames = (try FileManager.default.contentsOfDirectory(atPath: templateFolder))
            .filter { $0.hasSuffix(".mustache") }
        for (language, catalog) in catalogs {
            var library = MustacheLibrary()
            for file in templateNames {
                let source = try fillingFieldLengths(
                    in: String(contentsOfFile: templateFolder + "/" + file, encoding: .utf8))
                try library.register(catalog.translating(template: source), named: String(file.dropLast(9)))
            }
            libraries[language] = library
        }
        var assets: [String: Asset] = [:]
        var hasher = SHA256()
        let folder = root + "/Assets"
        let names = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).sorted()
        for name in names {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            hasher.update(data: data)
            let type = contentType(of: name)
            // Text only: PNGs are compressed already.
            let isText = type.hasPrefix("text/") || type.hasPrefix("image/svg") || type.contains("json")
            let gzipped = isText ? Gzip.compress(Array(data)).map { ByteBuffer(bytes: $0) } : nil
            assets[name] = Asset(body: ByteBuffer(data: data), contentType: type, gzipped: gzipped)
        }
        let version = ByteText.hex(hasher.finalize().prefix(6))
        let scriptTexts = Set(
            assets.filter { $0.key.hasSuffix(".js") }.flatMap {
                MessageCatalog.scriptTexts(in: String(buffer: $0.value.body))
            })
        var scriptMessages: [Language: String] = [:]
        for (language, catalog) in catalogs {
            let messages = Dictionary(
                uniqueKeysWithValues: scriptTexts.compactMap { text in
                    catalog.entries[text].map { (text, $0.json) }
                })
            scriptMessages[language] = String(decoding: try JSON.encoder.encode(messages), as: UTF8.self)
                // Inside <script type="application/json">: no `</script>` can end it early.
                .replacingOccurrences(of: "<", with: "\\u003c")
        }
        // Media is served by Plaza itself (from disk or S3), so images and videos are same-origin too; blob: is the upload
        // preview. Map tiles come from their server.
        let tiles = map.origin.map { " " + $0 } ?? ""
        let csp =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:\(tiles); media-src 'self' blob:; connect-src 'self'; font-src 'self'; "
            + "manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        return WebRenderer(
            libraries: libraries, catalogs: catalogs, scriptMessages: scriptMessages, assets: assets,
            assetVersion: version, contentSecurityPolicy: csp)
    }

    /// The longest (and, with `.min`, shortest) value of each kind of form field, from the
    /// rules the API validates with: a template writes `maxlength="@post.title"`.
    static let fieldLengths: [String: Int] = [
        "post.title": PostRules.maxTitleLength, "post.body": PostRules.maxBodyLength,
        "post.warning": PostRules.maxContentWarningLength, "poll.option": PollRules.maxOptionLength,
        "comment": PostRules.maxCommentLength, "price": PostRules.maxPriceLength,
        "place": PostRules.maxLocationNameLength, "activity.type": PostRules.maxActivityTypeLength,
        "activity.emoji": PostRules.maxEmojiLength, "url": Validate.maxURLLength,
        "recipients": PostRules.maxRecipients * (AccountRules.usernameLength.upperBound + 2),
        "username": AccountRules.usernameLength.upperBound, "username.min": AccountRules.usernameLength.lowerBound,
        "password": AccountRules.passwordLength.upperBound, "password.min": AccountRules.passwordLength.lowerBound,
        "email": AccountRules.maxEmailLength, "displayName": AccountRules.maxDisplayNameLength,
        "bio": AccountRules.maxBioLength, "status": AccountRules.maxStatusTextLength,
        "code": AccountRules.maxCodeLength, "media.alt": MediaActions.maxAltTextLength,
        "collection.name": CollectionRules.maxNameLength, "collection.note": CollectionRules.maxNoteLength,
        "space.name": SpaceRules.maxNameLength, "space.slug": SpaceRules.maxSlugLength,
        "space.description": SpaceRules.maxDescriptionLength, "report.note": ModerationStore.maxNoteLength,
        "invite": InstanceStore.maxInviteCode, "signup.reason": InstanceStore.maxReason,
        "instance.name": InstanceStore.maxName, "instance.description": InstanceStore.maxDescription,
        "instance.rule": InstanceStore.maxRule,
        "instance.contact": InstanceStore.maxContact, "instance.terms": InstanceStore.maxTerms,
        "filter.phrase": KeywordFilterActions.maxPhraseLength,
    ]

    /// `template` with each `maxlength="@name"` and `minlength="@name"` given its number from
    /// `fieldLengths`; an unknown name stops loading.
    static func fillingFieldLengths(in template: String) throws -> String {
        var output = ""
        var rest = Substring(template)
        while let marker = rest.range(of: "length=\"@") {
            output += rest[..<marker.upperBound].dropLast()
            rest = rest[marker.upperBound...]
            guard let end = rest.firstIndex(of: "\""), let value = fieldLengths[String(rest[..<end])] else {
                throw ConfigurationError("A template names an unknown field length: \(rest.prefix(40))")
            }
            output += String(value)
            rest = rest[end...]
        }
        return output + rest
    }

    static func contentType(of name: String) -> String {
        switch (name as NSString).pathExtension {
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "json", "webmanifest": "application/manifest+json"
        default: "application/octet-stream"
        }
    }

    /// An HTML response from `template` showing `view` (a page's view, see WebPageViews.swift),
    /// with the headers every page carries.
    /// `frameSources`: origins the page may show in frames (a video player), none by default.
    /// `formTargets`: where else the page's forms may lead (browsers hold a form's redirect to
    /// `form-action` too: the OAuth consent page's to the app).
    func html(
        _ template: String, _ view: some Sendable, language: Language, status: HTTPResponse.Status = .ok,
        frameSources: [String] = [], formTargets: [String] = []
    ) -> Response {
        let text =
            libraries[language]?.render(view, withTemplate: template) ?? "Template \(template) is missing."
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentLanguage] = language.rawValue
        headers[.vary] = "Accept-Language, Cookie"
        var policy = contentSecurityPolicy
        if !formTargets.isEmpty {
            policy = policy.replacingOccurrences(
                of: "form-action 'self'", with: "form-action 'self' " + formTargets.joined(separator: " "))
        }
        headers[.contentSecurityPolicy] =
            policy + (frameSources.isEmpty ? "" : "; frame-src " + frameSources.joined(separator: " "))
        headers[.cacheControl] = "no-store"
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `GET /assets/{path}`: immutable for a year when asked for with the current version;
    /// gzipped for a browser that takes it.
    func asset(_ request: Request, path: String) -> Response {
        guard let asset = assets[path] else {
            return Response(
                status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "Not found")))
        }
        let current = request.uri.queryParameters.get("v") == assetVersion
        var headers: HTTPFields = [
            .contentType: asset.contentType,
            .cacheControl: current ? "public, max-age=31536000, immutable" : "no-cache",
            .xContentTypeOptions: "nosniff",
        ]
        var body = asset.body
        if let gzipped = asset.gzipped {
            headers[.vary] = "Accept-Encoding"
            if Gzip.isAccepted(by: request.headers[.acceptEncoding]) {
                headers[.contentEncoding] = "gzip"
                body = gzipped
            }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: body))
    }
}
