import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@Suite struct ClockTests {
    @Test(arguments: [
        (Duration.zero, Int64(0)), (.milliseconds(1), 1), (.microseconds(1_999), 1), (.seconds(3), 3_000),
        (.microseconds(-1), -1), (.milliseconds(-1_500), -1_500),
    ])
    func instantMillisecondsRoundDown(sinceOrigin: Duration, milliseconds: Int64) {
        #expect(PulseInstant(sinceOrigin: sinceOrigin).milliseconds == milliseconds)
    }

    @Test func instantArithmetic() {
        let start = PulseInstant(sinceOrigin: .seconds(5))
        #expect(start.advanced(by: .seconds(2)).sinceOrigin == .seconds(7))
        #expect(start.duration(to: PulseInstant(sinceOrigin: .seconds(4))) == .seconds(-1))
        #expect(start < start.advanced(by: .nanoseconds(1)))
    }

    @Test func systemClockReadsBothTimelines() async throws {
        let clock = PulseClock.system
        let wall = clock.wallClockMilliseconds()
        #expect(wall > 1_600_000_000_000)
        let start = clock.now
        try await clock.sleep(for: .milliseconds(20))
        #expect(start.duration(to: clock.now) >= .milliseconds(20))
        // A deadline in the past returns at once.
        try await clock.sleep(until: start)
    }

    @Test func bootTimeClockReadsTheBootTimeline() async throws {
        let clock = PulseClock.bootTime
        // CLOCK_BOOTTIME is CLOCK_MONOTONIC plus the time suspended: never behind it.
        let monotonic = PulseClock.system.now
        #expect(clock.now.sinceOrigin >= monotonic.sinceOrigin)
        #expect(abs(clock.wallClockMilliseconds() - PulseClock.system.wallClockMilliseconds()) < 1_000)
        let boot = try #require(ReadingTimeSource.bootIdentifier)
        #expect(boot.count == 36 && boot.split(separator: "-").count == 5)
        // Its sleeps last as long as asked on the real timer thread (the real clock is under test).
        let start = clock.now
        try await clock.sleep(for: .milliseconds(20))
        #expect(start.duration(to: clock.now) >= .milliseconds(20))
        try await clock.sleep(until: start)
        let sleeper = Task { try await clock.sleep(for: .seconds(3_600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    /// A source over supplied readings reports them; a deadline the timeline has reached returns at once.
    @Test(arguments: [(Duration.zero, Int64(0)), (.milliseconds(1_500), 1_700_000_000_000), (.seconds(-2), -5)])
    func readingSourceReportsItsReadings(monotonic: Duration, wall: Int64) async throws {
        let clock = PulseClock(ReadingTimeSource(monotonic: { monotonic }, wallClockMilliseconds: { wall }))
        #expect(clock.now.sinceOrigin == monotonic)
        #expect(clock.wallClockMilliseconds() == wall)
        #expect(clock.monotonicMilliseconds() == PulseInstant(sinceOrigin: monotonic).milliseconds)
        try await clock.sleep(until: clock.now)
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)))
    }

    @Test func systemSleepersWakeInDeadlineOrder() async throws {
        let order = Recorder()
        let clock = PulseClock.system
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for (index, delay) in [60, 20, 40].enumerated() {
                group.addTask {
                    try? await clock.sleep(until: start.advanced(by: .milliseconds(delay)))
                    order.append(index)
                }
            }
        }
        #expect(order.values == [1, 2, 0])
        #expect(start.duration(to: clock.now) >= .milliseconds(60))
    }

    @Test func cancellingASystemSleepThrows() async {
        let sleeper = Task { try await PulseClock.system.sleep(for: .seconds(3_600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test func manualClockWakesSleepersOnlyWhenAdvanced() async throws {
        let time = ManualClock()
        let clock = time.clock
        let woke = Recorder()
        let sleepers = Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, delay) in [3, 1, 2].enumerated() {
                    group.addTask {
                        try? await clock.sleep(until: clock.now.advanced(by: .seconds(delay)))
                        woke.append(index)
                    }
                }
            }
        }
        #expect(await time.waitForSleepers(3))
        #expect(time.sleeperDeadlines == [.seconds(1), .seconds(2), .seconds(3)])
        time.advance(by: .milliseconds(1_500))
        #expect(await eventually { woke.values == [1] })
        #expect(time.sleeperDeadlines == [.seconds(2), .seconds(3)])
        time.advance(to: .seconds(3))
        await sleepers.value
        #expect(Set(woke.values) == [0, 1, 2])
        #expect(clock.now.sinceOrigin == .seconds(3))
        #expect(clock.wallClockMilliseconds() == 1_700_000_003_000)
    }

    @Test func manualWallClockStepsAlone() async throws {
        let time = ManualClock(now: .seconds(10), wallClockMilliseconds: 5_000)
        time.stepWallClock(by: -4_000)
        #expect(time.clock.wallClockMilliseconds() == 1_000)
        #expect(time.clock.monotonicMilliseconds() == 10_000)
        time.advance(milliseconds: 250)
        #expect(time.clock.wallClockMilliseconds() == 1_250)
        #expect(time.clock.monotonicMilliseconds() == 10_250)
        time.advance(by: .seconds(-5))
        #expect(time.clock.monotonicMilliseconds() == 10_250)
    }

    @Test func cancellingAManualSleepThrows() async {
        let time = ManualClock()
        let sleeper = Task { try await time.clock.sleep(for: .seconds(1)) }
        #expect(await time.waitForSleepers(1))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(time.sleeperDeadlines.isEmpty)
    }

    @Test func eventuallyReportsAConditionThatNeverHolds() async {
        let start = ContinuousClock.now
        #expect(await eventually(within: .milliseconds(50)) { false } == false)
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        #expect(await eventually { true })
    }
}

/// The order in which concurrent tasks finished.
private final class Recorder: Sendable {
    private let state = Mutex<[Int]>([])

    func append(_ value: Int) { state.withLock { $0.append(value) } }

    var values: [Int] { state.withLock { $0 } }
}
