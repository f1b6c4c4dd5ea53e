/// How long a group commit may wait for more jobs before its one `COMMIT` (its one fsync).
///
/// Without gathering, the executor's thread commits whatever is queued the moment it becomes free: at a
/// moderate arrival rate and a fast disk that is only one or two jobs per fsync. With gathering, when the
/// recent arrivals say more jobs are coming, the thread waits up to ``window`` after the oldest queued job
/// arrived, or until ``groupSize`` jobs are queued, whichever comes first.
///
/// It gathers only with evidence of concurrency: the previous group carried at least two jobs, or at least
/// two are queued now; and the last gap between two arrivals was at most the window. A sequential client
/// (one request in flight at a time) never has two jobs queued, so its groups are all of one job and it is
/// never delayed, however short its gaps; under load the groups hold several jobs and gathering stays on.
/// When load stops, the first lone job may wait once (its group of one then turns gathering off).
///
/// The cost is bounded: no job waits more than ``window`` for the gathering (on top of the commit itself).
package struct GroupGathering: Sendable, Equatable {
    /// The most time, in nanoseconds, a group waits for more jobs after its oldest job arrived; 0 turns
    /// gathering off.
    package var window: UInt64
    /// Gathering stops once this many jobs are queued (at least 1).
    package var groupSize: Int

    /// Creates a setting; a `groupSize` below 1 counts as 1.
    package init(window: UInt64, groupSize: Int) {
        self.window = window
        self.groupSize = max(1, groupSize)
    }

    /// No gathering: the executor commits what is queued as soon as its thread is free.
    package static let off = GroupGathering(window: 0, groupSize: 1)
}

/// The decisions of the gathering window, as a state machine fed with events and times (nanoseconds of a
/// monotonic clock) and returning actions; it never reads a clock or blocks itself.
///
/// The executor's thread calls ``arrived(at:)`` for every group job as it is queued (under the queue's
/// lock), ``next(queued:oldestArrival:now:)`` whenever it is free and group jobs are queued, and
/// ``taken(groupSize:)`` when it takes a group. Submitters ask ``wakesThread(queued:)`` whether a new job
/// is worth waking a gathering thread for.
struct GatheringStateMachine: Sendable {
    enum Action: Equatable, Sendable {
        /// Take the queued jobs and commit them now.
        case commit
        /// Wait (until this time, or until woken) and ask again.
        case wait(until: UInt64)
    }

    private let configuration: GroupGathering
    /// The arrival time of the latest group job.
    private var lastArrival: UInt64?
    /// The gap between the latest two arrivals.
    private var lastGap: UInt64?
    /// How many jobs the latest group taken carried (0 before the first).
    private(set) var lastGroupSize = 0
    /// Set while the thread waits for the current group to fill.
    private(set) var deadline: UInt64?

    init(_ configuration: GroupGathering) {
        self.configuration = configuration
    }

    /// Whether the thread is waiting for more jobs.
    var isGathering: Bool { deadline != nil }

    /// Records that a group job was queued at `now`.
    mutating func arrived(at now: UInt64) {
        if let lastArrival {
            lastGap = now >= lastArrival ? now - lastArrival : 0
        }
        lastArrival = now
    }

    /// Whether a submitter that just queued a job (making `queued` group jobs) must wake the thread: always
    /// when it is not gathering, and while gathering only once the group is full.
    func wakesThread(queued: Int) -> Bool {
        !isGathering || queued >= configuration.groupSize
    }

    /// What the free thread does with `queued` group jobs, the oldest of which arrived at `oldestArrival`.
    mutating func next(queued: Int, oldestArrival: UInt64, now: UInt64) -> Action {
        let window = configuration.window
        guard window > 0, queued < configuration.groupSize else { return commit() }
        if deadline == nil {
            // Gather only with evidence of concurrency (more than one job in flight now or in the previous
            // group) and when the recent arrivals say more jobs are coming soon.
            guard queued >= 2 || lastGroupSize >= 2 else { return commit() }
            guard let lastGap, lastGap <= window else { return commit() }
            let (sum, overflow) = oldestArrival.addingReportingOverflow(window)
            deadline = overflow ? UInt64.max : sum
        }
        guard let deadline, now < deadline else { return commit() }
        return .wait(until: deadline)
    }

    /// Records that `groupSize` queued jobs were taken as a group (committed or not).
    mutating func taken(groupSize: Int) {
        deadline = nil
        lastGroupSize = groupSize
    }

    private mutating func commit() -> Action {
        deadline = nil
        return .commit
    }
}
