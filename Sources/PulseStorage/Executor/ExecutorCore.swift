import Dispatch
import Foundation
import PulseKit
import Synchronization

/// The job queue and dedicated thread behind ``SQLiteExecutor``.
///
/// Callers append jobs under a mutex; the thread sleeps on a semaphore when the queue is empty and is signalled
/// once per idle period. The connection is created, used and closed on that thread only.
final class ExecutorCore: Sendable {
    /// A job that runs alone and resumes its caller itself.
    typealias SingleJob = @Sendable (SQLiteConnection) -> Void

    /// A job for the shared group-commit transaction.
    struct GroupJob: Sendable {
        /// Runs the caller's closure (inside its savepoint) and returns whether it succeeded; the closure's
        /// result or error is kept by the job.
        let run: @Sendable (SQLiteConnection) -> Bool
        /// Resumes the caller: with `error` if given, else with the kept result or error.
        let finish: @Sendable (StorageError?) -> Void
        /// When it was queued (nanoseconds of the gathering clock; 0 while gathering is off).
        var arrival: UInt64 = 0
    }

    typealias Job = GroupCommitQueue<SingleJob, GroupJob>.Job

    private enum Work {
        case single(SingleJob)
        case batch([GroupJob])
        /// Gathering: wait for more group jobs until this time (or a wake-up).
        case gather(until: UInt64)
        case shutdown
    }

    private struct State {
        var queue = GroupCommitQueue<SingleJob, GroupJob>()
        /// True while the thread waits (or is about to wait) on the semaphore.
        var idle = false
        var closing = false
        var closeResult: Result<Void, StorageError>?
        var closeWaiters: [CheckedContinuation<Void, any Error>] = []
        var thread: ObjectIdentifier?
        var gathering: GatheringStateMachine
    }

    private let state: Mutex<State>
    private let wakeup = DispatchSemaphore(value: 0)
    private let maximumBatchSize: Int
    private let gatheringEnabled: Bool
    /// Monotonic nanoseconds, for the gathering window.
    private let nanoseconds: @Sendable () -> UInt64
    let statistics = Mutex(SQLiteExecutor.Statistics())

    init(
        maximumBatchSize: Int, gathering: GroupGathering, nanoseconds: @escaping @Sendable () -> UInt64
    ) {
        self.maximumBatchSize = max(1, maximumBatchSize)
        // A group never holds more than the batch limit, so gathering stops there at the latest.
        var gathering = gathering
        gathering.groupSize = min(gathering.groupSize, self.maximumBatchSize)
        self.gatheringEnabled = gathering.window > 0
        self.nanoseconds = nanoseconds
        self.state = Mutex(State(gathering: GatheringStateMachine(gathering)))
    }

    // MARK: - Caller side

    /// Starts the thread, which opens the connection and reports the outcome through `opened`.
    func start(
        name: String, open: @escaping @Sendable () throws -> SQLiteConnection,
        opened: CheckedContinuation<Void, any Error>
    ) {
        DedicatedThread.start(name: name) { [self] in self.threadMain(open: open, opened: opened) }
    }

    /// Queues `job`; returns false (without queueing) once closing has begun.
    func submit(_ job: Job) -> Bool {
        var job = job
        if gatheringEnabled, case .grouped(var groupJob) = job {
            groupJob.arrival = nanoseconds()
            job = .grouped(groupJob)
        }
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closing else { return (false, false) }
            state.queue.append(job)
            var wakesThread = true
            if case .grouped(let groupJob) = job, gatheringEnabled {
                state.gathering.arrived(at: groupJob.arrival)
                // A gathering thread wakes at its deadline anyway; wake it early only for a full group.
                wakesThread = state.gathering.wakesThread(queued: state.queue.count)
            }
            let wake = state.idle && wakesThread
            if wake {
                state.idle = false
            }
            return (true, wake)
        }
        if wake {
            wakeup.signal()
        }
        return accepted
    }

    /// Stops accepting jobs; the thread drains the queue, closes the connection, then resumes `waiter`.
    func close(_ waiter: CheckedContinuation<Void, any Error>?) {
        let (finished, wake) = state.withLock { state -> (Result<Void, StorageError>?, Bool) in
            if let result = state.closeResult {
                return (result, false)
            }
            if let waiter {
                state.closeWaiters.append(waiter)
            }
            state.closing = true
            let wake = state.idle
            state.idle = false
            return (nil, wake)
        }
        if let finished {
            waiter?.resume(with: finished.mapError { $0 })
        }
        if wake {
            wakeup.signal()
        }
    }

    /// Whether the calling thread is this executor's thread.
    var isCurrentThread: Bool {
        let current = ObjectIdentifier(Thread.current)
        return state.withLock { $0.thread == current }
    }

    /// Jobs queued and not yet taken by the thread (for tests).
    var pendingJobCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Whether close has begun (for tests).
    var isClosing: Bool {
        state.withLock { $0.closing }
    }

    /// Whether the thread is waiting for a group to fill (for tests).
    var isGathering: Bool {
        state.withLock { $0.gathering.isGathering }
    }

    // MARK: - Thread side

    private func threadMain(
        open: @Sendable () throws -> SQLiteConnection, opened: CheckedContinuation<Void, any Error>
    ) {
        state.withLock { $0.thread = ObjectIdentifier(Thread.current) }
        let connection: SQLiteConnection
        do {
            connection = try open()
        } catch {
            state.withLock { state in
                state.closing = true
                state.closeResult = .success(())
            }
            opened.resume(throwing: error)
            return
        }
        opened.resume()
        while true {
            switch nextWork() {
            case .single(let job):
                job(connection)
                // A job must never leave a transaction open for the next one.
                connection.rollbackIgnoringErrors()
                connection.checkpointIfDue()
            case .gather(let deadline):
                let now = nanoseconds()
                if deadline > now {
                    _ = wakeup.wait(timeout: .now() + .nanoseconds(Int(min(deadline - now, UInt64(Int.max)))))
                }
            case .batch(let jobs):
                runBatch(jobs, on: connection)
                connection.rollbackIgnoringErrors()
                // After the callers were resumed: their answers do not wait for the checkpoint.
                connection.checkpointIfDue()
            case .shutdown:
                let result: Result<Void, StorageError>
                do {
                    try connection.close()
                    result = .success(())
                } catch let error as StorageError {
                    result = .failure(error)
                } catch {
                    result = .failure(StorageError(.sqlite, "close failed", underlying: error))
                }
                let waiters = state.withLock { state in
                    state.closeResult = result
                    state.thread = nil
                    defer { state.closeWaiters.removeAll() }
                    return state.closeWaiters
                }
                for waiter in waiters {
                    waiter.resume(with: result.mapError { $0 })
                }
                return
            }
        }
    }

    /// Blocks until there is work. A queued single job runs alone; otherwise every queued group job (up to the
    /// batch limit) is taken at once, unless the gathering window says to wait for more first (never while a
    /// single job or a close is waiting). Shutdown comes only after the queue is drained.
    private func nextWork() -> Work {
        while true {
            let work = state.withLock { state -> Work? in
                // Awake now: a submitter must signal again before the next wait.
                state.idle = false
                if gatheringEnabled, case .grouped(let oldest) = state.queue.first, !state.closing,
                    !state.queue.containsSingle
                {
                    let action = state.gathering.next(
                        queued: state.queue.count, oldestArrival: oldest.arrival, now: nanoseconds())
                    if case .wait(let deadline) = action {
                        state.idle = true
                        return .gather(until: deadline)
                    }
                }
                switch state.queue.take(maximumBatchSize: maximumBatchSize) {
                case .single(let job):
                    return .single(job)
                case .batch(let batch):
                    if gatheringEnabled {
                        state.gathering.taken(groupSize: batch.count)
                    }
                    return .batch(batch)
                case nil:
                    break
                }
                if state.closing {
                    return .shutdown
                }
                state.idle = true
                return nil
            }
            if let work {
                return work
            }
            wakeup.wait()
        }
    }

    /// Puts group jobs that never ran back at the head of the queue.
    private func requeueFront(_ jobs: [GroupJob]) {
        guard !jobs.isEmpty else { return }
        state.withLock { state in
            state.queue.requeueFront(jobs)
        }
    }

    private struct JobThrew: Error {}

    /// Runs `jobs` in one `BEGIN IMMEDIATE … COMMIT`, each in its own savepoint, and resumes every caller
    /// only after the outcome of `COMMIT` is known.
    private func runBatch(_ jobs: [GroupJob], on connection: SQLiteConnection) {
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            let error = StorageError.wrapping(error, context: "group commit BEGIN")
            record(committed: 0, failed: jobs.count, batchSize: jobs.count, didCommit: false)
            for job in jobs {
                job.finish(error)
            }
            return
        }

        // For each job that ran: true if its closure returned, false if it threw (and was rolled back).
        var succeeded: [Bool] = []
        succeeded.reserveCapacity(jobs.count)
        for job in jobs {
            var returned: Bool?
            var machineryError: (any Error)?
            do {
                try connection.savepoint {
                    let ok = job.run(connection)
                    returned = ok
                    if !ok {
                        throw JobThrew()
                    }
                }
            } catch is JobThrew {
            } catch {
                machineryError = error
            }
            if machineryError == nil, connection.isInTransaction, let returned {
                succeeded.append(returned)
                continue
            }
            // The batch is broken: a savepoint statement failed, SQLite rolled the whole transaction back
            // (disk full, I/O error), or the job ended the transaction itself.
            abortBatch(
                jobs, succeeded: succeeded, culpritThrew: returned == false, cause: machineryError, on: connection)
            return
        }

        do {
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackIgnoringErrors()
            let error = StorageError.wrapping(error, context: "group commit COMMIT")
            record(committed: 0, failed: jobs.count, batchSize: jobs.count, didCommit: false)
            for (index, job) in jobs.enumerated() {
                job.finish(succeeded[index] ? error : nil)
            }
            return
        }
        let committed = succeeded.filter { $0 }.count
        record(committed: committed, failed: jobs.count - committed, batchSize: jobs.count, didCommit: true)
        for job in jobs {
            job.finish(nil)
        }
    }

    /// Rolls back a broken batch. Jobs that ran are failed (those that threw keep their own error), the job
    /// during which it broke fails, and jobs that never ran are queued again for the next batch.
    private func abortBatch(
        _ jobs: [GroupJob], succeeded: [Bool], culpritThrew: Bool, cause: (any Error)?,
        on connection: SQLiteConnection
    ) {
        connection.rollbackIgnoringErrors()
        let aborted = StorageError(
            .batchAborted,
            "group commit batch aborted (the shared transaction ended early); this job's changes were"
                + " rolled back",
            underlying: cause)
        for (index, ok) in succeeded.enumerated() {
            jobs[index].finish(ok ? aborted : nil)
        }
        let culprit = succeeded.count
        jobs[culprit].finish(culpritThrew ? nil : aborted)
        record(committed: 0, failed: culprit + 1, batchSize: culprit + 1, didCommit: false)
        requeueFront(Array(jobs[(culprit + 1)...]))
    }

    private func record(committed: Int, failed: Int, batchSize: Int, didCommit: Bool) {
        statistics.withLock {
            $0.recordGroup(committed: committed, failed: failed, groupSize: batchSize, didCommit: didCommit)
        }
    }
}

extension StorageError {
    /// `error` itself if it is a ``StorageError``, else a ``Code/sqlite`` error wrapping it.
    static func wrapping(_ error: any Error, context: String) -> StorageError {
        if let error = error as? StorageError {
            return error
        }
        return StorageError(.sqlite, "\(context) failed", underlying: error)
    }
}
