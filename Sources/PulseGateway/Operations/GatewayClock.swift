import Glibc

/// Time in milliseconds, injectable so tests control expiry and backoff: ``system`` is the wall
/// clock (epoch milliseconds: receive times, dedup expiry, stored next-attempt times),
/// ``monotonic`` the clock in-process waits are scheduled on (a wall-clock step does not move it).
public struct GatewayClock: Sendable {
    private let read: @Sendable () -> Int64

    /// Creates a clock from a closure returning epoch milliseconds.
    public init(_ now: @escaping @Sendable () -> Int64) {
        self.read = now
    }

    /// The current time, epoch milliseconds.
    public func now() -> Int64 { read() }

    /// The system real-time clock.
    public static let system = GatewayClock {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// The system monotonic clock (milliseconds since an arbitrary start; never steps).
    public static let monotonic = GatewayClock {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A source of uniform random numbers in `0..<1`, injectable so tests fix the backoff jitter.
public struct GatewayRandom: Sendable {
    private let next: @Sendable () -> Double

    /// Creates a source from a closure returning values in `0..<1`.
    public init(_ next: @escaping @Sendable () -> Double) {
        self.next = next
    }

    /// The next value in `0..<1`.
    public func unit() -> Double { min(max(next(), 0), 0.999_999_999) }

    /// The system generator.
    public static let system = GatewayRandom { Double.random(in: 0..<1) }
}
