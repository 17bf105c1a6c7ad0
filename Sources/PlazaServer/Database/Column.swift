/// A column a query selects and a row type reads back, named once: a row type's select list
/// (`SQL.select`) and its `init(row:)` (`row.decode(_:)`) use the same constants,
/// so they cannot drift apart.
struct Column<Value: ColumnValue>: Sendable, SelectedColumn {
    /// What the query selects, e.g. `p.title` or `u.username`.
    let expression: String
    /// The name the row carries it under, e.g. `title` or `author_username`.
    let name: String

    /// `expression` read back under `name`, or under its column's own name (`p.title` → `title`).
    init(_ expression: String, as name: String? = nil) {
        self.expression = expression
        self.name = name ?? String(expression.split(separator: ".").last ?? Substring(expression))
    }

    var selection: String {
        expression == name || expression.hasSuffix("." + name) ? expression : "\(expression) AS \(name)"
    }
}

/// A column of any type, as it appears in a select list.
protocol SelectedColumn: Sendable {
    var expression: String { get }
    var name: String { get }
    var selection: String { get }
}

extension SelectedColumn {
    /// The column's own name, without its table's alias (`u.avatar` → `avatar`).
    var unqualified: Substring { expression.split(separator: ".").last ?? Substring(expression) }
}

extension SQL {
    /// `columns` as a select list.
    static func select(_ columns: [any SelectedColumn]) -> SQL {
        SQL(columns.map(\.selection).joined(separator: ", "))
    }
}

extension Row {
    func decode<T>(_ column: Column<T>) throws -> T { try decode(column: column.name, as: T.self) }
}
