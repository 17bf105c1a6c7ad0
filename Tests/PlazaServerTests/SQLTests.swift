import Foundation
import Logging
import Testing

@testable import PlazaServer

/// `SQL`: statements built by interpolation, their binds in order, and the placeholders each
/// database is given.
@Suite("SQL: statements and their binds")
struct SQLTests {
    @Test func fragmentsBringTheirBindsInTheOrderOfTheText() {
        let viewer: Int64? = nil
        let inner: SQL = "b = \(bind: "x") AND c IS \(bind: viewer)"
        var query: SQL = "SELECT 1 WHERE a = \(bind: 1) AND (\(inner)) AND d IN (\(binds: [Int64(7), 8]))"
        query += " AND e = \(bind: true)"
        #expect(query.binds == [.integer(1), .text("x"), .null, .integer(7), .integer(8), .bool(true)])
        #expect(
            SQL.placeholders(in: query.text) { "$\($0)" }
                == "SELECT 1 WHERE a = $1 AND (b = $2 AND c IS $3) AND d IN ($4, $5) AND e = $6")
        #expect(
            SQL.placeholders(in: query.text) { _ in "?" }
                == "SELECT 1 WHERE a = ? AND (b = ? AND c IS ?) AND d IN (?, ?) AND e = ?")
    }

    @Test func literalsAreQuotedAndJoinedFragmentsKeepTheirBinds() {
        let literal: SQL = "SELECT \(literal: "it's"), \(literal: 42)"
        #expect(literal.text == "SELECT 'it''s', 42")
        #expect(literal.binds.isEmpty)
        let marked: SQL = "SELECT \(literal: "a\u{1}b")"
        #expect(marked.binds == [.text("a\u{1}b")])
        let parts: [SQL] = ["a = \(bind: 1)", "b = \(bind: 2)", "c"]
        let joined = parts.joined(separator: " AND ")
        #expect(SQL.placeholders(in: joined.text) { "$\($0)" } == "a = $1 AND b = $2 AND c")
        #expect(joined.binds == [.integer(1), .integer(2)])
        #expect(SQL("SELECT '$1', '?'").text == "SELECT '$1', '?'")
    }

    /// On the database itself (SQLite, or PostgreSQL when the suite runs there): values that look
    /// like placeholders or quotes arrive as values, a fragment used twice binds twice, and a
    /// NULL and a boolean keep their meaning.
    @Test func bindsArriveAsValuesOnTheDatabase() async throws {
        let config = try await TestDatabase.config()
        defer { TestDatabase.dispose(config) }
        let db = try await Database.open(config.database, logger: Logger(label: "test"))
        try await db.withRunning { db in
            let tricky = "'); DROP TABLE users; -- $1 ? \u{1}\u{2}"
            let same: SQL = "CAST(\(bind: Int64(5)) AS BIGINT)"
            let none: Int64? = nil
            let row = try #require(
                try await db.read { db in
                    try await db.first(
                        """
                        SELECT CAST(\(bind: tricky) AS TEXT) AS text, \(literal: tricky) AS literal, \(same) + \(same) AS sum,
                            CAST(\(bind: none) AS BIGINT) IS NULL AS missing, \(bind: true) AS yes
                        """)
                })
            #expect(try row.decode(column: "text", as: String.self) == tricky)
            #expect(try row.decode(column: "literal", as: String.self) == tricky)
            #expect(try row.decode(column: "sum", as: Int64.self) == 10)
            #expect(try row.decode(column: "missing", as: Bool.self))
            #expect(try row.decode(column: "yes", as: Bool.self))
        }
    }
}
