import Dispatch
import Foundation
package import PulseKit
import Synchronization

/// The single owner of a ``PostgresConnection``, running every blocking libpq call on its own
/// dedicated thread — the PostgreSQL twin of PulseStorage's `SQLiteExecutor`.
///
/// Callers `await` while their work runs on the executor's thread, never on the Swift
/// concurrency cooperative pool (a commit waits for the server's WAL flush, and a failed server
/// for a timeout). Jobs run one at a time, in submission order, except that queued
/// ``commit(_:)`` jobs are taken together:
///
/// - ``run(_:)`` hands the connection to a closure (reads, migrations, multi-step transactions).
/// - ``commit(_:)`` is **group commit**: when the thread becomes free it takes every queued
///   `commit` job (up to the batch limit) and sends `BEGIN`, every job's statements and `COMMIT`
///   in one pipeline: one round trip and one WAL flush for the whole group. Every caller resumes
///   only after `COMMIT` returned, so success means committed (as durable as the server's
///   `synchronous_commit` makes a commit). When a statement of the group fails, the group is
///   rolled back, the job whose statement failed fails alone and the others are sent again as a
///   group (after a deadlock or serialization failure the whole group is sent again, twice at
///   most, first).
///
/// The connection is made on first use and again after it broke (the server stopped, failed
/// over, the network went away), at most once per ``reconnectInterval``; jobs in between fail at
/// once with ``PostgresError/Code/unavailable``.
package final class PostgresExecutor: Sendable {
    /// Counters for observability and benchmarks (PulseKit's, shared with PulseStorage's executor):
    /// ``commit(_:)`` jobs count in the group-commit fields, connections in `connects`.
    package typealias Statistics = GroupCommitStatistics

    /// The least time between two connection attempts.
    package static let reconnectInterval: Duration = .milliseconds(500)

    private typealias SingleJob = @Sendable (PostgresConnection?, PostgresError?) -> Void

    private struct GroupJob: Sendable {
        let statements: [PostgresStatement]
        let finish: @Sendable (Result<[PostgresResult], PostgresError>) -> Void
    }

    private typealias Job = GroupCommitQueue<SingleJob, GroupJob>.Job

    private struct State {
        var queue = GroupCommitQueue<SingleJob, GroupJob>()
        var idle = false
        var closing = false
        var closed = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let connectionString: String
    private let applicationName: String
    private let maximumBatchSize: Int
    private let counters = Mutex(Statistics())

    /// Starts the executor's thread; the connection is made by the first job.
    ///
    /// - Parameters:
    ///   - connectionString: a libpq connection string or `postgres://` URL.
    ///   - applicationName: what `pg_stat_activity` shows.
    ///   - maximumBatchSize: the most ``commit(_:)`` jobs sharing one transaction.
    ///   - threadName: the thread's name (Linux keeps 15 bytes).
    package init(
        connectionString: String, applicationName: String = "pulsegate", maximumBatchSize: Int = 256,
        threadName: String = "pulse.pg"
    ) {
        self.connectionString = connectionString
        self.applicationName = applicationName
        self.maximumBatchSize = max(1, maximumBatchSize)
        DedicatedThread.start(name: threadName) { [self] in self.threadMain() }
    }

    /// Runs `body` with the connection on the executor's thread. A transaction `body` leaves
    /// open is rolled back.
    package func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> T)
        async throws(PostgresError) -> T
    {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<T, PostgresError>, Never>) in
            let accepted = submit(
                .single { connection, failure in
                    guard let connection else {
                        continuation.resume(returning: .failure(failure ?? .closedExecutor))
                        return
                    }
                    do throws(PostgresError) {
                        continuation.resume(returning: .success(try body(connection)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                })
            if !accepted { continuation.resume(returning: .failure(.closedExecutor)) }
        }
        return try result.get()
    }

    /// Runs `statements` as part of a shared group-commit transaction; returns their results
    /// once that transaction committed.
    package func commit(_ statements: [PostgresStatement]) async throws(PostgresError) -> [PostgresResult] {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<[PostgresResult], PostgresError>, Never>) in
            let accepted = submit(.grouped(GroupJob(statements: statements) { continuation.resume(returning: $0) }))
            if !accepted { continuation.resume(returning: .failure(.closedExecutor)) }
        }
        return try result.get()
    }

    /// Stops accepting jobs, finishes the queued ones and closes the connection.
    package func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (done, wake) = state.withLock { state -> (Bool, Bool) in
                if state.closed { return (true, false) }
                state.closeWaiters.append(continuation)
                state.closing = true
                let wake = state.idle
                state.idle = false
                return (false, wake)
            }
            if done { continuation.resume() }
            if wake { wakeup.signal() }
        }
    }

    /// A snapshot of the counters.
    package var statistics: Statistics { counters.withLock { $0 } }

    // MARK: - Thread side

    private func submit(_ job: Job) -> Bool {
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closing else { return (false, false) }
            state.queue.append(job)
            let wake = state.idle
            state.idle = false
            return (true, wake)
        }
        if wake { wakeup.signal() }
        return accepted
    }

    private enum Work {
        case single(SingleJob)
        case batch([GroupJob])
        case shutdown
    }

    private func nextWork() -> Work {
        while true {
            let work = state.withLock { state -> Work? in
                state.idle = false
                switch state.queue.take(maximumBatchSize: maximumBatchSize) {
                case .single(let job): return .single(job)
                case .batch(let batch): return .batch(batch)
                case nil: break
                }
                if state.closing { return .shutdown }
                state.idle = true
                return nil
            }
            if let work { return work }
            wakeup.wait()
        }
    }

    private func threadMain() {
        var connection: PostgresConnection?
        var lastAttempt: DispatchTime?
        var lastFailure: PostgresError?
        /// The connection, made or remade when needed (throttled), or the reason there is none.
        func connected() -> Result<PostgresConnection, PostgresError> {
            if let connection, !connection.isBroken { return .success(connection) }
            connection?.close()
            connection = nil
            let now = DispatchTime.now()
            let interval =
                UInt64(Self.reconnectInterval.components.attoseconds / 1_000_000_000)
                + UInt64(Self.reconnectInterval.components.seconds) * 1_000_000_000
            if let lastAttempt, let lastFailure, now.uptimeNanoseconds - lastAttempt.uptimeNanoseconds < interval {
                return .failure(lastFailure)
            }
            lastAttempt = now
            do throws(PostgresError) {
                let made = try PostgresConnection(
                    connectionString: connectionString, applicationName: applicationName)
                connection = made
                lastFailure = nil
                counters.withLock { $0.connects += 1 }
                return .success(made)
            } catch {
                lastFailure = error
                return .failure(error)
            }
        }
        while true {
            switch nextWork() {
            case .single(let job):
                switch connected() {
                case .success(let live):
                    job(live, nil)
                    live.rollbackIgnoringErrors()
                case .failure(let error):
                    job(nil, error)
                }
            case .batch(let jobs):
                switch connected() {
                case .success(let live):
                    runBatch(jobs, on: live)
                case .failure(let error):
                    counters.withLock { $0.groupFailedJobs += jobs.count }
                    for job in jobs { job.finish(.failure(error)) }
                }
            case .shutdown:
                connection?.close()
                let waiters = state.withLock { state in
                    state.closed = true
                    defer { state.closeWaiters.removeAll() }
                    return state.closeWaiters
                }
                for waiter in waiters { waiter.resume() }
                return
            }
        }
    }

    /// One pipelined transaction for the whole group. When a statement fails, the job it belongs
    /// to fails alone and the others are committed again as a group, without it.
    private func runBatch(_ jobs: [GroupJob], on connection: PostgresConnection) {
        var pending = jobs
        var transientRetries = 2
        while !pending.isEmpty {
            switch transact(pending.flatMap(\.statements), on: connection) {
            case .success(let results):
                record(committed: pending.count, failed: 0, groupSize: pending.count)
                var offset = 0
                for job in pending {
                    job.finish(.success(Array(results[offset..<offset + job.statements.count])))
                    offset += job.statements.count
                }
                return
            case .failure(let failure):
                // The whole group fails when the server or the connection is the problem.
                guard let statement = failure.statement, failure.error.code != .unavailable,
                    failure.error.code != .readOnly
                else {
                    record(committed: 0, failed: pending.count, groupSize: 0)
                    for job in pending { job.finish(.failure(failure.error)) }
                    return
                }
                // A deadlock or serialization failure is nobody's fault: the group runs again.
                if failure.error.code == .transient && transientRetries > 0 {
                    transientRetries -= 1
                    continue
                }
                var offset = 0
                let culprit =
                    pending.firstIndex { job in
                        defer { offset += job.statements.count }
                        return statement < offset + job.statements.count
                    } ?? pending.count - 1
                record(committed: 0, failed: 1, groupSize: 0)
                pending.remove(at: culprit).finish(.failure(failure.error))
            }
        }
    }

    private struct TransactFailure: Error {
        var error: PostgresError
        /// The index of the statement that failed, when one did.
        var statement: Int?
    }

    /// `BEGIN`, `statements`, `COMMIT` in one pipeline; the statements' results, or the first
    /// failure (the transaction then rolled back).
    private func transact(_ statements: [PostgresStatement], on connection: PostgresConnection) -> Result<
        [PostgresResult], TransactFailure
    > {
        let all = [PostgresStatement("BEGIN")] + statements + [PostgresStatement("COMMIT")]
        let outcomes: [Result<PostgresResult, PostgresError>]
        do throws(PostgresError) {
            outcomes = try connection.pipeline(all)
        } catch {
            connection.rollbackIgnoringErrors()
            return .failure(TransactFailure(error: error))
        }
        var results: [PostgresResult] = []
        results.reserveCapacity(all.count)
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .success(let result): results.append(result)
            case .failure(let error):
                connection.rollbackIgnoringErrors()
                let statement = index >= 1 && index <= statements.count ? index - 1 : nil
                return .failure(TransactFailure(error: error, statement: statement))
            }
        }
        results.removeFirst()
        results.removeLast()
        return .success(results)
    }

    private func record(committed: Int, failed: Int, groupSize: Int) {
        // Every job of a group that committed did: a group committed when any job of it did.
        counters.withLock {
            $0.recordGroup(committed: committed, failed: failed, groupSize: groupSize, didCommit: committed > 0)
        }
    }
}
