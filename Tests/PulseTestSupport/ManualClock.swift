package import PulseKit
import Synchronization

/// The one test clock: a ``TimeSource`` that moves only when the test says so.
///
/// ``advance(by:)`` moves the monotonic timeline and the wall clock together and wakes every task
/// sleeping until a time it reached, earliest deadline first; ``stepWallClock(by:)`` moves the
/// wall clock alone (a clock step: the monotonic timeline, and so every in-process wait, stays).
/// Inject ``clock`` where a component takes a `PulseClock`, then step time instead of sleeping:
///
/// ```swift
/// let time = ManualClock()
/// let gateway = try await start(clock: time.clock)
/// time.advance(by: .seconds(2))            // the retry after a 2 s backoff is due now
/// #expect(await eventually { upstream.requests.count == 2 })
/// ```
package final class ManualClock: TimeSource {
    private struct State {
        var now: Duration
        var wallClockMilliseconds: Int64
    }

    private let state: Mutex<State>
    private let sleepers = SleeperQueue()

    /// Creates a clock at monotonic `now` and wall time `wallClockMilliseconds` (epoch ms).
    package init(now: Duration = .zero, wallClockMilliseconds: Int64 = 1_700_000_000_000) {
        state = Mutex(State(now: now, wallClockMilliseconds: wallClockMilliseconds))
    }

    /// This source as the clock components take.
    package var clock: PulseClock { PulseClock(self) }

    package var now: Duration { state.withLock { $0.now } }

    package var wallClockMilliseconds: Int64 { state.withLock { $0.wallClockMilliseconds } }

    package func sleep(until deadline: Duration) async throws {
        try await sleepers.sleep(until: deadline, now: { self.now })
    }

    /// Moves both clocks forward by `duration` (the wall clock by its whole milliseconds) and
    /// wakes every sleeper that is due. A negative `duration` does nothing.
    package func advance(by duration: Duration) {
        guard duration > .zero else { return }
        let now = state.withLock { state -> Duration in
            state.now += duration
            state.wallClockMilliseconds += Backoff.milliseconds(duration)
            return state.now
        }
        sleepers.wake(upTo: now)
    }

    /// Moves both clocks forward by `milliseconds`.
    package func advance(milliseconds: Int64) {
        advance(by: .milliseconds(milliseconds))
    }

    /// Moves both clocks forward until the monotonic time is `time` (nothing when already past it).
    package func advance(to time: Duration) {
        advance(by: time - now)
    }

    /// Steps the wall clock alone by `milliseconds` (negative: back), as an NTP step or an
    /// operator would; the monotonic timeline and the sleepers do not notice.
    package func stepWallClock(by milliseconds: Int64) {
        state.withLock { $0.wallClockMilliseconds += milliseconds }
    }

    /// Moves the monotonic timeline alone by `duration`, backwards too: a faked clock (libfaketime
    /// without `FAKETIME_DONT_FAKE_MONOTONIC`) jumping. A forward jump wakes the sleepers it
    /// passes; a backward one leaves them waiting for the later time.
    package func stepMonotonicClock(by duration: Duration) {
        let now = state.withLock { state -> Duration in
            state.now += duration
            return state.now
        }
        sleepers.wake(upTo: now)
    }

    /// The deadlines of the tasks sleeping now, earliest first.
    package var sleeperDeadlines: [Duration] { sleepers.deadlines }

    /// Waits (see ``eventually(within:_:)``) until at least `count` tasks sleep on this clock, so
    /// a test advances time only once the component is waiting on it.
    package func waitForSleepers(_ count: Int = 1) async -> Bool {
        await eventually { self.sleepers.deadlines.count >= count }
    }
}
