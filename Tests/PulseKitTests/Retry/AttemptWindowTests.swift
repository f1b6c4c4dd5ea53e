import PulseKit
import Testing

@Suite struct AttemptWindowTests {
    /// Taking back the latest attempt frees its place at once, for every limit.
    @Test(arguments: [1, 2, 3, 20])
    func takingBackTheLatestAttemptFreesItsPlace(limit: Int) {
        var window = AttemptWindow(limit: limit, window: .seconds(600))
        for second in 0..<limit { window.record(at: .seconds(second)) }
        let now = Duration.seconds(limit)
        #expect(window.earliestStart(at: now) == .seconds(600))
        #expect(window.takeBackLatest() == .seconds(limit - 1))
        #expect(window.earliestStart(at: now) == now)
        #expect(window.starts.count == limit - 1)
    }

    @Test func takingBackFromAnEmptyWindowDoesNothing() {
        var window = AttemptWindow(limit: 2, window: .seconds(10))
        #expect(window.takeBackLatest() == nil)
        #expect(window.takeBack(startedAt: .zero) == false)
        window.record(at: .seconds(1))
        // Once the attempt left the window there is nothing to take back.
        #expect(window.earliestStart(at: .seconds(11)) == .seconds(11))
        #expect(window.takeBackLatest() == nil)
    }

    /// `takeBack(startedAt:)` removes the latest attempt with that start and keeps the rest in order.
    @Test(
        arguments: [
            ([1, 2, 3], 2, true, [1, 3]), ([1, 2, 2, 3], 2, true, [1, 2, 3]), ([1, 2, 3], 4, false, [1, 2, 3]),
            ([5], 5, true, []),
        ] as [([Int], Int, Bool, [Int])])
    func takingBackAGivenStart(recorded: [Int], start: Int, found: Bool, left: [Int]) {
        var window = AttemptWindow(limit: 10, window: .seconds(600))
        for second in recorded { window.record(at: .seconds(second)) }
        #expect(window.takeBack(startedAt: .seconds(start)) == found)
        #expect(window.starts == left.map { .seconds($0) })
    }

    /// After the clock steps back to `now`, attempts recorded later than `now` are forgotten (and
    /// those at or before it still count), so the step does not block attempts for its length.
    @Test(
        arguments: [
            ([100, 200, 300], 250, [100, 200], 250), ([100, 200, 300], 50, [], 50),
            ([100, 200, 300], 300, [100, 200, 300], 700),
            ([100, 200, 300], 200, [100, 200], 200),
        ] as [([Int], Int, [Int], Int)])
    func attemptsAfterABackwardStepAreForgotten(recorded: [Int], now: Int, kept: [Int], earliest: Int) {
        var window = AttemptWindow(limit: 3, window: .seconds(600))
        for second in recorded { window.record(at: .seconds(second)) }
        #expect(window.earliestStart(at: .seconds(now)) == .seconds(earliest))
        #expect(window.starts == kept.map { .seconds($0) })
        // Recording after the step keeps the starts in order.
        window.record(at: .seconds(now))
        #expect(window.starts == (kept + [now]).map { .seconds($0) })
    }

    @Test func pruningDropsWhatLeftTheWindowAndWhatLiesAhead() {
        var window = AttemptWindow(limit: 5, window: .seconds(10))
        for second in [0, 5, 9, 12] { window.record(at: .seconds(second)) }
        window.prune(now: .seconds(10))
        #expect(window.starts == [.seconds(5), .seconds(9)])
        window.prune(now: .seconds(100))
        #expect(window.starts.isEmpty)
    }

    // MARK: - Per key and overall (the gateway's connect window)

    /// One key reaches its own cap; another key still has attempts until the overall cap is reached.
    /// Both caps are sliding: the first attempts leaving the window allow connecting again.
    @Test(arguments: [(3, 5), (2, 3), (1, 1), (20, 6_000)] as [(Int, Int)])
    func attemptsAreCappedPerKeyAndOverall(perKey: Int, overall: Int) {
        var window = KeyedAttemptWindow<String>(window: .seconds(600), perKey: perKey, overall: overall)
        var now = Duration.zero
        var started: [String: Int] = [:]
        /// Starts attempts of `key`, one a second, while allowed; returns when the next would be.
        func attempt(_ key: String) -> Duration {
            while true {
                let allowed = window.earliestStart(key: key, at: now)
                if allowed > now { return allowed }
                window.record(key: key, at: now)
                started[key, default: 0] += 1
                now += .seconds(1)
            }
        }
        let first = attempt("a")
        #expect(started["a"] == min(perKey, overall))
        #expect(first == .seconds(600))
        _ = attempt("b")
        #expect(started["b", default: 0] == min(perKey, overall - started["a", default: 0]))
        #expect(window.overall.starts.count == min(overall, 2 * perKey))
        #expect(window.starts(of: "a").count == started["a"])
        // Once the first attempt left the window, "a" may start again.
        now = first
        #expect(window.earliestStart(key: "a", at: now) == now)
    }

    /// A healthy session's attempt is taken back out of its key's cap and the overall one.
    @Test(arguments: [(2, 10), (3, 3), (1, 2)] as [(Int, Int)])
    func takingBackAKeysLatestAttemptFreesBothCaps(perKey: Int, overall: Int) {
        var window = KeyedAttemptWindow<String>(window: .seconds(600), perKey: perKey, overall: overall)
        for second in 0..<perKey { window.record(key: "a", at: .seconds(second)) }
        for second in 0..<min(perKey, overall - perKey) { window.record(key: "b", at: .seconds(100 + second)) }
        let now = Duration.seconds(200)
        #expect(window.earliestStart(key: "a", at: now) > now)
        window.takeBackLatest(key: "a")
        #expect(window.earliestStart(key: "a", at: now) == now)
        #expect(window.starts(of: "a") == (0..<(perKey - 1)).map { .seconds($0) })
        #expect(!window.overall.starts.contains(.seconds(perKey - 1)))
        // The other key's attempts are untouched.
        #expect(window.starts(of: "b").count == min(perKey, overall - perKey))
        // A key without attempts has nothing to take back.
        window.takeBackLatest(key: "unknown")
        #expect(window.overall.starts.count == perKey - 1 + min(perKey, overall - perKey))
    }

    /// Many keys churning through healthy sessions never use the caps up.
    @Test func healthyChurnNeverReachesTheCaps() {
        var window = KeyedAttemptWindow<Int>(window: .seconds(600), perKey: 2, overall: 10)
        for round in 0..<3 {
            for key in 0..<40 {
                let now = Duration.milliseconds(round * 1_000 + key)
                #expect(window.earliestStart(key: key, at: now) == now)
                window.record(key: key, at: now)
                window.takeBackLatest(key: key)
            }
        }
        #expect(window.overall.starts.isEmpty)
        #expect(window.keyCount == 0)
    }

    /// Keys whose attempts all left the window are forgotten; a backward step forgets attempts
    /// recorded after it in both caps.
    @Test(
        arguments: [
            (Duration.seconds(950), 0, 0), (.seconds(700), 1, 1), (.seconds(400), 2, 2), (.seconds(100), 1, 1),
            (.seconds(5), 0, 0),
        ] as [(Duration, Int, Int)])
    func pruningForgetsKeysAndFutureAttempts(now: Duration, keys: Int, overall: Int) {
        var window = KeyedAttemptWindow<String>(window: .seconds(600), perKey: 5, overall: 50)
        window.record(key: "old", at: .seconds(10))
        window.record(key: "new", at: .seconds(300))
        window.prune(now: now)
        #expect(window.keyCount == keys)
        #expect(window.overall.starts.count == overall)
    }
}
