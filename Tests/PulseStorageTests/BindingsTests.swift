import Foundation
import PulseKit
import Testing

@testable import PulseStorage

/// `execute(_:binding:)`: values bound one by one into the statement, no `[any SQLiteBindable]`.
@Suite struct BindingsTests {
    @Test func bindsEveryKindInOrder() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(
            creating: "CREATE TABLE v(i INTEGER, r REAL, t TEXT, u TEXT, b BLOB, n, o TEXT, p INTEGER)")
        let text = "héllo\u{0}wörld 🚀"
        let utf8: [UInt8] = Array(#"{"k":"日本語"}"#.utf8)
        try connection.execute("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?)") { row in
            try row.bind(Int64.min)
            try row.bind(-0.5)
            try row.bind(text)
            try row.bindText(utf8: utf8[1...])
            try row.bind([UInt8]([0, 1, 0, 255]))
            try row.bindNull()
            try row.bind(String?.none)
            try row.bind(Int64?.some(7))
        }
        try connection.execute("INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?)") { row in
            try row.bind(42)
            try row.bind(SQLiteValue.real(1.5))
            try row.bind("")
            try row.bindText(utf8: utf8[0..<0])
            try row.bind([UInt8]())
            try row.bind(String?.some("x"))
            try row.bind(String?.some("y"))
            try row.bind(Int64?.none)
        }
        let rows = try connection.query("SELECT i, r, t, u, b, n, o, p, typeof(u), typeof(b) FROM v ORDER BY rowid") {
            row in
            [
                try row.value(at: 0), try row.value(at: 1), try row.value(at: 2), try row.value(at: 3),
                try row.value(at: 4), try row.value(at: 5), try row.value(at: 6), try row.value(at: 7),
                try row.value(at: 8), try row.value(at: 9),
            ]
        }
        #expect(
            rows[0] == [
                .integer(Int64.min), .real(-0.5), .text(text), .text(String(decoding: utf8[1...], as: UTF8.self)),
                .blob([0, 1, 0, 255]), .null, .null, .integer(7), .text("text"), .text("blob"),
            ])
        // Empty text stays TEXT and an empty blob stays BLOB (not NULL).
        #expect(
            rows[1] == [
                .integer(42), .real(1.5), .text(""), .text(""), .blob([]), .text("x"), .text("y"), .null,
                .text("text"), .text("blob"),
            ])
        try connection.close()
    }

    /// Too few or too many values is a misuse error, and the statement does not run.
    @Test func wrongCountIsMisuseAndRunsNothing() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE v(a, b)")
        for count in [0, 1, 3] {
            let error = #expect(throws: StorageError.self) {
                try connection.execute("INSERT INTO v VALUES (?, ?)") { row in
                    for value in 0..<count { try row.bind(value) }
                }
            }
            #expect(error?.code == .misuse)
        }
        let rows = try connection.queryFirst("SELECT count(*) FROM v") { row in try row.column(0, as: Int.self) }
        #expect(rows == 0)
        // The cached statement is usable again afterwards.
        try connection.execute("INSERT INTO v VALUES (?, ?)") { row in
            try row.bind(1)
            try row.bind(2)
        }
        #expect(try connection.queryFirst("SELECT a + b FROM v") { row in try row.column(0, as: Int.self) } == 3)
        try connection.close()
    }

    /// Text is copied into the statement's arena: values larger than a block, and more values
    /// than one block holds, all arrive intact (and the array form goes the same way).
    @Test func textSpanningSeveralArenaBlocksIsStoredIntact() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE v(a TEXT, b TEXT, c TEXT, d TEXT)")
        let texts = [
            String(repeating: "a", count: SQLiteBindings.blockBytes + 7), String(repeating: "b", count: 10_000),
            String(repeating: "c", count: 10_000), "d",
        ]
        try connection.execute("INSERT INTO v VALUES (?, ?, ?, ?)") { row in
            for text in texts { try row.bind(text) }
        }
        try connection.execute("INSERT INTO v VALUES (?, ?, ?, ?)", texts.map { $0 })
        let rows = try connection.query("SELECT a, b, c, d FROM v") { row in
            [
                try row.column(0, as: String.self), try row.column(1, as: String.self),
                try row.column(2, as: String.self), try row.column(3, as: String.self),
            ]
        }
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0 == texts })
        try connection.close()
    }

    /// The statement is compiled once and reused, as with array bindings.
    @Test func reusesTheCachedStatement() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE v(a)")
        let before = connection.compileCount
        for value in 0..<10 {
            try connection.execute("INSERT INTO v VALUES (?)") { row in try row.bind(value) }
        }
        #expect(connection.compileCount == before + 1)
        try connection.close()
    }
}
