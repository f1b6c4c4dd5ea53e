import Foundation
import PulseKit
import Testing

@testable import PulseStorage

@Suite struct ConnectionTests {
    @Test func opensWithWALSynchronousFullAndForeignKeys() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        let journalMode = try connection.queryFirst("PRAGMA journal_mode") { row in try row.column(0, as: String.self) }
        let synchronous = try connection.queryFirst("PRAGMA synchronous") { row in try row.column(0, as: Int64.self) }
        let foreignKeys = try connection.queryFirst("PRAGMA foreign_keys") { row in try row.column(0, as: Int64.self) }
        let busyTimeout = try connection.queryFirst("PRAGMA busy_timeout") { row in try row.column(0, as: Int64.self) }
        #expect(journalMode == "wal")
        #expect(synchronous == 2)  // FULL
        #expect(foreignKeys == 1)
        #expect(busyTimeout == 5_000)
        #expect(FileManager.default.fileExists(atPath: database.path))
        try connection.close()
    }

    @Test func walModePersistsInTheFile() throws {
        let database = try TemporaryDatabase()
        try SQLiteConnection(path: database.path).close()
        // WAL mode is recorded in the database header (bytes 18 and 19 are 2 for WAL).
        let header = try #require(FileManager.default.contents(atPath: database.path))
        #expect(header.count >= 20)
        #expect(header[18] == 2)
        #expect(header[19] == 2)
    }

    @Test func roundTripsEveryStorageClass() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE v(i INTEGER, r REAL, t TEXT, b BLOB, n)")
        let blob: [UInt8] = [0, 1, 0, 255, 0, 0x7F, 0]
        let text = "héllo\u{0}wörld 🚀 日本語"
        try connection.execute(
            "INSERT INTO v VALUES (?, ?, ?, ?, ?)", [Int64.min, -0.5, text, blob, nil])
        try connection.execute("INSERT INTO v VALUES (?, ?, ?, ?, ?)", [Int64.max, Double.pi, "", [UInt8](), 7])

        struct Row: Equatable {
            var integer: Int64
            var real: Double
            var text: String
            var blob: [UInt8]
            var optional: Int?
        }
        let rows = try connection.query("SELECT i, r, t, b, n FROM v ORDER BY rowid") { row in
            Row(
                integer: try row.column(0), real: try row.column(1), text: try row.column(2),
                blob: try row.column(3), optional: try row.column(4))
        }
        #expect(
            rows == [
                Row(integer: .min, real: -0.5, text: text, blob: blob, optional: nil),
                Row(integer: .max, real: .pi, text: "", blob: [], optional: 7),
            ])
        // Storage classes are exactly what was bound: empty text stays TEXT, empty blob stays BLOB.
        let types = try connection.query("SELECT typeof(i), typeof(r), typeof(t), typeof(b), typeof(n) FROM v") { row in
            try (0..<5).map { try row.column($0, as: String.self) }
        }
        #expect(
            types == [["integer", "real", "text", "blob", "null"], ["integer", "real", "text", "blob", "integer"]])
        let lengths = try connection.query("SELECT length(CAST(t AS BLOB)), length(b) FROM v ORDER BY rowid") { row in
            [try row.column(0, as: Int.self), try row.column(1, as: Int.self)]
        }
        #expect(lengths == [[text.utf8.count, blob.count], [0, 0]])
    }

    @Test func readsAnyValueAndColumnNames() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        let values = try connection.queryFirst("SELECT 1 AS a, 2.5 AS b, 'x' AS c, x'00FF' AS d, NULL AS e") { row in
            (
                try (0..<row.columnCount).map { try row.value(at: $0) },
                try (0..<row.columnCount).map { try row.columnName(at: $0) }
            )
        }
        let (read, names) = try #require(values)
        #expect(read == [.integer(1), .real(2.5), .text("x"), .blob([0, 255]), .null])
        #expect(names == ["a", "b", "c", "d", "e"])
    }

    @Test func bindsSQLiteValuesAndOptionals() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        let none: Int64? = nil
        let some: String? = "present"
        let row = try connection.queryFirst(
            "SELECT ?, ?, ?, ?", [SQLiteValue.real(1.5), none, some, SQLiteValue.blob([9])]
        ) { row in
            [try row.value(at: 0), try row.value(at: 1), try row.value(at: 2), try row.value(at: 3)]
        }
        #expect(row == [.real(1.5), .null, .text("present"), .blob([9])])
    }

    @Test func strictTypedReadsRejectMismatches() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        #expect {
            _ = try connection.queryFirst("SELECT NULL") { row in try row.column(0, as: Int64.self) }
        } throws: { ($0 as? StorageError)?.code == .typeMismatch }
        #expect {
            _ = try connection.queryFirst("SELECT '12'") { row in try row.column(0, as: Int64.self) }
        } throws: { ($0 as? StorageError)?.code == .typeMismatch }
        #expect {
            _ = try connection.queryFirst("SELECT 1") { row in try row.column(1, as: Int64.self) }
        } throws: { ($0 as? StorageError)?.code == .misuse }
        // Double accepts INTEGER; Optional accepts NULL.
        let widened = try connection.queryFirst("SELECT 3, NULL") { row in
            (try row.column(0, as: Double.self), try row.column(1, as: String?.self))
        }
        #expect(widened?.0 == 3)
        #expect(widened?.1 == nil)
    }

    @Test func reusesCachedStatements() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE t(x INTEGER)")
        let before = connection.compileCount
        for value in 0..<100 {
            try connection.execute("INSERT INTO t(x) VALUES (?)", [value])
        }
        #expect(connection.compileCount == before + 1)
        let sum = try connection.queryFirst("SELECT sum(x) FROM t") { row in try row.column(0, as: Int.self) }
        _ = try connection.queryFirst("SELECT sum(x) FROM t") { row in try row.column(0, as: Int.self) }
        #expect(sum == 4_950)
        #expect(connection.compileCount == before + 2)
        // A reused statement starts with cleared bindings: too few bindings are rejected, not silently reused.
        #expect {
            try connection.execute("INSERT INTO t(x) VALUES (?)")
        } throws: { ($0 as? StorageError)?.code == .misuse }
    }

    @Test func reentrantUseOfTheSameSQLGetsItsOwnStatement() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE t(x INTEGER)")
        for value in 1...3 {
            try connection.execute("INSERT INTO t(x) VALUES (?)", [value])
        }
        let sql = "SELECT x FROM t WHERE x >= ? ORDER BY x"
        let pairs = try connection.query(sql, [1]) { outer in
            let x = try outer.column(0, as: Int.self)
            let inner = try connection.query(sql, [x]) { row in try row.column(0, as: Int.self) }
            return inner.count
        }
        #expect(pairs == [3, 2, 1])
        #expect(connection.cachedStatementCount >= 1)
    }

    @Test func evictsLeastRecentlyUsedStatements() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path, options: .init(statementCacheCapacity: 2))
        for index in 0..<10 {
            _ = try connection.queryFirst("SELECT \(index)") { row in try row.column(0, as: Int.self) }
        }
        #expect(connection.cachedStatementCount == 2)
    }

    @Test func transactionCommitsOrRollsBack() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE t(x INTEGER)")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t(x) VALUES (1)")
                throw Boom()
            }
        }
        #expect(!connection.isInTransaction)
        let id = try connection.transaction {
            try connection.execute("INSERT INTO t(x) VALUES (2)")
            #expect(connection.changes == 1)
            return connection.lastInsertRowID
        }
        let rows = try connection.query("SELECT rowid, x FROM t") { row in
            [try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)]
        }
        #expect(rows == [[id, 2]])
    }

    @Test func nestedTransactionRollsBackOnlyItsOwnWork() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE t(x INTEGER)")
        struct Boom: Error {}
        try connection.transaction {
            try connection.execute("INSERT INTO t(x) VALUES (1)")
            #expect(throws: Boom.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t(x) VALUES (2)")
                    throw Boom()
                }
            }
            try connection.transaction {
                try connection.execute("INSERT INTO t(x) VALUES (3)")
            }
        }
        let rows = try connection.query("SELECT x FROM t ORDER BY x") { row in try row.column(0, as: Int.self) }
        #expect(rows == [1, 3])
    }

    @Test func errorsNeverContainBoundValues() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        try connection.executeScript(
            """
            CREATE TABLE secrets(token TEXT NOT NULL UNIQUE, amount INTEGER CHECK (amount < 10)) STRICT;
            CREATE TABLE child(parent TEXT REFERENCES secrets(token));
            """)
        let secret = "s3cr3t-T0KEN-do-not-log"
        try connection.execute("INSERT INTO secrets(token, amount) VALUES (?, ?)", [secret, 1])

        var errors: [StorageError] = []
        for (sql, bindings) in [
            ("INSERT INTO secrets(token, amount) VALUES (?, ?)", [secret, 1] as [(any SQLiteBindable)?]),
            ("INSERT INTO secrets(token, amount) VALUES (?, ?)", [secret + "2", 987_654_321]),
            ("INSERT INTO secrets(token, amount) VALUES (?, ?)", [secret + "3", secret]),
            ("INSERT INTO secrets(token, amount) VALUES (?, ?)", [nil, 1]),
            ("INSERT INTO child(parent) VALUES (?)", [secret + "-missing"]),
        ] {
            do {
                try connection.execute(sql, bindings)
                Issue.record("expected a failure for \(sql)")
            } catch let error as StorageError {
                errors.append(error)
            }
        }
        #expect(errors.map(\.code) == [.constraint, .constraint, .constraint, .constraint, .constraint])
        #expect(errors[0].extendedResultCode == 2_067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(errors[4].extendedResultCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
        for error in errors {
            let text = "\(error) \(error.message)"
            #expect(!text.contains(secret))
            #expect(!text.contains("987654321"))
            #expect(text.contains("INSERT INTO"))
        }
    }

    @Test func rejectsSeveralStatementsAndWrongBindingCounts() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        #expect {
            try connection.execute("CREATE TABLE a(x); CREATE TABLE b(y)")
        } throws: { ($0 as? StorageError)?.code == .misuse }
        try connection.execute("CREATE TABLE a(x); -- trailing comment is fine")
        #expect {
            try connection.execute("INSERT INTO a(x) VALUES (?)", [1, 2])
        } throws: { ($0 as? StorageError)?.code == .misuse }
        #expect {
            try connection.execute("SELEKT 1")
        } throws: { ($0 as? StorageError)?.code == .sqlite }
    }

    @Test func closedConnectionThrowsClosed() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(path: database.path)
        try connection.close()
        try connection.close()  // idempotent
        #expect {
            try connection.execute("SELECT 1")
        } throws: { ($0 as? StorageError)?.code == .closed }
    }

    @Test func openingSomethingThatIsNotADatabaseFails() throws {
        let database = try TemporaryDatabase()
        try Data(repeating: 0x41, count: 4_096).write(to: URL(fileURLWithPath: database.path))
        #expect {
            _ = try SQLiteConnection(path: database.path)
        } throws: { ($0 as? StorageError)?.code == .corrupt }
        #expect {
            _ = try SQLiteConnection(path: database.directory + "/missing-folder/x.sqlite")
        } throws: { ($0 as? StorageError)?.code == .cannotOpen }
    }
}
