import PulseKit
import Testing

@Suite struct BackoffTests {
    static let gatewayDefaults = Backoff(base: .seconds(1), cap: .seconds(60))

    /// The table in ``Backoff``'s doc comment, row by row.
    @Test(
        arguments: [
            (1, 1_000), (2, 2_000), (3, 4_000), (4, 8_000), (5, 16_000), (6, 32_000), (7, 60_000), (8, 60_000),
            (1_000, 60_000), (Int.max, 60_000), (0, 1_000), (-3, 1_000),
        ] as [(Int, Int64)])
    func ceilingFollowsTheTable(failures: Int, milliseconds: Int64) {
        #expect(Self.gatewayDefaults.ceilingMilliseconds(failures: failures) == milliseconds)
        #expect(Self.gatewayDefaults.ceiling(failures: failures) == .milliseconds(milliseconds))
    }

    /// Full jitter: the smallest draw gives no delay, the largest the whole ceiling.
    @Test(arguments: [1, 2, 5, 7, 40])
    func delayCoversZeroToCeiling(failures: Int) {
        let ceiling = Self.gatewayDefaults.ceilingMilliseconds(failures: failures)
        #expect(Self.gatewayDefaults.delayMilliseconds(failures: failures, random: RandomSource { 0 }) == 0)
        #expect(Self.gatewayDefaults.delayMilliseconds(failures: failures, random: RandomSource { .max }) == ceiling)
        let half = Self.gatewayDefaults.delayMilliseconds(failures: failures, random: RandomSource { 1 << 63 })
        #expect(half == (ceiling + 1) / 2)
        let seeded = RandomSource(seed: 7)
        for _ in 0..<200 {
            let delay = Self.gatewayDefaults.delay(failures: failures, random: seeded)
            #expect(delay >= .zero && delay <= .milliseconds(ceiling))
        }
    }

    @Test(arguments: [
        (Duration.zero, Duration.seconds(60), Int64(0)), (.seconds(1), .zero, 0), (.seconds(-1), .seconds(5), 0),
        (.milliseconds(250), .seconds(30), 30_000), (.seconds(Int64.max / 2), .seconds(Int64.max / 2), Int64.max),
    ])
    func degenerateSettingsNeverOverflow(base: Duration, cap: Duration, ceilingAfter50: Int64) {
        #expect(Backoff(base: base, cap: cap).ceilingMilliseconds(failures: 50) == ceilingAfter50)
    }

    @Test func attemptWindowDefersTheAttemptOverTheLimit() {
        var window = AttemptWindow(limit: 2, window: .seconds(10))
        #expect(window.earliestStart(at: .seconds(0)) == .seconds(0))
        window.record(at: .seconds(0))
        window.record(at: .seconds(3))
        // A third attempt waits until the first leaves the window.
        #expect(window.earliestStart(at: .seconds(4)) == .seconds(10))
        #expect(window.earliestStart(at: .seconds(10)) == .seconds(10))
        window.record(at: .seconds(10))
        #expect(window.starts == [.seconds(3), .seconds(10)])
        #expect(window.earliestStart(at: .seconds(11)) == .seconds(13))
        #expect(window.earliestStart(at: .seconds(30)) == .seconds(30))
        #expect(window.starts.isEmpty)
    }
}
