import Dispatch
package import PulseKit
import Synchronization

/// The single owner of a ``SQLiteConnection``, running every blocking SQLite call on its own dedicated thread.
///
/// Work is submitted as synchronous closures that receive the connection; callers `await` the result while the
/// closure runs on the executor's thread, never on the Swift concurrency cooperative pool (an fsync can take
/// milliseconds, which would starve the pool). Jobs run one at a time, in submission order, except that all
/// queued ``commit(_:)`` jobs are taken together (see below).
///
/// - ``read(_:)`` runs in a read-only snapshot (a deferred transaction in which writes fail; statements stay
///   prepared). An executor opened with ``SQLiteConnection/Options/readOnly`` is a WAL reader: its reads run
///   beside another executor's writes and never wait for its commits.
/// - ``write(_:)`` runs in its own `BEGIN IMMEDIATE` … `COMMIT` transaction.
/// - ``commit(_:)`` is **group commit**: when the thread becomes free it takes every queued `commit` job (up to
///   the batch limit) and runs them in one shared transaction, each inside its own `SAVEPOINT`, then issues one
///   `COMMIT` — one fsync for the whole batch. A job that throws is rolled back to its savepoint and fails alone;
///   the others still commit. Every caller resumes only after `COMMIT` returned, so success means durable. If
///   `COMMIT` fails, every job of the batch fails. With a ``GroupGathering`` window the thread may wait briefly
///   for more jobs before that `COMMIT` when the recent arrivals say more are coming; a lone job is never
///   delayed (and with the default, ``GroupGathering/off``, no job is).
///
/// Once a job is submitted it runs to completion even if the calling task is cancelled.
///
/// ```swift
/// let executor = try await SQLiteExecutor(path: path)
/// try await executor.write { connection in try migrator.migrate(connection) }
/// let rowID = try await executor.commit { connection in
///     try connection.execute("INSERT INTO batch(id, body) VALUES (?, ?)", [id, body])
///     return connection.lastInsertRowID
/// }
/// try await executor.close()
/// ```
package final class SQLiteExecutor: Sendable {
    /// Counters for observability and benchmarks (PulseKit's, shared with PulsePostgres's executor):
    /// ``SQLiteExecutor/write(_:)`` and ``SQLiteExecutor/commit(_:)`` count their `COMMIT`s (each one an
    /// fsync of the WAL), `commit` jobs the group-commit fields. Jobs per fsync for group commit is
    /// `groupCommittedJobs / groupCommits`.
    package typealias Statistics = GroupCommitStatistics

    private let core: ExecutorCore

    /// Opens the database on a new dedicated thread.
    ///
    /// - Parameters:
    ///   - path: the database file, created if missing.
    ///   - options: connection settings.
    ///   - maximumBatchSize: the most ``commit(_:)`` jobs shared by one transaction.
    ///   - gathering: how long a group commit may wait for more jobs (its group size is capped at
    ///     `maximumBatchSize`); off by default.
    ///   - threadName: the name of the executor's thread, as seen in debuggers, `top -H` and thread dumps
    ///     (Linux keeps at most 15 bytes).
    /// - Throws: ``StorageError`` if the connection cannot be opened or configured.
    package convenience init(
        path: String, options: SQLiteConnection.Options = SQLiteConnection.Options(), maximumBatchSize: Int = 512,
        gathering: GroupGathering = .off, threadName: String = "pulse.sqlite"
    ) async throws {
        try await self.init(
            path: path, options: options, maximumBatchSize: maximumBatchSize, gathering: gathering,
            nanoseconds: { DispatchTime.now().uptimeNanoseconds }, threadName: threadName)
    }

    /// Opens the database with `nanoseconds` as the gathering window's monotonic clock (tests step it).
    init(
        path: String, options: SQLiteConnection.Options = SQLiteConnection.Options(), maximumBatchSize: Int = 512,
        gathering: GroupGathering, nanoseconds: @escaping @Sendable () -> UInt64, threadName: String = "pulse.sqlite"
    ) async throws {
        let core = ExecutorCore(maximumBatchSize: maximumBatchSize, gathering: gathering, nanoseconds: nanoseconds)
        try await withCheckedThrowingContinuation { (opened: CheckedContinuation<Void, any Error>) in
            core.start(
                name: threadName, open: { try SQLiteConnection(path: path, options: options) }, opened: opened)
        }
        self.core = core
    }

    deinit {
        core.close(nil)
    }

    /// Runs `body` in a read-only snapshot on the executor's thread.
    ///
    /// Writes inside `body` fail with ``StorageError/Code/readOnly``.
    package func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await submitSingle { connection in
            try connection.readOnlySnapshot { try body(connection) }
        }
    }

    /// Runs `body` in its own transaction on the executor's thread; rolls back if it throws.
    ///
    /// Returns after `COMMIT`, so the changes are durable. Prefer ``commit(_:)`` for many small concurrent
    /// writes; use `write` for large or long transactions, migrations and maintenance.
    package func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await submitSingle { [core] connection in
            let result = try connection.transaction { try body(connection) }
            core.statistics.withLock { $0.commits += 1 }
            return result
        }
    }

    /// Runs `body` as part of a shared group-commit transaction and returns once that transaction is durable.
    ///
    /// `body` runs inside its own savepoint: if it throws, only its changes are undone and only this call fails.
    /// If the shared `COMMIT` fails, this call fails with that error even though `body` succeeded.
    package func commit<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            commit(body) { continuation.resume(with: $0) }
        }
    }

    /// ``commit(_:)`` without a task: `completion` gets the outcome once the shared transaction's `COMMIT`
    /// returned (success means durable), called **on the executor's thread** (or at once on the caller's
    /// thread when the executor is closed).
    ///
    /// For callers that are not on Swift's cooperative pool and answer from the commit thread itself (the
    /// gateway resumes the HTTP connection there, sparing two thread wake-ups per request). `completion`
    /// holds up the next group while it runs: it must be short and must not block.
    package func commit<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let slot = ResultSlot<T>()
        let job = ExecutorCore.GroupJob(
            run: { connection in
                do {
                    slot.result = .success(try body(connection))
                    return true
                } catch {
                    slot.result = .failure(error)
                    return false
                }
            },
            finish: { batchError in
                if let batchError {
                    completion(.failure(batchError))
                } else if let result = slot.result {
                    completion(result)
                } else {
                    completion(.failure(StorageError(.batchAborted, "group commit job did not run")))
                }
            })
        if !core.submit(.grouped(job)) {
            completion(.failure(StorageError.closedExecutor))
        }
    }

    /// Stops accepting jobs, waits for every queued job to finish, then closes the connection.
    ///
    /// Jobs submitted after `close()` began fail with ``StorageError/Code/closed``. Calling `close()` again
    /// returns the outcome of the first close.
    package func close() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            core.close(continuation)
        }
    }

    /// A snapshot of the counters.
    package var statistics: Statistics {
        core.statistics.withLock { $0 }
    }

    /// Whether the calling thread is the executor's thread (for tests and assertions).
    var isExecutorThread: Bool {
        core.isCurrentThread
    }

    /// Jobs queued and not yet started (for tests).
    var pendingJobCount: Int {
        core.pendingJobCount
    }

    /// Whether ``close()`` has begun (for tests).
    var isClosing: Bool {
        core.isClosing
    }

    /// Whether the thread is waiting for a commit group to fill (for tests).
    var isGathering: Bool {
        core.isGathering
    }

    private func submitSingle<T: Sendable>(
        _ work: @escaping @Sendable (SQLiteConnection) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = core.submit(
                .single { connection in
                    continuation.resume(with: Result { try work(connection) })
                })
            if !accepted {
                continuation.resume(throwing: StorageError.closedExecutor)
            }
        }
    }
}

/// Holds one group-commit job's outcome between running it and resuming its caller.
///
/// Only touched on the executor's thread: written by `run`, read by `finish`, both called from `runBatch`.
private final class ResultSlot<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension StorageError {
    /// The error of an operation on a closed executor.
    static var closedExecutor: StorageError { StorageError(.closed, "the executor is closed") }
}

extension SQLiteConnection {
    /// Runs `body` in a deferred (snapshot) transaction in which every write fails
    /// (``SQLiteConnection/rejectsWrites``). No pragma is toggled, so cached statements stay prepared.
    func readOnlySnapshot<T>(_ body: () throws -> T) throws -> T {
        rejectsWrites = true
        defer { rejectsWrites = false }
        return try transaction(beginning: "BEGIN DEFERRED", body)
    }
}
