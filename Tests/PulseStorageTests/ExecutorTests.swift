import Foundation
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
