import Foundation

/// Text folded so that words match however they were typed: compatibility forms (full-width
/// `Ｐｌａｚａ`, ligatures) become plain ones, case is folded, Latin, Greek and Cyrillic accents
/// go (`é` → `e`), `ß` → `ss`, Turkish dotted and dotless i are both `i`, Greek final sigma is
/// sigma, Arabic loses its vowel marks and tatweel and writes alef maksura and teh marbuta one
/// way each, and invisible characters (zero-width, bidi controls, variation selectors) are
/// dropped. The server's search index and keyword filters fold with this, and so does PlazaKit.
public enum TextFolding {
    public static func fold(_ text: String) -> String {
        // Most text is ASCII, which only needs lower case: none of the steps below change it otherwise.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        let lowered = text.precomposedStringWithCompatibilityMapping.lowercased()
        var kept = String.UnicodeScalarView()
        for scalar in lowered.decomposedStringWithCanonicalMapping.unicodeScalars where !isDropped(scalar.value) {
            switch scalar.value {
            case 0xDF: kept.append(contentsOf: "ss".unicodeScalars)  // ß
            case 0x131: kept.append("i")  // dotless ı
            case 0x3C2: kept.append("\u{3C3}")  // final sigma
            case 0x649: kept.append("\u{64A}")  // alef maksura → yeh
            case 0x629: kept.append("\u{647}")  // teh marbuta → heh
            default: kept.append(scalar)
            }
        }
        return String(kept).precomposedStringWithCanonicalMapping
    }

    /// Combining accents (on a decomposed text), Arabic vowel marks and tatweel, and the
    /// invisible characters.
    static func isDropped(_ value: UInt32) -> Bool {
        switch value {
        case 0x0300...0x036F, 0x064B...0x065F, 0x0670, 0x0640, 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x2064,
            0x2066...0x2069, 0xFE00...0xFE0F, 0xFEFF:
            true
        default: false
        }
    }
}
