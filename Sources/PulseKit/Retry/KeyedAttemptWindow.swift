/// Sliding-window caps on the attempts of many keys: at most `perKey` attempts of one key and
/// `overall` attempts of all keys together start within any `window` — one ``AttemptWindow`` per
/// key plus one over them all.
///
/// A key whose attempts all left the window is forgotten, so the bookkeeping holds only the keys
/// that attempted recently. Taking an attempt back (``takeBackLatest(key:)``) removes it from both
/// caps; attempts recorded after `now` (the clock stepped back) are forgotten in both.
///
/// ```swift
/// var connects = KeyedAttemptWindow<String>(window: .seconds(600), perKey: 20, overall: 6_000)
/// if connects.earliestStart(key: "device-1", at: now) <= now { connects.record(key: "device-1", at: now) }
/// ```
package struct KeyedAttemptWindow<Key: Hashable & Sendable>: Sendable {
    /// The cap over every key's attempts.
    package private(set) var overall: AttemptWindow
    /// The cap of one key, as a new key starts it.
    private let perKey: AttemptWindow
    private var byKey: [Key: AttemptWindow] = [:]

    /// Creates empty caps of `perKey` attempts per key and `overall` in total within `window`.
    package init(window: Duration, perKey: Int, overall: Int) {
        self.overall = AttemptWindow(limit: overall, window: window)
        self.perKey = AttemptWindow(limit: perKey, window: window)
    }

    /// How many keys have attempts inside the window (as of the last time each was consulted).
    package var keyCount: Int { byKey.count }

    /// Start times of `key`'s attempts inside the window (as of the last time it was consulted),
    /// oldest first.
    package func starts(of key: Key) -> [Duration] { byKey[key]?.starts ?? [] }

    /// The earliest time an attempt of `key` may start under both caps: `now` when both allow one.
    package mutating func earliestStart(key: Key, at now: Duration) -> Duration {
        var start = overall.earliestStart(at: now)
        if var attempts = byKey[key] {
            start = max(start, attempts.earliestStart(at: now))
            byKey[key] = attempts.starts.isEmpty ? nil : attempts
        }
        return start
    }

    /// Records that an attempt of `key` starts at `now`.
    package mutating func record(key: Key, at now: Duration) {
        byKey[key, default: perKey].record(at: now)
        overall.record(at: now)
    }

    /// Takes the latest attempt of `key` back out of both caps (it does not count).
    package mutating func takeBackLatest(key: Key) {
        guard var attempts = byKey[key], let start = attempts.takeBackLatest() else { return }
        byKey[key] = attempts.starts.isEmpty ? nil : attempts
        overall.takeBack(startedAt: start)
    }

    /// Drops the attempts no longer inside the window ending at `now`, and the keys left without any.
    package mutating func prune(now: Duration) {
        overall.prune(now: now)
        byKey = byKey.compactMapValues { attempts in
            var attempts = attempts
            attempts.prune(now: now)
            return attempts.starts.isEmpty ? nil : attempts
        }
    }
}
