import PulseKit
import Testing

@testable import PulseClient

@Suite("Reconnect backoff, window cap and heartbeat clamp")
struct BackoffTests {
    @Test("the delay cap doubles from 1 s and stops at 5 min")
    func capSequence() {
        let policy = PulseReconnectPolicy()
        let caps = (0..<12).map { ReconnectBackoff.cap(failures: $0, policy: policy) }
        #expect(
            caps == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { Duration.seconds($0) })
        #expect(ReconnectBackoff.cap(failures: 10_000, policy: policy) == .seconds(300))
    }

    @Test("full jitter: every delay lies in [0, cap] and the spread covers the range")
    func jitterBounds() {
        var backoff = ReconnectBackoff(policy: PulseReconnectPolicy(), random: RandomSource(seed: 42))
        for failures in 0..<14 {
            let cap = backoff.currentCap
            #expect(cap == ReconnectBackoff.cap(failures: failures, policy: backoff.policy))
            let delay = backoff.failureDelay()
            #expect(delay >= .zero && delay <= cap)
        }
        // Many draws at the same cap: all in range, and both halves of the range are hit.
        let sampler = ReconnectBackoff(policy: PulseReconnectPolicy(), random: RandomSource(seed: 7))
        let draws = (0..<2000).map { _ in sampler.jitter(upTo: .seconds(8)) }
        #expect(draws.allSatisfy { $0 >= .zero && $0 <= .seconds(8) })
        #expect(draws.contains { $0 < .seconds(1) })
        #expect(draws.contains { $0 > .seconds(7) })
    }

    @Test("the extremes of the generator give exactly 0 and exactly the cap")
    func jitterExtremes() {
        var low = ReconnectBackoff(policy: PulseReconnectPolicy(), random: RandomSource { 0 })
        var high = ReconnectBackoff(policy: PulseReconnectPolicy(), random: RandomSource { .max })
        var lows: [Duration] = []
        var highs: [Duration] = []
        for _ in 0..<11 {
            lows.append(low.failureDelay())
            highs.append(high.failureDelay())
        }
        #expect(lows.allSatisfy { $0 == .zero })
        #expect(highs == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300].map { Duration.seconds($0) })
        high.reset()
        #expect(high.failureDelay() == .seconds(1))
        var zero = ReconnectBackoff(policy: PulseReconnectPolicy(initialDelay: .zero), random: RandomSource(seed: 1))
        #expect(zero.failureDelay() == .zero)
    }

    @Test("at most N attempts start within a sliding window")
    func windowCap() {
        let policy = PulseReconnectPolicy(maxAttemptsPerWindow: 3, window: .seconds(600))
        var backoff = ReconnectBackoff(policy: policy, random: RandomSource(seed: 1))
        #expect(backoff.windowAllows(at: .zero) == .zero)
        backoff.recordAttempt(at: .seconds(0))
        backoff.recordAttempt(at: .seconds(10))
        #expect(backoff.windowAllows(at: .seconds(20)) == .seconds(20))
        backoff.recordAttempt(at: .seconds(20))
        // Three attempts within the window: the next may start when the oldest leaves it.
        #expect(backoff.windowAllows(at: .seconds(30)) == .seconds(600))
        #expect(backoff.windowAllows(at: .seconds(599)) == .seconds(600))
        #expect(backoff.windowAllows(at: .seconds(600)) == .seconds(600))
        backoff.recordAttempt(at: .seconds(600))
        #expect(backoff.attemptTimes == [.seconds(10), .seconds(20), .seconds(600)])
        #expect(backoff.windowAllows(at: .seconds(601)) == .seconds(610))
        #expect(backoff.windowAllows(at: .seconds(5000)) == .seconds(5000))
        #expect(backoff.attemptTimes.isEmpty)
    }

    @Test("the heartbeat interval follows the server, clamped to 15 s - 5 min")
    func heartbeatClamp() {
        #expect(HeartbeatInterval.clamped(milliseconds: 60_000) == .seconds(60))
        #expect(HeartbeatInterval.clamped(milliseconds: 15_000) == .seconds(15))
        #expect(HeartbeatInterval.clamped(milliseconds: 14_999) == .seconds(15))
        #expect(HeartbeatInterval.clamped(milliseconds: 1) == .seconds(15))
        #expect(HeartbeatInterval.clamped(milliseconds: 0) == .seconds(15))
        #expect(HeartbeatInterval.clamped(milliseconds: -5) == .seconds(15))
        #expect(HeartbeatInterval.clamped(milliseconds: 300_000) == .seconds(300))
        #expect(HeartbeatInterval.clamped(milliseconds: 300_001) == .seconds(300))
        #expect(HeartbeatInterval.clamped(milliseconds: .max) == .seconds(300))
        #expect(HeartbeatInterval.clamped(milliseconds: 90_500) == .milliseconds(90_500))
    }
}
