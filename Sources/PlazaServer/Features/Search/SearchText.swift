/// What a person typed into a search box, reduced to terms the full-text engines cannot
/// misread: words are runs of letters and digits (everything else separates them), text in
/// double quotes is a phrase, and the last bare word matches as a prefix (search-as-you-type).
/// No operator, quote or bracket of the user's ever reaches FTS5 or `to_tsquery`.
struct SearchText: Sendable, Equatable {
    struct Term: Sendable, Equatable {
        var words: [String]
        var prefix = false
        var isPhrase: Bool { words.count > 1 }
    }

    var terms: [Term]

    static let maxTerms = 16
    static let maxWordLength = 64

    init(terms: [Term]) { self.terms = terms }

    /// nil when the text holds no word at all.
    init?(_ text: String) {
        var terms: [Term] = []
        var inQuotes = false
        var phrase: [String] = []
        var word = ""
        var lastWasBare = false
        func endWord() {
            guard !word.isEmpty else { return }
            let clipped = String(word.prefix(Self.maxWordLength))
            if inQuotes {
                phrase.append(clipped)
            } else {
                terms.append(Term(words: [clipped]))
                lastWasBare = true
            }
            word = ""
        }
        for character in text.lowercased() {
            if character == "\"" {
                endWord()
                if inQuotes, !phrase.isEmpty {
                    terms.append(Term(words: phrase))
                    lastWasBare = false
                }
                phrase = []
                inQuotes.toggle()
            } else if character.isLetter || character.isNumber {
                word.append(character)
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
        guard !terms.isEmpty else { return nil }
        self.terms = Array(terms.prefix(Self.maxTerms))
    }

    /// Every bare word as a prefix: for names, typed a piece at a time.
    var asPrefixes: SearchText {
        SearchText(terms: terms.map { $0.isPhrase ? $0 : Term(words: $0.words, prefix: true) })
    }

    /// The words, phrases kept together, for plain substring matching.
    var phrases: [String] { terms.map { $0.words.joined(separator: " ") } }

    /// The fields a search may be limited to (`in=`).
    enum Field: String, Sendable, CaseIterable {
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
