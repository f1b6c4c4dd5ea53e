import Foundation
import PulseKit
import Synchronization
import Testing

@testable import PulseStorage

/// The gathering window's state machine, driven with explicit times (nanoseconds): no clock, no sleeps.
@Suite struct GatheringStateMachineTests {
    private static let window: UInt64 = 500_000
    private func machine(window: UInt64 = Self.window, groupSize: Int = 8) -> GatheringStateMachine {
        GatheringStateMachine(GroupGathering(window: window, groupSize: groupSize))
    }

    @Test func offAlwaysCommits() {
        var machine = machine(window: 0)
        for time in stride(from: UInt64(0), to: 10_000, by: 1_000) {
            machine.arrived(at: time)
            #expect(machine.next(queued: 1, oldestArrival: time, now: time) == .commit)
            #expect(!machine.isGathering)
            #expect(machine.wakesThread(queued: 1))
            machine.taken(groupSize: 1)
        }
        #expect(GroupGathering.off.window == 0)
    }

    @Test func theFirstJobEverCommitsAtOnce() {
        var machine = machine()
        machine.arrived(at: 1_000)
        #expect(machine.next(queued: 1, oldestArrival: 1_000, now: 1_000) == .commit)
        #expect(!machine.isGathering)
    }

    @Test func aLoneJobAfterAPauseCommitsAtOnce() {
        var machine = machine()
        machine.arrived(at: 0)
        #expect(machine.next(queued: 1, oldestArrival: 0, now: 0) == .commit)
        machine.taken(groupSize: 1)
        // The next job comes one nanosecond more than a window later: nothing says more are coming.
        let later = Self.window + 1
        machine.arrived(at: later)
        #expect(machine.next(queued: 1, oldestArrival: later, now: later) == .commit)
        #expect(!machine.isGathering)
        // The same after a group of several: the long gap alone says the burst is over.
        machine.taken(groupSize: 5)
        let pause = later + Self.window + 1
        machine.arrived(at: pause)
        #expect(machine.next(queued: 1, oldestArrival: pause, now: pause) == .commit)
    }

    @Test func aGapOfExactlyTheWindowGathers() {
        var machine = machine()
        machine.arrived(at: 0)
        // The job at 0 was the last of a group of two.
        machine.taken(groupSize: 2)
        machine.arrived(at: Self.window)
        #expect(machine.next(queued: 1, oldestArrival: Self.window, now: Self.window) == .wait(until: 2 * Self.window))
    }

    @Test func aSequentialClientIsNeverDelayed() {
        var machine = machine()
        // One job in flight at a time, every gap far below the window: each group is a single job.
        var time: UInt64 = 0
        for _ in 0..<100 {
            machine.arrived(at: time)
            #expect(machine.next(queued: 1, oldestArrival: time, now: time) == .commit)
            #expect(!machine.isGathering)
            #expect(machine.wakesThread(queued: 1))
            machine.taken(groupSize: 1)
            time += Self.window / 10
        }
        #expect(machine.lastGroupSize == 1)
    }

    @Test func twoQueuedJobsGatherWithoutAnEarlierGroup() {
        var machine = machine()
        machine.arrived(at: 0)
        machine.arrived(at: 10_000)
        // Nothing was committed yet, but two jobs in flight at once are evidence of concurrency.
        #expect(machine.next(queued: 2, oldestArrival: 0, now: 10_000) == .wait(until: Self.window))
        #expect(machine.isGathering)
    }

    @Test func afterAGroupOfSeveralALoneJobGathersOnce() {
        var machine = machine()
        machine.arrived(at: 0)
        machine.arrived(at: 1_000)
        machine.arrived(at: 2_000)
        #expect(machine.next(queued: 3, oldestArrival: 0, now: 0) == .wait(until: Self.window))
        #expect(machine.next(queued: 3, oldestArrival: 0, now: Self.window) == .commit)
        machine.taken(groupSize: 3)
        #expect(machine.lastGroupSize == 3)
        // Load stops: the next job is alone, but the previous group says more may come, so it waits once.
        let lone = Self.window + 1_000
        machine.arrived(at: lone)
        #expect(machine.next(queued: 1, oldestArrival: lone, now: lone) == .wait(until: lone + Self.window))
        #expect(machine.next(queued: 1, oldestArrival: lone, now: lone + Self.window) == .commit)
        machine.taken(groupSize: 1)
        // Its group of one turns gathering off: the following lone jobs commit at once, gaps short or not.
        var time = lone + Self.window + 1_000
        for _ in 0..<5 {
            machine.arrived(at: time)
            #expect(machine.next(queued: 1, oldestArrival: time, now: time) == .commit)
            machine.taken(groupSize: 1)
            time += 1_000
        }
    }

    @Test func shortGapsGatherUntilTheDeadline() {
        var machine = machine()
        machine.arrived(at: 0)
        machine.arrived(at: 1)
        #expect(machine.next(queued: 2, oldestArrival: 0, now: Self.window) == .commit)
        machine.taken(groupSize: 2)
        machine.arrived(at: 100_000)
        // The deadline counts from the oldest queued job's arrival, not from when the thread looks.
        #expect(machine.next(queued: 1, oldestArrival: 100_000, now: 150_000) == .wait(until: 600_000))
        #expect(machine.isGathering)
        #expect(machine.deadline == 600_000)
        // A new job below the group size does not wake the thread; it keeps the same deadline.
        machine.arrived(at: 200_000)
        #expect(!machine.wakesThread(queued: 2))
        #expect(machine.next(queued: 2, oldestArrival: 100_000, now: 200_000) == .wait(until: 600_000))
        #expect(machine.next(queued: 2, oldestArrival: 100_000, now: 599_999) == .wait(until: 600_000))
        #expect(machine.next(queued: 2, oldestArrival: 100_000, now: 600_000) == .commit)
        #expect(!machine.isGathering)
        machine.taken(groupSize: 2)
        #expect(machine.deadline == nil)
    }

    @Test func aFullGroupCommitsAtOnce() {
        var machine = machine(groupSize: 3)
        machine.arrived(at: 0)
        machine.arrived(at: 10)
        machine.arrived(at: 20)
        #expect(machine.next(queued: 3, oldestArrival: 0, now: 20) == .commit)
        machine.taken(groupSize: 3)
        // Mid-gathering: the job that fills the group wakes the thread, which then commits.
        machine.arrived(at: 30)
        #expect(machine.next(queued: 1, oldestArrival: 30, now: 30) == .wait(until: 30 + Self.window))
        machine.arrived(at: 40)
        #expect(!machine.wakesThread(queued: 2))
        #expect(machine.next(queued: 2, oldestArrival: 30, now: 40) == .wait(until: 30 + Self.window))
        machine.arrived(at: 50)
        #expect(machine.wakesThread(queued: 3))
        #expect(machine.next(queued: 3, oldestArrival: 30, now: 50) == .commit)
        #expect(!machine.isGathering)
        // More than the group size (jobs queued behind a long commit) commits too.
        machine.arrived(at: 60)
        #expect(machine.next(queued: 9, oldestArrival: 55, now: 60) == .commit)
    }

    @Test func jobsThatAlreadyWaitedAWindowCommitAtOnce() {
        var machine = machine()
        machine.arrived(at: 1_000_000)
        machine.arrived(at: 1_000_010)
        // Queued behind a slow commit: the oldest arrived more than a window ago.
        #expect(machine.next(queued: 2, oldestArrival: 1_000_000, now: 1_000_000 + Self.window) == .commit)
        #expect(!machine.isGathering)
    }

    @Test func aGroupSizeOfOneNeverGathers() {
        var machine = machine(groupSize: 0)
        machine.arrived(at: 0)
        machine.arrived(at: 1)
        #expect(machine.next(queued: 2, oldestArrival: 0, now: 1) == .commit)
        #expect(GroupGathering(window: 1, groupSize: -3).groupSize == 1)
    }

    @Test func extremeTimesNeitherTrapNorWaitForever() {
        var machine = machine(window: UInt64.max, groupSize: 4)
        machine.arrived(at: UInt64.max - 1)
        machine.arrived(at: UInt64.max)
        #expect(machine.next(queued: 2, oldestArrival: UInt64.max, now: UInt64.max) == .commit)
        var stepped = self.machine()
        // A clock read that goes backwards counts as a zero gap.
        stepped.arrived(at: 5_000)
        stepped.arrived(at: 4_000)
        #expect(stepped.next(queued: 2, oldestArrival: 4_000, now: 4_000) == .wait(until: 4_000 + Self.window))
    }
}

/// The executor with a gathering window and a stepped clock.
@Suite struct GroupGatheringExecutorTests {
    /// A nanosecond clock the test steps; counts how often the executor reads it.
    final class SteppedClock: Sendable {
        private let state = Mutex((now: UInt64(1_000_000_000), reads: 0))
        var reads: Int { state.withLock { $0.reads } }
        func read() -> UInt64 {
            state.withLock { state in
                state.reads += 1
                return state.now
            }
        }
        func advance(_ nanoseconds: UInt64) { state.withLock { $0.now += nanoseconds } }
    }

    private func makeExecutor(
        _ database: TemporaryDatabase, clock: SteppedClock, window: UInt64, groupSize: Int
    ) async throws -> SQLiteExecutor {
        let executor = try await SQLiteExecutor(
            path: database.path, gathering: GroupGathering(window: window, groupSize: groupSize),
            nanoseconds: { clock.read() })
        try await executor.write { try $0.execute("CREATE TABLE item(value INTEGER NOT NULL)") }
        return executor
    }

    private func count(_ executor: SQLiteExecutor) async throws -> Int {
        try await executor.read { connection in
            try connection.queryFirst("SELECT count(*) FROM item") { try $0.column(0, as: Int.self) } ?? 0
        }
    }

    /// Starts a commit job inserting `value`, and waits until it is queued behind the gathering thread.
    private func startCommit(
        _ executor: SQLiteExecutor, _ value: Int, queued: Int
    ) async throws -> Task<Void, any Error> {
        let task = Task {
            try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (?)", [value]) }
        }
        try await waitUntil("job \(value) is queued") { executor.pendingJobCount == queued }
        return task
    }

    /// Holds the thread in a single job while `values` are committed behind it, one stepped microsecond apart,
    /// then lets it go: the thread finds them all queued at once, as under concurrent load.
    private func startHeldCommits(
        _ executor: SQLiteExecutor, clock: SteppedClock, _ values: [Int]
    ) async throws -> [Task<Void, any Error>] {
        let gate = ThreadGate()
        let held = Task { try await executor.write { _ in gate.enterAndWait() } }
        try await waitUntil("the gate job runs") { gate.hasEntered }
        var tasks: [Task<Void, any Error>] = []
        for (index, value) in values.enumerated() {
            clock.advance(1_000)
            tasks.append(try await startCommit(executor, value, queued: index + 1))
        }
        gate.open()
        try await held.value
        return tasks
    }

    /// Commits `value` as a lone job, one stepped microsecond after the previous one, and expects the thread to
    /// take it at once: the stepped clock stands still, so a gathering thread would hold it until close.
    private func commitAtOnce(_ executor: SQLiteExecutor, clock: SteppedClock, _ value: Int) async throws {
        clock.advance(1_000)
        let groups = executor.statistics.groupCommits
        let task = Task {
            try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (?)", [value]) }
        }
        try await waitUntil("job \(value) commits without gathering") {
            executor.statistics.groupCommits == groups + 1
        }
        if executor.statistics.groupCommits == groups + 1 {
            try await task.value
        }
    }

    @Test func jobsArrivingCloseTogetherShareOneFsync() async throws {
        let database = try TemporaryDatabase()
        let clock = SteppedClock()
        // A window far longer than the test: only the group size ends this gathering.
        let executor = try await makeExecutor(database, clock: clock, window: 60_000_000_000, groupSize: 3)
        let before = executor.statistics
        // A lone job (nothing arrived before it) is not delayed.
        try await commitAtOnce(executor, clock: clock, 0)
        #expect(executor.statistics.groupCommits - before.groupCommits == 1)

        // Two jobs queued at once: evidence of concurrency, so the thread gathers for a third.
        let held = try await startHeldCommits(executor, clock: clock, [1, 2])
        try await waitUntil("the thread gathers") { executor.isGathering }
        #expect(executor.statistics.groupCommits - before.groupCommits == 1)
        clock.advance(1_000)
        let third = Task {
            try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (3)") }
        }
        for task in held {
            try await task.value
        }
        try await third.value
        let after = executor.statistics
        #expect(after.groupCommits - before.groupCommits == 2)
        #expect(after.groupCommittedJobs - before.groupCommittedJobs == 4)
        #expect(after.largestGroupCommit == 3)
        // Sizes 1 and 3: buckets le=1 and le=4.
        #expect(after.groupSizeCounts[0] - before.groupSizeCounts[0] == 1)
        #expect(after.groupSizeCounts[2] - before.groupSizeCounts[2] == 1)
        #expect(after.groupSizeSum - before.groupSizeSum == 4)
        #expect(try await count(executor) == 4)
        try await executor.close()
    }

    @Test func aSequentialClientIsNeverDelayed() async throws {
        let database = try TemporaryDatabase()
        let clock = SteppedClock()
        // Every gap (1 µs) is far below the window, yet one job at a time is no evidence of concurrency.
        let executor = try await makeExecutor(database, clock: clock, window: 60_000_000_000, groupSize: 100)
        for value in 0..<20 {
            try await commitAtOnce(executor, clock: clock, value)
        }
        #expect(!executor.isGathering)
        #expect(executor.statistics.groupCommits == 20)
        #expect(executor.statistics.groupSizeCounts[0] == 20)
        #expect(try await count(executor) == 20)
        try await executor.close()
    }

    @Test func afterAGroupOfSeveralALoneJobGathersOnce() async throws {
        let clock = SteppedClock()
        let window: UInt64 = 20_000_000
        let database = try TemporaryDatabase()
        let executor = try await makeExecutor(database, clock: clock, window: window, groupSize: 3)
        let held = try await startHeldCommits(executor, clock: clock, [0, 1])
        try await waitUntil("the thread gathers the two") { executor.isGathering }
        // A third job, a stepped microsecond later, fills the group.
        clock.advance(1_000)
        let third = Task { try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (2)") } }
        for task in held + [third] {
            try await task.value
        }
        #expect(executor.statistics.groupCommits == 1)
        #expect(executor.statistics.largestGroupCommit == 3)

        // The group of three says more may come: the next lone job (a short gap later) waits for the window,
        // once.
        clock.advance(1_000)
        let lone = try await startCommit(executor, 3, queued: 1)
        try await waitUntil("the thread gathers the lone job") { executor.isGathering }
        clock.advance(window)
        try await lone.value
        #expect(executor.statistics.groupCommits == 2)
        // Its group of one turns gathering off: later lone jobs commit at once, however short their gaps.
        for value in 4..<9 {
            try await commitAtOnce(executor, clock: clock, value)
        }
        #expect(executor.statistics.groupCommits == 7)
        #expect(try await count(executor) == 9)
        try await executor.close()
    }

    @Test func theDeadlineOfTheSteppedClockEndsTheGathering() async throws {
        let database = try TemporaryDatabase()
        let clock = SteppedClock()
        // 20 ms: the thread sleeps at most that long in real time before it reads the clock again.
        let window: UInt64 = 20_000_000
        let executor = try await makeExecutor(database, clock: clock, window: window, groupSize: 100)
        try await commitAtOnce(executor, clock: clock, 0)
        let jobs = try await startHeldCommits(executor, clock: clock, [1, 2])
        try await waitUntil("the thread gathers") { executor.isGathering }
        // While the stepped clock stands still, real time passing does not end the window.
        let reads = clock.reads
        try await waitUntil("the thread looked at the clock three more times") { clock.reads >= reads + 3 }
        #expect(executor.isGathering)
        #expect(executor.pendingJobCount == 2)
        clock.advance(window)
        for job in jobs {
            try await job.value
        }
        #expect(!executor.isGathering)
        #expect(try await count(executor) == 3)
        #expect(executor.statistics.groupCommits == 2)
        try await executor.close()
    }

    @Test func closeAndSingleJobsDoNotWaitForTheWindow() async throws {
        let database = try TemporaryDatabase()
        let clock = SteppedClock()
        let executor = try await makeExecutor(database, clock: clock, window: 60_000_000_000, groupSize: 100)
        try await commitAtOnce(executor, clock: clock, 0)
        let gathered = try await startHeldCommits(executor, clock: clock, [1, 2])
        try await waitUntil("the thread gathers") { executor.isGathering }
        // A read queued behind the gathering group makes it commit now, then runs.
        #expect(try await count(executor) == 3)
        for job in gathered {
            try await job.value
        }

        // After that group of two, a lone job gathers (once).
        clock.advance(1_000)
        let last = try await startCommit(executor, 3, queued: 1)
        try await waitUntil("the thread gathers again") { executor.isGathering }
        // Close commits the gathering group at once instead of after a minute.
        try await executor.close()
        try await last.value
        let reopened = try await SQLiteExecutor(path: database.path)
        #expect(try await count(reopened) == 4)
        try await reopened.close()
    }

    @Test func gatheringIsOffByDefault() async throws {
        let database = try TemporaryDatabase()
        let executor = try await SQLiteExecutor(path: database.path)
        try await executor.write { try $0.execute("CREATE TABLE item(value INTEGER NOT NULL)") }
        for value in 0..<3 {
            try await executor.commit { try $0.execute("INSERT INTO item(value) VALUES (?)", [value]) }
        }
        #expect(!executor.isGathering)
        #expect(executor.statistics.groupCommits == 3)
        #expect(executor.statistics.groupSizeCounts[0] == 3)
        try await executor.close()
    }
}
