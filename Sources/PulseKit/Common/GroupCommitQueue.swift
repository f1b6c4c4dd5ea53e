/// The queue of a group-commit executor (SQLite's, PostgreSQL's): jobs that run alone, and jobs
/// that share one transaction with the others queued beside them.
///
/// Jobs run in submission order, except that queued group jobs are taken together: when the
/// first queued job is a single job it runs alone; otherwise every queued group job (up to the
/// batch limit) forms the next batch, and the single jobs between them keep their places. Not
/// thread-safe: the executor keeps it under its lock.
package struct GroupCommitQueue<Single, Grouped> {
    /// A queued job.
    package enum Job {
        /// Runs alone.
        case single(Single)
        /// Runs in the next shared transaction.
        case grouped(Grouped)
    }

    /// What the executor runs next.
    package enum Work {
        case single(Single)
        case batch([Grouped])
    }

    private var jobs: [Job] = []

    /// An empty queue.
    package init() {}

    /// How many jobs are queued.
    package var count: Int { jobs.count }

    /// The job that has waited longest.
    package var first: Job? { jobs.first }

    /// Whether a single job is queued.
    package var containsSingle: Bool {
        jobs.contains { if case .single = $0 { true } else { false } }
    }

    /// Queues `job` last.
    package mutating func append(_ job: Job) {
        jobs.append(job)
    }

    /// Puts group jobs that were taken but never ran back at the head, in their order.
    package mutating func requeueFront(_ grouped: [Grouped]) {
        jobs.insert(contentsOf: grouped.map { .grouped($0) }, at: 0)
    }

    /// Takes the next work: the first job alone when it is a single job, else the queued group jobs
    /// (at most `maximumBatchSize`, oldest first); `nil` when the queue is empty.
    package mutating func take(maximumBatchSize: Int) -> Work? {
        guard let first = jobs.first else { return nil }
        if case .single(let job) = first {
            jobs.removeFirst()
            return .single(job)
        }
        var batch: [Grouped] = []
        var rest: [Job] = []
        for job in jobs {
            if case .grouped(let groupJob) = job, batch.count < maximumBatchSize {
                batch.append(groupJob)
            } else {
                rest.append(job)
            }
        }
        jobs = rest
        return .batch(batch)
    }
}

extension GroupCommitQueue: Sendable where Single: Sendable, Grouped: Sendable {}
extension GroupCommitQueue.Job: Sendable where Single: Sendable, Grouped: Sendable {}
extension GroupCommitQueue.Work: Sendable where Single: Sendable, Grouped: Sendable {}
