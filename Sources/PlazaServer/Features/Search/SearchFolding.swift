import PlazaAPI

/// How text becomes searchable, the same for what is indexed and what is asked, so that a
/// search finds words however they were typed:
/// - **Folding:** compatibility forms (full-width `Ｐｌａｚａ`, ligatures) become plain ones,
///   case is folded, Latin, Greek and Cyrillic accents go (`é` → `e`), `ß` → `ss`, Turkish
///   dotted and dotless i are both `i`, Greek final sigma is sigma, Arabic loses its vowel marks and tatweel and writes alef,
///   yeh and teh marbuta one way each (as Lucene's Arabic normaliser does), and invisible
///   characters (zero-width, bidi controls, variation selectors) are dropped.
/// - **Segmentation:** Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar are written
///   without spaces between words, so a run of them is indexed as its overlapping pairs of
///   characters (`東京のラーメン` → `東京 京の のラ ラー ーメ メン ン`, the run's last character
///   alone too), as Lucene's CJK bigram filter does; a word asked for is the phrase of its pairs,
///   found anywhere inside a run. Emoji and other pictographs stand alone as words.
///
/// SQLite's index calls `indexText` through the SQL function `plaza_search_text`;
/// PostgreSQL's function of the same name (migration 20) takes the same steps in SQL, and the
/// suite runs the same searches on both.
enum SearchFolding {
    /// `text` folded (see above), without segmentation: `TextFolding.fold`, which keyword
    /// filters share with search (and PlazaKit with the server).
    static func fold(_ text: String) -> String { TextFolding.fold(text) }

    /// `text` as the index stores it: folded, each unspaced run as its pairs and its last
    /// character, each pictograph apart.
    static func indexText(_ text: String) -> String {
        let folded = fold(text)
        if folded.utf8.allSatisfy({ $0 < 0x80 }) { return folded }  // no unspaced script, no pictograph
        let scalars = Array(folded.unicodeScalars)
        var output = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            if isUnspaced(scalar.value) {
                output.append(" ")
                output.append(scalar)
                if index + 1 < scalars.count, isUnspaced(scalars[index + 1].value) {
                    output.append(scalars[index + 1])
                } else {
                    output.append(" ")
                }
            } else if isPictograph(scalar.value) {
                output.append(" ")
                output.append(scalar)
                output.append(" ")
            } else {
                output.append(scalar)
            }
        }
        return String(output)
    }

    /// The index's tokens for one folded word of a query (letters and digits only): a
    /// spaced part as it is, an unspaced run as its pairs (or its one character).
    static func tokens(ofWord word: String) -> [String] {
        var tokens: [String] = []
        var spaced = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        func endRun() {
            if run.count == 1 {
                tokens.append(String(run[0]))
            } else if run.count > 1 {
                for index in 0..<(run.count - 1) {
                    var pair = String.UnicodeScalarView()
                    pair.append(run[index])
                    pair.append(run[index + 1])
                    tokens.append(String(pair))
                }
            }
            run = []
        }
        for scalar in word.unicodeScalars {
            if isUnspaced(scalar.value) {
                if !spaced.isEmpty {
                    tokens.append(String(spaced))
                    spaced = String.UnicodeScalarView()
                }
                run.append(scalar)
            } else {
                endRun()
                spaced.append(scalar)
            }
        }
        endRun()
        if !spaced.isEmpty { tokens.append(String(spaced)) }
        return tokens
    }

    /// A letter of a script written without spaces between words.
    static func isUnspaced(_ value: UInt32) -> Bool {
        switch value {
        case 0x0E00...0x0EFF,  // Thai, Lao
            0x1000...0x109F,  // Myanmar
            0x1100...0x11FF,  // Hangul Jamo
            0x1780...0x17FF,  // Khmer
            0x3040...0x30FA, 0x30FC...0x30FF,  // Hiragana, Katakana (not the middle dot)
            0x3100...0x312F, 0x31F0...0x31FF,  // Bopomofo, Katakana extension
            0x3130...0x318F,  // Hangul compatibility Jamo
            0x3400...0x4DBF, 0x4E00...0x9FFF,  // CJK ideographs
            0xA960...0xA97F, 0xAC00...0xD7AF,  // Hangul
            0xF900...0xFAFF,  // CJK compatibility ideographs
            0x20000...0x3FFFF:  // CJK ideographs, extensions B on
            true
        default: false
        }
    }

    /// Emoji and other pictographs: words of their own.
    static func isPictograph(_ value: UInt32) -> Bool {
        switch value {
        case 0xA9, 0xAE, 0x2190...0x2BFF, 0x1F000...0x1FAFF: true
        default: false
        }
    }
}
