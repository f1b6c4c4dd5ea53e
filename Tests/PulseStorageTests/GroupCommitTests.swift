import Foundation
import PulseKit
import Synchronization
import Testing

@testable import PulseStorage

@Suite struct GroupCommitTests {
    private func makeExecutor(_ database: TemporaryDatabase) async throws -> SQLiteExecutor {
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { connection in
            var migrator = Migrator()
            migrator.append(
                "001_items",
                sql: """
                    CREATE TABLE parent(id INTEGER PRIMARY KEY);
                    CREATE TABLE item(
                        id INTEGER PRIMARY KEY,
                        value INTEGER NOT NULL UNIQUE,
                        parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED
                    );
                    """)
            try migrator.migrate(connection)
        }
        return executor
    }

    private func values(_ executor: SQLiteExecutor) async throws -> [Int] {
        try await executor.read { connection in
            try connection.query("SELECT value FROM item ORDER BY value") { row in try row.column(0, as: Int.self) }
        }
    }

    /// Queues `count` commit jobs behind a held thread, then releases it so they form one batch.
    /// With `inOrder`, job `i` is queued before job `i + 1`.
    private func commitAsOneBatch(
        _ executor: SQLiteExecutor, count: Int, inOrder: Bool = false,
        _ job: @escaping @Sendable (Int, SQLiteConnection) throws -> Int64
    ) async throws -> [Int: Result<Int64, any Error>] {
        let gate = ThreadGate()
        async let held: Void = executor.write { _ in gate.enterAndWait() }
        try await waitUntil("the gate job runs") { gate.hasEntered }
        let results = try await withThrowingTaskGroup(of: (Int, Result<Int64, any Error>).self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        return (index, .success(try await executor.commit { try job(index, $0) }))
                    } catch {
                        return (index, .failure(error))
                    }
                }
                if inOrder {
                    try await waitUntil("job \(index) is queued") { executor.pendingJobCount == index + 1 }
                }
            }
            try await waitUntil("all jobs are queued") { executor.pendingJobCount == count }
            gate.open()
            var results: [Int: Result<Int64, any Error>] = [:]
            for try await (index, result) in group {
                results[index] = result
            }
            return results
        }
        try await held
        return results
    }

    @Test func concurrentCommitsShareOneTransaction() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        let before = executor.statistics
        let results = try await commitAsOneBatch(executor, count: 200) { index, connection in
            try connection.execute("INSERT INTO item(value) VALUES (?)", [index])
            return connection.lastInsertRowID
        }
        let rowIDs = try results.values.map { try $0.get() }
        #expect(rowIDs.count == 200)
        #expect(Set(rowIDs).count == 200)
        #expect(try await values(executor) == Array(0..<200))
        let after = executor.statistics
        #expect(after.groupCommits - before.groupCommits == 1)
        #expect(after.groupCommittedJobs - before.groupCommittedJobs == 200)
        #expect(after.largestGroupCommit == 200)
        try await executor.close()
    }

    @Test func freeRunningConcurrentCommitsNeedFarFewerCommits() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        let before = executor.statistics
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (?)", [index]) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await values(executor) == Array(0..<200))
        let after = executor.statistics
        let commits = after.groupCommits - before.groupCommits
        #expect(after.groupCommittedJobs - before.groupCommittedJobs == 200)
        #expect(commits < 200)
        print(
            "group commit, 200 free-running concurrent jobs: \(commits) COMMITs, largest batch \(after.largestGroupCommit)"
        )
        try await executor.close()
    }

    @Test func aFailingJobFailsAloneAndOthersCommit() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (1000)") }
        let results = try await commitAsOneBatch(executor, count: 10, inOrder: true) { index, connection in
            switch index {
            case 3:
                // Writes, then throws: its insert must be rolled back.
                try connection.execute("INSERT INTO item(value) VALUES (?)", [index])
                throw Boom(index: index)
            case 6:
                try connection.execute("INSERT INTO item(value) VALUES (1000)")  // UNIQUE violation
            case 8:
                throw Boom(index: index)
            default:
                try connection.execute("INSERT INTO item(value) VALUES (?)", [index])
            }
            return connection.lastInsertRowID
        }
        for index in [0, 1, 2, 4, 5, 7, 9] {
            #expect(throws: Never.self) { try results[index]?.get() }
        }
        #expect(throws: Boom(index: 3)) { try results[3]?.get() }
        #expect(throws: Boom(index: 8)) { try results[8]?.get() }
        #expect {
            try results[6]?.get()
        } throws: { ($0 as? StorageError)?.code == .constraint }
        #expect(try await values(executor) == [0, 1, 2, 4, 5, 7, 9, 1000])
        let statistics = executor.statistics
        #expect(statistics.groupCommits == 2)
        #expect(statistics.groupFailedJobs == 3)
        try await executor.close()
    }

    @Test func aFailedCommitFailsTheWholeBatch() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        // A deferred foreign key is only checked at COMMIT, so one dangling reference makes COMMIT fail.
        let results = try await commitAsOneBatch(executor, count: 6) { index, connection in
            let parent: Int? = index == 4 ? 999 : nil
            try connection.execute("INSERT INTO item(value, parent) VALUES (?, ?)", [index, parent])
            return connection.lastInsertRowID
        }
        for index in 0..<6 {
            #expect {
                try results[index]?.get()
            } throws: { error in
                let error = error as? StorageError
                return error?.code == .constraint && error?.extendedResultCode == 787
            }
        }
        #expect(try await values(executor) == [])
        #expect(executor.statistics.groupCommits == 0)
        // The executor keeps working afterwards.
        try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (7)") }
        #expect(try await values(executor) == [7])
        try await executor.close()
    }

    @Test func aJobThatEndsTheTransactionAbortsItsBatchAndLaterJobsRunAgain() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        let results = try await commitAsOneBatch(executor, count: 3, inOrder: true) { index, connection in
            if index == 1 {
                try connection.execute("ROLLBACK")  // misuse: ends the shared transaction
            } else {
                try connection.execute("INSERT INTO item(value) VALUES (?)", [index])
            }
            return Int64(index)
        }
        // Job 0 ran before the culprit: its work was rolled back with the batch.
        for index in [0, 1] {
            #expect {
                try results[index]?.get()
            } throws: { ($0 as? StorageError)?.code == .batchAborted }
        }
        // Job 2 never ran in the broken batch: it was queued again and committed.
        #expect(try results[2]?.get() == 2)
        #expect(try await values(executor) == [2])
        let statistics = executor.statistics
        #expect(statistics.groupCommits == 1)
        #expect(statistics.groupCommittedJobs == 1)
        #expect(statistics.groupFailedJobs == 2)
        try await executor.close()
    }

    @Test func measureGroupCommitThroughput() async throws {
        // Prints numbers for the lead; asserts only correctness.
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        let clock = ContinuousClock()

        let sequential = 100
        let sequentialStart = clock.now
        for index in 0..<sequential {
            try await executor.write { try $0.execute("INSERT INTO item(value) VALUES (?)", [index]) }
        }
        let sequentialTime = clock.now - sequentialStart

        let writers = 32
        let perWriter = 100
        let before = executor.statistics
        let groupStart = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for step in 0..<perWriter {
                        let value = 1_000_000 + writer * perWriter + step
                        try await executor.commit { connection in
                            try connection.execute("INSERT INTO item(value) VALUES (?)", [value])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let groupTime = clock.now - groupStart
        let after = executor.statistics
        let jobs = after.groupCommittedJobs - before.groupCommittedJobs
        let commits = after.groupCommits - before.groupCommits
        #expect(jobs == writers * perWriter)
        #expect(try await values(executor).count == sequential + writers * perWriter)

        func perSecond(_ count: Int, _ duration: Duration) -> Int {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return Int(Double(count) / seconds)
        }
        print(
            """
            [PulseStorage] sequential write(): \(sequential) commits in \(sequentialTime) \
            -> \(perSecond(sequential, sequentialTime)) commits/s
            [PulseStorage] group commit, \(writers) writers x \(perWriter) inserts: \(jobs) jobs in \(groupTime) \
            -> \(perSecond(jobs, groupTime)) jobs/s, \(commits) COMMITs, \
            \(String(format: "%.1f", Double(jobs) / Double(max(commits, 1)))) jobs/commit, \
            largest batch \(after.largestGroupCommit)
            """)
        try await executor.close()
    }

    @Test func completionCommitsAnswerOnTheExecutorThreadAfterTheSharedCommit() async throws {
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database)
        let gate = ThreadGate()
        async let held: Void = executor.write { _ in gate.enterAndWait() }
        try await waitUntil("the gate job runs") { gate.hasEntered }
        let count = 40
        // Each completion records whether it ran on the executor's thread and whether a second
        // connection (another process, as far as SQLite knows) already sees its row: it must, the
        // COMMIT has returned.
        let outcomes = Recorder<(index: Int, onExecutor: Bool, visible: Bool, rowID: Int64?)>()
        let reader = try LockedConnection(path: database.path)
        for index in 0..<count {
            let job: @Sendable (SQLiteConnection) throws -> Int64 = { connection in
                if index == 7 { throw Boom(index: index) }
                try connection.execute("INSERT INTO item(value) VALUES (?)", [index])
                return connection.lastInsertRowID
            }
            executor.commit(job) { result in
                outcomes.append((index, executor.isExecutorThread, reader.sees(index), try? result.get()))
            }
        }
        try await waitUntil("all jobs are queued") { executor.pendingJobCount == count }
        gate.open()
        try await held
        try await waitUntil("every completion ran") { outcomes.all.count == count }
        let all = outcomes.all
        #expect(all.allSatisfy { $0.onExecutor })
        #expect(all.filter { $0.index != 7 }.allSatisfy { $0.visible && $0.rowID != nil })
        #expect(all.first { $0.index == 7 }.map { !$0.visible && $0.rowID == nil } == true)
        #expect(executor.statistics.groupCommits == 1)
        try await executor.close()
        // Closed: the completion runs at once, on the caller's thread, with the closed error.
        let refused = Recorder<StorageError.Code>()
        let late: @Sendable (SQLiteConnection) throws -> Int = { _ in 1 }
        executor.commit(late) { result in
            if case .failure(let error as StorageError) = result { refused.append(error.code) }
        }
        #expect(refused.all == [.closed])
    }
}

/// A second connection to the database, used from the executor's thread under a lock.
private final class LockedConnection: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let lock = Mutex(())

    init(path: String) throws {
        connection = try SQLiteConnection(path: path)
    }

    /// Whether a committed row holds `value`.
    func sees(_ value: Int) -> Bool {
        lock.withLock { _ in
            (try? connection.queryFirst("SELECT 1 FROM item WHERE value = ?", [value]) { _ in true }) ?? false
        }
    }
}

/// Values appended from any thread.
private final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}
