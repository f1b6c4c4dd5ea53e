import Foundation
import Testing

@testable import PulseStorage

@Suite struct CheckpointTests {
    private static let blob = [UInt8](repeating: 0x5A, count: 20_000)

    private func walBytes(_ database: TemporaryDatabase) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test func withoutTheOptionSQLiteCheckpointsItselfAndTheOwnerNeverDoes() throws {
        let database = try TemporaryDatabase()
        let connection = try database.open(creating: "CREATE TABLE t(b BLOB)")
        try connection.transaction { try connection.execute("INSERT INTO t VALUES (?)", [Self.blob]) }
        #expect(connection.checkpointIfDue() == false)
        try connection.close()
    }

    @Test func aDeferredCheckpointRunsOnceTheWALReachesItsThreshold() throws {
        let database = try TemporaryDatabase()
        let connection = try SQLiteConnection(
            path: database.path, options: SQLiteConnection.Options(deferredCheckpointPages: 3))
        try connection.execute("CREATE TABLE t(b BLOB)")
        // A 20 kB row needs several pages, so this commit crosses the threshold.
        try connection.transaction { try connection.execute("INSERT INTO t VALUES (?)", [Self.blob]) }
        #expect(connection.checkpointIfDue())
        // Nothing new since: not due again.
        #expect(connection.checkpointIfDue() == false)
        // Never inside a transaction.
        try connection.execute("BEGIN IMMEDIATE")
        try connection.execute("INSERT INTO t VALUES (?)", [Self.blob])
        #expect(connection.checkpointIfDue() == false)
        try connection.execute("COMMIT")
        #expect(connection.checkpointIfDue())
        // The checkpointed rows are in the database file: a second connection reads them.
        let reader = try SQLiteConnection(path: database.path)
        #expect(try reader.queryFirst("SELECT count(*) FROM t") { try $0.column(0, as: Int.self) } == 2)
        try reader.close()
        try connection.close()
    }

    @Test func theExecutorCheckpointsAfterCommitsSoTheWALStaysSmall() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(
            path: database.path, options: SQLiteConnection.Options(deferredCheckpointPages: 16))
        try await executor.write { connection in try connection.execute("CREATE TABLE t(b BLOB)") }
        // 60 commits of 20 kB: 1.2 MB through the WAL, far below SQLite's own 1,000-page threshold.
        for _ in 0..<60 {
            try await executor.commit { connection in try connection.execute("INSERT INTO t VALUES (?)", [Self.blob]) }
        }
        // Checkpointed every 16 pages, the WAL is restarted from its beginning each time.
        #expect(walBytes(database) < 256 * 1024)
        let rows = try await executor.read { connection in
            try connection.queryFirst("SELECT count(*) FROM t") { try $0.column(0, as: Int.self) }
        }
        #expect(rows == 60)
        try await executor.close()
    }
}
