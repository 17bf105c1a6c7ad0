/// What a person typed into a search box, reduced to terms the full-text engines cannot
/// misread: the text is folded as the index is (`SearchFolding`), words are runs of letters
/// and digits (everything else separates them, and each emoji is a word of its own), text in
/// double quotes is a phrase, and the last bare word matches as a prefix (search-as-you-type).
/// A word in a script written without spaces becomes the phrase of its character pairs, as
/// the index holds it. No operator, quote or bracket of the user's ever reaches FTS5 or
/// `to_tsquery`.
package struct SearchText: Sendable, Equatable {
    struct Term: Sendable, Equatable {
        /// The index's tokens, in order.
        var words: [String]
        var prefix = false
        var isPhrase: Bool { words.count > 1 }
    }

    var terms: [Term]

    static let maxTerms = 16
    /// Characters of one word that count.
    static let maxWordLength = 64

    init(terms: [Term]) { self.terms = terms }

    /// nil when the text holds no word at all.
    package init?(_ text: String) {
        var terms: [Term] = []
        var inQuotes = false
        var phrase: [String] = []
        var word = String.UnicodeScalarView()
        var lastWasBare = false
        func endWord() {
            guard !word.isEmpty else { return }
            let tokens = SearchFolding.tokens(ofWord: String(String.UnicodeScalarView(word.prefix(Self.maxWordLength))))
            if inQuotes {
                phrase.append(contentsOf: tokens)
            } else {
                terms.append(Term(words: tokens))
                lastWasBare = true
            }
            word = String.UnicodeScalarView()
        }
        for scalar in SearchFolding.fold(text).unicodeScalars {
            if scalar == "\"" {
                endWord()
                if inQuotes, !phrase.isEmpty {
                    terms.append(Term(words: phrase))
                    lastWasBare = false
                }
                phrase = []
                inQuotes.toggle()
            } else if SearchFolding.isPictograph(scalar.value) {
                endWord()
                word.append(scalar)
                endWord()
                lastWasBare = false
            } else if Self.isWordPart(scalar) {
                word.append(scalar)
            } else {
                endWord()
            }
            if terms.count >= Self.maxTerms { break }
        }
        let endsInWord = !word.isEmpty
        endWord()
        if inQuotes, !phrase.isEmpty {
            terms.append(Term(words: phrase))
        }  // an unclosed quote still counts
        else if endsInWord, lastWasBare, !terms.isEmpty {
            terms[terms.count - 1].prefix = true
        }
        // One character of an unspaced script is in the index only as the first of a pair (or
        // a run's last): it is found as a prefix.
        for index in terms.indices {
            if let last = terms[index].words.last, last.unicodeScalars.count == 1,
                let scalar = last.unicodeScalars.first, SearchFolding.isUnspaced(scalar.value)
            {
                terms[index].prefix = true
            }
        }
        guard !terms.isEmpty else { return nil }
        self.terms = Array(terms.prefix(Self.maxTerms))
    }

    /// Letters, digits and the marks that belong to them (Thai vowels, Indic matras).
    private static func isWordPart(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isAlphabetic || properties.numericType != nil { return true }
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark: return true
        default: return false
        }
    }

    /// Every bare word as a prefix: for names, typed a piece at a time.
    var asPrefixes: SearchText {
        SearchText(terms: terms.map { $0.isPhrase ? $0 : Term(words: $0.words, prefix: true) })
    }

    /// The words, phrases kept together, for substring matching in text that went through
    /// `plaza_search_text` (SearchFolding.indexText).
    var phrases: [String] { terms.map { $0.words.joined(separator: " ") } }

    /// The fields a search may be limited to (`in=`).
    package enum Field: String, Sendable, CaseIterable {
        case all, title, body, author, space, place
    }

    /// An FTS5 MATCH expression: every term required, each word quoted.
    func fts5(in field: Field) -> String {
        let expression = terms.map { term in
            "\"" + term.words.joined(separator: " ") + "\"" + (term.prefix ? "*" : "")
        }.joined(separator: " AND ")
        switch field {
        case .all: return expression
        case .title, .body, .author: return "{\(field.rawValue)} : (\(expression))"
        case .space: return "{spaces} : (\(expression))"
        case .place: return "{place} : (\(expression))"
        }
    }

    /// A `to_tsquery('plaza_search', …)` expression; a field is a weight label (A title, B body,
    /// C author, D spaces and place, which `Dialect.postgresFieldCheck` tells apart).
    func tsquery(in field: Field) -> String {
        let label: String =
            switch field {
            case .all: ""
            case .title: "A"
            case .body: "B"
            case .author: "C"
            case .space, .place: "D"
            }
        return terms.map { term in
            let words = term.words.enumerated().map { index, word in
                let isLast = index == term.words.count - 1
                let marks = (term.prefix && isLast ? "*" : "") + label
                return "'\(word)'" + (marks.isEmpty ? "" : ":" + marks)
            }
            return words.count == 1 ? words[0] : "(" + words.joined(separator: " <-> ") + ")"
        }.joined(separator: " & ")
    }
}
