import PulseKit
import PulseTestSupport
import Testing

@testable import PulseUploader

/// The uploader's clock: a public face over one ``PulseClock``, with or without a monotonic
/// reading shared across processes.
@Suite struct UploaderClockTests {
    @Test func theSystemClockReadsBootTimeOnTheBootsTimeline() throws {
        let clock = UploaderClock.system
        let boot = try #require(ReadingTimeSource.bootIdentifier)
        #expect(clock.timeline == "boot:" + boot)
        let monotonic = PulseClock.system.monotonicMilliseconds()
        let before = PulseClock.bootTime.monotonicMilliseconds()
        let reading = try #require(clock.monotonicMilliseconds())
        let after = PulseClock.bootTime.monotonicMilliseconds()
        #expect(before <= reading && reading <= after)
        // CLOCK_BOOTTIME, not CLOCK_MONOTONIC: never behind the monotonic clock.
        #expect(reading >= monotonic)
        #expect(abs(clock.nowMilliseconds() - PulseClock.system.wallClockMilliseconds()) < 1_000)
    }

    @Test func aManualClockIsReadWithOrWithoutItsMonotonicTimeline() {
        let time = ManualClock(now: .seconds(40), wallClockMilliseconds: 1_700_000_000_000)
        let plain = UploaderClock(time.clock)
        let shared = UploaderClock(time.clock, timeline: "test")
        #expect(plain.monotonicMilliseconds() == nil)
        #expect(plain.timeline == "")
        #expect(shared.monotonicMilliseconds() == 40_000)
        #expect(shared.timeline == "test")
        time.stepWallClock(by: -5_000)
        time.advance(milliseconds: 250)
        #expect(plain.nowMilliseconds() == 1_699_999_995_250)
        #expect(shared.nowMilliseconds() == 1_699_999_995_250)
        #expect(shared.monotonicMilliseconds() == 40_250)
    }

    @Test(arguments: [Int64(0), 1_700_000_000_000, -1])
    func closureClocksReadTheirClosures(wall: Int64) {
        let plain = UploaderClock { wall }
        #expect(plain.nowMilliseconds() == wall)
        #expect(plain.monotonicMilliseconds() == nil)
        let shared = UploaderClock({ wall }, monotonicMilliseconds: { wall / 2 }, timeline: "boot:x")
        #expect(shared.nowMilliseconds() == wall)
        #expect(shared.monotonicMilliseconds() == wall / 2)
        #expect(shared.timeline == "boot:x")
    }

    /// The foreground loop's sleep runs on the clock the uploader clock was made from.
    @Test func sleepsRunOnTheGivenClock() async throws {
        let time = ManualClock()
        let clock = UploaderClock(time.clock)
        let sleeper = Task { try await clock.sleep(milliseconds: 500) }
        #expect(await time.waitForSleepers(1))
        #expect(time.sleeperDeadlines == [.milliseconds(500)])
        time.advance(milliseconds: 500)
        try await sleeper.value
    }
}
