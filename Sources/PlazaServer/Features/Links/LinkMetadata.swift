import Foundation

extension LinkMetadata {
    /// What an oEmbed response says, alone.
    init(oEmbedJSON: [UInt8], pageURL: URL, textInHTML: Bool) {
        self = LinkMetadata().merging(oEmbedJSON: oEmbedJSON, pageURL: pageURL, textInHTML: textInHTML)
    }
}

/// What a page says about itself, read from its HTML head.
struct LinkMetadata: Sendable, Equatable {
    var title: String?
    var description: String?
    /// Absolute http(s) URL, resolved against the page's final URL.
    var imageURL: String?
    var siteName: String?
    /// Absolute URL of the page's JSON oEmbed endpoint.
    var oEmbedURL: String?

    /// Caps on what a preview shows, whatever the page says.
    static let titleLimit = 300, descriptionLimit = 1000, siteNameLimit = 100, urlLimit = 2048

    /// Parses `html` (bytes, possibly truncated mid-tag at the 1 MB cap) of the page at `pageURL`
    /// (final URL after redirects).
    static func parse(_ html: [UInt8], pageURL: URL) -> LinkMetadata {
        var scanner = HeadScanner(bytes: html)
        scanner.run()
        // Values stay raw bytes until the scan ends, because the charset may be declared after them.
        let latin1 = windows1252Labels.contains(scanner.charset ?? "")
        func text(_ raw: ArraySlice<UInt8>?, _ limit: Int) -> String? {
            raw.flatMap { cleanText(decodeEntities(decode($0, latin1: latin1)), limit: limit) }
        }
        func link(_ raw: ArraySlice<UInt8>?) -> String? {
            raw.flatMap { resolve(decodeEntities(decode($0, latin1: latin1)), against: pageURL) }
        }
        // A key whose value is unusable (empty, or not an http(s) URL) gives way to the next one.
        func first(_ keys: [String], _ read: (ArraySlice<UInt8>?) -> String?) -> String? {
            for key in keys { if let value = read(scanner.values[key]) { return value } }
            return nil
        }
        return LinkMetadata(
            title: first(["og:title", "twitter:title"]) { text($0, titleLimit) } ?? text(scanner.title, titleLimit),
            description: first(["og:description", "twitter:description", "description"]) { text($0, descriptionLimit) },
            imageURL: first(
                ["og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"], link),
            siteName: first(["og:site_name", "application-name"]) { text($0, siteNameLimit) },
            oEmbedURL: link(scanner.oEmbedHref))
    }

    /// Fills the gaps from an oEmbed JSON response, keeping whatever the page itself said; unchanged on invalid JSON.
    /// With `textInHTML` (a tweet), the text of the embed's `html` is the description.
    func merging(oEmbedJSON: [UInt8], pageURL: URL, textInHTML: Bool = false) -> LinkMetadata {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(oEmbedJSON))) as? [String: Any] else {
            return self
        }
        // oEmbed fields are plain text, so entities are left alone; a field that is not a string counts as absent.
        func text(_ key: String, _ limit: Int) -> String? {
            (object[key] as? String).flatMap { Self.cleanText($0.unicodeScalars, limit: limit) }
        }
        var merged = self
        // There is no author field; a creator's name still makes a better title than the bare domain.
        merged.title = title ?? text("title", Self.titleLimit) ?? text("author_name", Self.titleLimit)
        merged.siteName = siteName ?? text("provider_name", Self.siteNameLimit)
        merged.imageURL =
            imageURL
            ?? (object["thumbnail_url"] as? String).flatMap { Self.resolve(Array($0.unicodeScalars), against: pageURL) }
        if textInHTML, merged.description == nil, let html = object["html"] as? String {
            merged.description = Self.cleanText(
                Self.decodeEntities(Self.textOutsideTags(html)), limit: Self.descriptionLimit)
        }
        return merged
    }

    /// These values, with the gaps filled from `other`.
    func filling(from other: LinkMetadata) -> LinkMetadata {
        LinkMetadata(
            title: title ?? other.title, description: description ?? other.description,
            imageURL: imageURL ?? other.imageURL, siteName: siteName ?? other.siteName,
            oEmbedURL: oEmbedURL ?? other.oEmbedURL)
    }

    /// The text of an HTML fragment: its tags (and what `<script>` and `<style>` hold) left out,
    /// each tag read as a space.
    static func textOutsideTags(_ html: String) -> String {
        var text = ""
        var skipping: String?
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            if skipping == nil { text += rest[..<open] }
            guard let close = rest[open...].firstIndex(of: ">") else { return text }
            let tag = rest[rest.index(after: open)..<close].lowercased()
            let name = String(tag.prefix { $0.isLetter || $0 == "/" })
            if let element = skipping {
                if name == "/" + element { skipping = nil }
            } else if name == "script" || name == "style" {
                skipping = name
            }
            text += " "
            rest = rest[rest.index(after: close)...]
        }
        if skipping == nil { text += rest }
        return text
    }

    /// The `<meta>` keys read, by lowercased `property` or `name`.
    fileprivate static let metaKeys: Set<String> = [
        "og:title", "twitter:title", "og:description", "twitter:description", "description", "og:image", "og:image:url",
        "og:image:secure_url", "twitter:image", "twitter:image:src", "og:site_name", "application-name",
    ]

    /// The WHATWG Encoding labels that mean windows-1252, which browsers use for every Latin-1 label.
    private static let windows1252Labels: Set<String> = [
        "iso-8859-1", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "latin1", "l1", "cp819", "ibm819",
        "csisolatin1",
        "iso-ir-100", "windows-1252", "cp1252", "x-cp1252", "us-ascii", "ascii", "ansi_x3.4-1968",
    ]

    /// windows-1252 differs from ISO 8859-1 only in 0x80–0x9F, where it has printable characters.
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
        0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,
        0x017E, 0x0178,
    ]

    /// Turns value bytes into text in the page's charset; invalid UTF-8 becomes U+FFFD rather than failing.
    private static func decode(_ bytes: ArraySlice<UInt8>, latin1: Bool) -> String {
        guard latin1 else { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            scalars.append(
                Unicode.Scalar((0x80...0x9F).contains(byte) ? windows1252High[Int(byte) - 0x80] : UInt32(byte))
                    ?? "\u{FFFD}")
        }
        return String(scalars)
    }

    /// The named references real pages use in titles and descriptions.
    private static let namedReferences: [String: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "AMP": "&", "LT": "<", "GT": ">",
        "QUOT": "\"", "mdash": "\u{2014}", "ndash": "\u{2013}", "hellip": "\u{2026}", "lsquo": "\u{2018}",
        "rsquo": "\u{2019}", "ldquo": "\u{201C}", "rdquo": "\u{201D}", "laquo": "\u{AB}", "raquo": "\u{BB}",
        "middot": "\u{B7}", "bull": "\u{2022}", "copy": "\u{A9}", "reg": "\u{AE}", "trade": "\u{2122}",
    ]

    /// Replaces the character references real pages use; unknown ones stay as typed, invalid code points are dropped.
    static func decodeEntities(_ text: String) -> [Unicode.Scalar] {
        let input = Array(text.unicodeScalars)
        var output: [Unicode.Scalar] = []
        output.reserveCapacity(input.count)
        var i = 0
        while i < input.count {
            if input[i] == "&", let (scalar, end) = reference(in: input, at: i) {
                if let scalar { output.append(scalar) }
                i = end
            } else {
                output.append(input[i])
                i += 1
            }
        }
        return output
    }

    /// The reference starting at the `&` at `start` (its scalar, nil if invalid, and where it
    /// ends); nil if there is none.
    private static func reference(in input: [Unicode.Scalar], at start: Int) -> (Unicode.Scalar?, Int)? {
        var end = start + 1
        guard end < input.count, input[end] == "#" else {
            // Names are short, so looking at most 8 ahead keeps decoding linear.
            while end < input.count, end - start <= 8, input[end].isASCII, input[end].properties.isAlphabetic {
                end += 1
            }
            let name = String(String.UnicodeScalarView(input[(start + 1)..<end]))
            guard end < input.count, input[end] == ";", let scalar = namedReferences[name] else { return nil }
            return (scalar, end + 1)
        }
        end += 1
        let base: UInt32 = end < input.count && (input[end] == "x" || input[end] == "X") ? 16 : 10
        if base == 16 { end += 1 }
        let digitsStart = end
        var value: UInt32 = 0
        while end < input.count, let digit = hexValue(input[end]), digit < base {
            // Saturating keeps a long run of digits from overflowing; any such number is invalid anyway.
            value = min(value * base + digit, 0x110000)
            end += 1
        }
        guard end > digitsStart else { return nil }
        if end < input.count, input[end] == ";" { end += 1 }
        return (value == 0 || (0xD800...0xDFFF).contains(value) ? nil : Unicode.Scalar(value), end)
    }

    /// The value of an ASCII hex digit.
    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar.value {
        case 0x30...0x39: scalar.value - 0x30
        case 0x41...0x46: scalar.value - 0x41 + 10
        case 0x61...0x66: scalar.value - 0x61 + 10
        default: nil
        }
    }

    /// Collapses whitespace, drops control characters and caps the length on a Character boundary;
    /// nil when nothing is left.
    static func cleanText(_ scalars: some Sequence<Unicode.Scalar>, limit: Int) -> String? {
        var view = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in scalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !view.isEmpty
            } else if scalar.properties.generalCategory != .control {
                if pendingSpace { view.append(" ") }
                pendingSpace = false
                view.append(scalar)
            }
        }
        var text = String(view)
        if let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), end < text.endIndex {
            text = String(text[..<end])
            while text.last == " " { text.removeLast() }
        }
        return text.isEmpty ? nil : text
    }

    /// Bytes a browser percent-escapes before parsing a URL.
    private static let unsafeInURL = Set(#""<>\^`{|}"#.utf8)
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Resolves a URL as a browser would against the page, keeping only absolute http(s) results.
    private static func resolve(_ scalars: [Unicode.Scalar], against base: URL) -> String? {
        // Browsers strip surrounding spaces and controls and ignore tabs and newlines anywhere.
        guard let first = scalars.firstIndex(where: { $0.value > 0x20 }),
            let last = scalars.lastIndex(where: { $0.value > 0x20 }),
            last - first < urlLimit
        else { return nil }
        let bytes = Array(
            String(String.UnicodeScalarView(scalars[first...last].filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }))
                .utf8)
        // Foundation's URL rejects what browsers escape, so escaping first gives the same result on every platform.
        var escaped: [UInt8] = []
        var seenFragment = false
        for (i, byte) in bytes.enumerated() {
            let isEscape =
                byte == UInt8(ascii: "%") && i + 2 < bytes.count
                && hexValue(Unicode.Scalar(bytes[i + 1])) != nil && hexValue(Unicode.Scalar(bytes[i + 2])) != nil
            if byte <= 0x20 || byte >= 0x7F || unsafeInURL.contains(byte) || (byte == UInt8(ascii: "%") && !isEscape)
                || (byte == UInt8(ascii: "#") && seenFragment)
            {
                escaped += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            } else {
                escaped.append(byte)
            }
            seenFragment = seenFragment || byte == UInt8(ascii: "#")
        }
        guard let url = URL(string: String(decoding: escaped, as: UTF8.self), relativeTo: base)?.absoluteURL,
            ["http", "https"].contains(url.scheme?.lowercased()), url.host?.isEmpty == false,
            url.absoluteString.utf8.count <= urlLimit
        else { return nil }
        return url.absoluteString
    }
}

/// One forward pass over a page's head collecting the raw bytes `LinkMetadata` reads; no step moves
/// backwards, so it is linear.
private struct HeadScanner {
    let bytes: [UInt8]
    var position = 0
    var values: [String: ArraySlice<UInt8>] = [:]
    var title: ArraySlice<UInt8>?
    var oEmbedHref: ArraySlice<UInt8>?
    var charset: String?

    /// Scans until `</head>`, `<body` or the end; a construct cut off by the end is ignored.
    mutating func run() {
        while let open = index(of: "<", from: position) {
            position = open + 1
            guard position < bytes.count else { return }
            let next = bytes[position]
            if next == UInt8(ascii: "!"), starts(with: "--", at: position + 1) {
                // Searching from the first dash makes `<!-->` and `<!--->` close at once, as in browsers.
                var dash = index(of: "-", from: position + 1)
                while let at = dash, !starts(with: "-->", at: at) { dash = index(of: "-", from: at + 1) }
                guard let close = dash else { return }
                position = close + 3
            } else if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") || next == UInt8(ascii: "/") {
                if next == UInt8(ascii: "/") {
                    position += 1
                    if lowercased(readName()) == "head" { return }
                }
                guard let close = index(of: ">", from: position) else { return }
                position = close + 1
            } else if (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(next | 0x20) {
                guard startTag() else { return }
            }
        }
    }

    /// Handles the start tag whose name begins at `position`; false when scanning should stop.
    private mutating func startTag() -> Bool {
        let name = lowercased(readName())
        guard let attributes = readAttributes(keep: name == "meta" || name == "link") else { return false }
        switch name {
        case "body", "plaintext": return false
        case "meta":
            if charset == nil, let declared = attributes["charset"] {
                charset = lowercased(trimmed(declared))
            } else if charset == nil, lowercased(trimmed(attributes["http-equiv"] ?? [])) == "content-type" {
                charset = Self.charsetParameter(lowercased(attributes["content"] ?? [], limit: 256))
            }
            // Real sites mix `property=` and `name=` for Open Graph and Twitter keys, so both count.
            for key in [attributes["property"], attributes["name"]].compactMap({ $0.map { lowercased(trimmed($0)) } })
            where LinkMetadata.metaKeys.contains(key) && values[key] == nil {
                values[key] = attributes["content"]
            }
        case "link":
            // Only JSON oEmbed is read; `text/json+oembed` is an older spelling some sites still use.
            let relations = lowercased(attributes["rel"] ?? [], limit: 256).split(whereSeparator: { $0.isWhitespace })
            let type = lowercased(trimmed(attributes["type"] ?? []))
            if oEmbedHref == nil, relations.contains("alternate"),
                type == "application/json+oembed" || type == "text/json+oembed"
            {
                oEmbedHref = attributes["href"]
            }
        case "title", "script", "style", "textarea", "xmp", "iframe", "noembed", "noframes":
            // Raw text: markup inside, such as a `<meta>` in a script's string, is not markup.
            guard let end = findEndTag(name) else { return false }
            if name == "title", title == nil { title = bytes[position..<end] }
            position = end
        default: break
        }
        return true
    }

    /// Reads the attributes after a tag name through the closing `>`; nil if the input ends first.
    private mutating func readAttributes(keep: Bool) -> [String: ArraySlice<UInt8>]? {
        var attributes: [String: ArraySlice<UInt8>] = [:]
        while true {
            while position < bytes.count, isSpace(bytes[position]) || bytes[position] == UInt8(ascii: "/") {
                position += 1
            }
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                return attributes
            }
            let nameStart = position
            position += 1  // A leading `=` belongs to the name, and consuming it guarantees progress.
            while position < bytes.count, !isSpace(bytes[position]), !"/>=".utf8.contains(bytes[position]) {
                position += 1
            }
            let name = bytes[nameStart..<position]
            while position < bytes.count, isSpace(bytes[position]) { position += 1 }
            var value = bytes[position..<position]
            if position < bytes.count, bytes[position] == UInt8(ascii: "=") {
                position += 1
                while position < bytes.count, isSpace(bytes[position]) { position += 1 }
                guard position < bytes.count else { return nil }
                let quote = bytes[position]
                let quoted = quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'")
                let start = quoted ? position + 1 : position
                // An unquoted value running to the end is as incomplete as an unclosed quote.
                guard
                    let end = bytes[start...].firstIndex(where: {
                        quoted ? $0 == quote : isSpace($0) || $0 == UInt8(ascii: ">")
                    })
                else { return nil }
                value = bytes[start..<end]
                position = quoted ? end + 1 : end
            }
            guard keep else { continue }
            // As in browsers, the first of each attribute name wins.
            let key = lowercased(name, limit: 10)
            if ["property", "name", "content", "charset", "http-equiv", "rel", "type", "href"].contains(key),
                attributes[key] == nil
            {
                attributes[key] = value
            }
        }
    }

    /// The `charset=` parameter of a lowercased Content-Type value.
    private static func charsetParameter(_ contentType: String) -> String? {
        guard let range = contentType.range(of: "charset") else { return nil }
        let rest = contentType[range.upperBound...].drop(while: { $0 == " " })
        guard rest.first == "=" else { return nil }
        return String(rest.dropFirst().drop(while: { " \"'".contains($0) }).prefix(while: { !" ;\"'".contains($0) }))
    }

    /// Where `</name` followed by a delimiter starts, searching from `position`.
    private func findEndTag(_ name: String) -> Int? {
        let target = Array(name.utf8)
        var from = position
        while let open = index(of: "<", from: from) {
            let after = open + 2 + target.count
            if after < bytes.count, bytes[open + 1] == UInt8(ascii: "/"),
                zip(bytes[(open + 2)..<after], target).allSatisfy({ $0 | 0x20 == $1 }),
                isSpace(bytes[after]) || bytes[after] == UInt8(ascii: "/") || bytes[after] == UInt8(ascii: ">")
            {
                return open
            }
            from = open + 1
        }
        return nil
    }

    /// Reads a tag name up to whitespace, `/` or `>`.
    private mutating func readName() -> ArraySlice<UInt8> {
        let start = position
        while position < bytes.count, !isSpace(bytes[position]), !"/>".utf8.contains(bytes[position]) { position += 1 }
        return bytes[start..<position]
    }

    /// The next occurrence of an ASCII character at or after `start`.
    private func index(of character: Unicode.Scalar, from start: Int) -> Int? {
        start < bytes.count ? bytes[start...].firstIndex(of: UInt8(ascii: character)) : nil
    }

    /// Whether the bytes at `start` spell `text`.
    private func starts(with text: String, at start: Int) -> Bool {
        bytes[min(start, bytes.count)...].starts(with: text.utf8)
    }

    /// HTML's ASCII whitespace.
    private func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }

    /// `bytes` without surrounding HTML whitespace.
    private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    /// ASCII-lowercased text of a short token; longer input cannot be a token looked for here, so it becomes "".
    private func lowercased(_ bytes: ArraySlice<UInt8>, limit: Int = 64) -> String {
        bytes.count > limit
            ? "" : String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
