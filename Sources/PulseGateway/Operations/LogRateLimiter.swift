import PulseKit
import Synchronization

/// Lets one log line per key through per interval, so a misbehaving client cannot flood the log;
/// the next line that passes says how many were held back.
///
/// Time comes from the gateway's injected ``PulseClock``. At most ``maxKeys`` keys are tracked:
/// when full, keys whose interval has passed are forgotten, and if none has, a new key is
/// limited like a tracked one until space frees up.
final class LogRateLimiter: Sendable {
    /// Keys (App IDs; for the rejection log, app and reason) remembered at once.
    static let maxKeys = 1_024

    private struct Entry {
        var lastLoggedAt: Int64
        var suppressed: Int
    }

    private let intervalMilliseconds: Int64
    private let clock: PulseClock
    private let entries = Mutex<[String: Entry]>([:])

    init(intervalMilliseconds: Int64, clock: PulseClock) {
        self.intervalMilliseconds = intervalMilliseconds
        self.clock = clock
    }

    /// `nil` when a line for `key` was logged less than the interval ago (it is counted);
    /// otherwise the number of lines held back since the last one that passed.
    func admit(_ key: String) -> Int? {
        let now = clock.wallClockMilliseconds()
        return entries.withLock { entries -> Int? in
            if var entry = entries[key] {
                guard now - entry.lastLoggedAt >= intervalMilliseconds else {
                    entry.suppressed += 1
                    entries[key] = entry
                    return nil
                }
                entries[key] = Entry(lastLoggedAt: now, suppressed: 0)
                return entry.suppressed
            }
            if entries.count >= Self.maxKeys {
                entries = entries.filter { now - $0.value.lastLoggedAt < intervalMilliseconds }
                if entries.count >= Self.maxKeys { return nil }
            }
            entries[key] = Entry(lastLoggedAt: now, suppressed: 0)
            return 0
        }
    }
}
