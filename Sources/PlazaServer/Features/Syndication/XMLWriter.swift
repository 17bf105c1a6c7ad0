/// XML 1.0 written by hand, well-formed whatever the text in it: every value is escaped, and
/// characters XML 1.0 does not allow (control characters other than tab, line feed and carriage
/// return; U+FFFE and U+FFFF) are dropped. Element and attribute names are the caller's literals.
struct XMLWriter {
    private(set) var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"

    /// `<name a="v">`, to be closed by `close(name)`.
    mutating func open(_ name: String, _ attributes: [(String, String)] = []) {
        text += "<\(name)\(Self.attributes(attributes))>\n"
    }

    mutating func close(_ name: String) { text += "</\(name)>\n" }

    /// `<name a="v">value</name>`.
    mutating func element(_ name: String, _ value: String, _ attributes: [(String, String)] = []) {
        text += "<\(name)\(Self.attributes(attributes))>\(XMLText.escape(value))</\(name)>\n"
    }

    /// `<name a="v"/>`.
    mutating func empty(_ name: String, _ attributes: [(String, String)]) {
        text += "<\(name)\(Self.attributes(attributes))/>\n"
    }

    private static func attributes(_ pairs: [(String, String)]) -> String {
        pairs.map { " \($0.0)=\"\(XMLText.escape($0.1, attribute: true))\"" }.joined()
    }
}

/// Text as XML 1.0 character data or an attribute value.
enum XMLText {
    /// `text` escaped, without the characters XML 1.0 does not allow. A carriage return is
    /// written as a reference (a parser would turn a bare one into a line feed), and so are tab
    /// and line feed in an attribute (a parser would turn them into spaces).
    static func escape(_ text: String, attribute: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\r": out += "&#13;"
            case "\t" where attribute: out += "&#9;"
            case "\n" where attribute: out += "&#10;"
            default: if isAllowed(scalar) { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// XML 1.0's `Char`: tab, line feed, carriage return, U+0020–U+D7FF, U+E000–U+FFFD and
    /// U+10000 on (a Swift string holds no surrogates).
    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}
