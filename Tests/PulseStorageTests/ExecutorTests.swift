import Foundation
import PulseKit
import Testing

@testable import PulseStorage

@Suite struct ExecutorTests {
    @Test func runsEveryJobOnItsDedicatedThread() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path, threadName: "pulse-test-db")
        #expect(!executor.isExecutorThread)
        let onThread: @Sendable (SQLiteConnection) -> Bool = { _ in
            executor.isExecutorThread && Thread.current.name == "pulse-test-db" && !Thread.isMainThread
        }
        #expect(try await executor.read(onThread))
        #expect(try await executor.write(onThread))
        #expect(try await executor.commit(onThread))
        let fromManyTasks = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask { try await executor.commit(onThread) }
                group.addTask { try await executor.read(onThread) }
            }
            return try await group.reduce(true) { $0 && $1 }
        }
        #expect(fromManyTasks)
        try await executor.close()
    }

    @Test func readIsReadOnlyAndWriteRollsBackOnThrow() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { try $0.execute("CREATE TABLE t(x INTEGER)") }
        await #expect {
            try await executor.read { try $0.execute("INSERT INTO t(x) VALUES (1)") }
        } throws: { ($0 as? StorageError)?.code == .readOnly }
        await #expect(throws: Boom(index: 1)) {
            try await executor.write { connection in
                try connection.execute("INSERT INTO t(x) VALUES (2)")
                throw Boom(index: 1)
            }
        }
        let rowID = try await executor.write { connection in
            try connection.execute("INSERT INTO t(x) VALUES (3)")
            return connection.lastInsertRowID
        }
        let rows = try await executor.read { connection in
            try connection.query("SELECT rowid, x FROM t") { row in
                [try row.column(0, as: Int64.self), try row.column(1, as: Int64.self)]
            }
        }
        #expect(rows == [[rowID, 3]])
        #expect(executor.statistics.commits == 2)
        try await executor.close()
    }

    @Test func closeDrainsQueuedJobsThenRejectsNewOnes() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { try $0.execute("CREATE TABLE t(x INTEGER NOT NULL)") }
        let gate = ThreadGate()
        async let held: Void = executor.write { _ in gate.enterAndWait() }
        try await waitUntil("the gate job runs") { gate.hasEntered }

        let queued = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<queued {
                group.addTask {
                    if index % 5 == 0 {
                        try await executor.write { try $0.execute("INSERT INTO t(x) VALUES (?)", [index]) }
                    } else {
                        try await executor.commit { try $0.execute("INSERT INTO t(x) VALUES (?)", [index]) }
                    }
                }
            }
            try await waitUntil("all jobs are queued") { executor.pendingJobCount == queued }
            group.addTask { try await executor.close() }
            try await waitUntil("close has begun") { executor.isClosing }
            await #expect {
                try await executor.commit { _ in 1 }
            } throws: { ($0 as? StorageError)?.code == .closed }
            gate.open()
            try await group.waitForAll()
        }
        try await held
        try await executor.close()  // a second close returns the first one's outcome

        // Closing checkpointed and removed the WAL file: the connection really is closed.
        #expect(!FileManager.default.fileExists(atPath: database.path + "-wal"))
        let connection = try SQLiteConnection(path: database.path)
        let count = try connection.queryFirst("SELECT count(*) FROM t") { row in try row.column(0, as: Int.self) }
        #expect(count == queued)
    }

    @Test func droppingTheExecutorClosesTheConnection() async throws {
        let database = try TemporaryDatabase()
        do {
            let executor = try await SQLiteExecutor(path: database.path)
            try await executor.commit { try $0.execute("CREATE TABLE t(x)") }
            #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
        }
        try await waitUntil("the WAL file is removed by the closing connection") {
            !FileManager.default.fileExists(atPath: database.path + "-wal")
        }
    }

    @Test func openFailureIsReported() async throws {
        let database = try TemporaryDatabase()
        await #expect {
            _ = try await SQLiteExecutor(path: database.directory + "/no/such/folder.sqlite")
        } throws: { ($0 as? StorageError)?.code == .cannotOpen }
    }
}

/// The read-only reader: WAL reads beside the writer, statements kept prepared.
@Suite struct ReaderTests {
    @Test func readsNeverExpireTheirPreparedStatements() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { try $0.execute("CREATE TABLE t(x INTEGER)") }
        let reader = try await SQLiteExecutor(path: database.path, options: .init(readOnly: true))
        for value in 0..<20 {
            try await executor.commit { try $0.execute("INSERT INTO t(x) VALUES (?)", [value]) }
            for target in [executor, reader] {
                let count = try await target.read { connection in
                    try connection.queryFirst("SELECT count(*) FROM t WHERE x >= ?", [0]) {
                        try $0.column(0, as: Int.self)
                    }
                }
                #expect(count == value + 1)
            }
        }
        // Toggling `PRAGMA query_only` around each read used to expire every cached statement.
        #expect(try await executor.read { $0.statementReprepareCount } == 0)
        #expect(try await reader.read { $0.statementReprepareCount } == 0)
        let compiled = try await reader.read { $0.compileCount }
        for _ in 0..<5 {
            _ = try await reader.read { try $0.queryFirst("SELECT count(*) FROM t WHERE x >= ?", [0]) { _ in true } }
        }
        #expect(try await reader.read { $0.compileCount } == compiled)
        try await reader.close()
        try await executor.close()
    }

    @Test func theReaderDoesNotWaitForAnOpenWriteTransactionAndCannotWrite() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { connection in
            try connection.execute("CREATE TABLE t(x INTEGER)")
            try connection.execute("INSERT INTO t(x) VALUES (1)")
        }
        let reader = try await SQLiteExecutor(path: database.path, options: .init(readOnly: true))
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        // A write transaction held open on the writer's thread (as a long group commit would be).
        let writing = Task {
            try await executor.write { connection in
                try connection.execute("INSERT INTO t(x) VALUES (2)")
                inside.signal()
                release.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                inside.wait()
                continuation.resume()
            }
        }
        // The reader sees the last committed snapshot at once.
        let seen = try await reader.read { connection in
            try connection.queryFirst("SELECT count(*) FROM t") { try $0.column(0, as: Int.self) }
        }
        #expect(seen == 1)
        await #expect {
            try await reader.read { try $0.execute("DELETE FROM t") }
        } throws: { ($0 as? StorageError)?.code == .readOnly }
        release.signal()
        try await writing.value
        let after = try await reader.read { connection in
            try connection.queryFirst("SELECT count(*) FROM t") { try $0.column(0, as: Int.self) }
        }
        #expect(after == 2)
        try await reader.close()
        try await executor.close()
    }
}
