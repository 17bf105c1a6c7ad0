import Foundation

/// A statement, or a fragment of one, with its binds: written as a string with interpolations
/// (`"SELECT … WHERE id = \(bind: id)"`), which append straight to one text and one array of
/// values as the string is built. A fragment interpolated into another brings its binds along.
///
/// Each bind stands in the text as `SQL.bindMarker`, which a connection turns into its
/// database's placeholder: `?` when SQLite prepares the statement (its cache is keyed by the
/// marked text), `$1`, `$2`, … before each PostgreSQL run (its prepared statements are named by
/// the rewritten text). SQLKit's `SQLQueryString`, used before, kept every piece as an existential and
/// serialised them all again on every run: about 5 µs a statement, a dozen of them in each like,
/// all in the one SQLite writer's turn.
struct SQL: Sendable, ExpressibleByStringInterpolation {
    /// The text, with `bindMarker` where each bind goes.
    private(set) var text: String
    /// The binds, in the order of their markers.
    private(set) var binds: [BindValue]

    /// Stands for a bind in `text`; never part of SQL a store writes.
    static let bindMarker: Character = "\u{1}"

    /// Raw SQL text, taken as it is: never build it from input.
    init(_ text: String) {
        self.text = text
        binds = []
    }

    init(stringLiteral value: String) {
        self.init(value)
    }

    init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        binds = stringInterpolation.binds
    }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var text = ""
        fileprivate var binds: [BindValue] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 2 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value passed to the database apart from the text.
        mutating func appendInterpolation(bind value: some SQLBindable) {
            text.append(SQL.bindMarker)
            binds.append(value.bindValue)
        }

        /// A value or NULL.
        mutating func appendInterpolation<Value: SQLBindable>(bind value: Value?) {
            text.append(SQL.bindMarker)
            binds.append(value?.bindValue ?? .null)
        }

        /// The values, each bound, separated by commas (for `IN (…)`; never empty there).
        mutating func appendInterpolation<Values: Sequence>(binds values: Values) where Values.Element: SQLBindable {
            var first = true
            for value in values {
                if !first { text += ", " }
                first = false
                appendInterpolation(bind: value)
            }
        }

        /// Text that is SQL already (a table alias, a column list): never from input.
        mutating func appendInterpolation(unsafeRaw text: String) { self.text += text }

        /// A string as a quoted SQL literal; one holding the bind marker, which may stand in the
        /// text for nothing else, goes as a bind.
        mutating func appendInterpolation(literal value: String) {
            guard !value.contains(SQL.bindMarker) else { return appendInterpolation(bind: value) }
            text += "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        }

        /// An integer written into the text.
        mutating func appendInterpolation(literal value: Int) { text += String(value) }

        /// Another fragment, with its binds.
        mutating func appendInterpolation(_ fragment: SQL) {
            text += fragment.text
            binds += fragment.binds
        }
    }

    static func + (lhs: SQL, rhs: SQL) -> SQL {
        var sum = lhs
        sum += rhs
        return sum
    }

    static func += (lhs: inout SQL, rhs: SQL) {
        lhs.text += rhs.text
        lhs.binds += rhs.binds
    }

    /// `text` (of an `SQL`) with each bind marker replaced by `placeholder(n)`, for the n-th
    /// bind from 1.
    static func placeholders(in text: String, _ placeholder: (Int) -> String) -> String {
        let parts = text.components(separatedBy: String(bindMarker))
        guard parts.count > 1 else { return text }
        var result = parts[0]
        for (offset, part) in parts.dropFirst().enumerated() {
            result += placeholder(offset + 1)
            result += part
        }
        return result
    }
}

extension Sequence<SQL> {
    /// The fragments one after another, with `separator` between them.
    func joined(separator: String) -> SQL {
        var result: SQL = ""
        for (offset, fragment) in enumerated() {
            if offset > 0 { result += SQL(separator) }
            result += fragment
        }
        return result
    }
}

/// A value bound to a statement.
enum BindValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bool(Bool)
}

/// A Swift value a statement can take as a bind.
protocol SQLBindable: Sendable {
    var bindValue: BindValue { get }
}

extension Int64: SQLBindable {
    var bindValue: BindValue { .integer(self) }
}

extension Int: SQLBindable {
    var bindValue: BindValue { .integer(Int64(self)) }
}

extension String: SQLBindable {
    var bindValue: BindValue { .text(self) }
}

extension Double: SQLBindable {
    var bindValue: BindValue { .real(self) }
}

extension Bool: SQLBindable {
    var bindValue: BindValue { .bool(self) }
}
