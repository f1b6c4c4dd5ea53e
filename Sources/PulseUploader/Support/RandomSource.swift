import PulseHashing
import Synchronization

/// A source of uniformly distributed random 64-bit values.
///
/// Record ids (the random part of `log.record.uid`, crash ids, trace and span ids), batch ids and backoff jitter all draw from
/// this source, so tests inject a seeded generator and get reproducible ids and delays.
///
/// ```swift
/// let seeded = RandomSource(seed: 42)
/// ```
public struct RandomSource: Sendable {
    private let next: @Sendable () -> UInt64

    /// Creates a source from a closure returning uniformly distributed values.
    public init(_ next: @escaping @Sendable () -> UInt64) {
        self.next = next
    }

    /// A deterministic source (SplitMix64) for tests and benchmarks. Not for production ids.
    public init(seed: UInt64) {
        let state = SplitMix64(seed: seed)
        self.next = { state.next() }
    }

    /// The system's cryptographically secure generator.
    public static let system = RandomSource {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// The next random value.
    public func nextUInt64() -> UInt64 {
        next()
    }

    /// A uniformly distributed value in `0...upperBound` (no modulo bias).
    func uniform(upTo upperBound: UInt64) -> UInt64 {
        if upperBound == UInt64.max {
            return next()
        }
        let range = upperBound + 1
        // Rejection sampling: discard the top partial bucket.
        let limit = UInt64.max - (UInt64.max % range)
        while true {
            let value = next()
            if value < limit {
                return value % range
            }
        }
    }

    /// `byteCount` random bytes as lowercase hexadecimal (`2 * byteCount` characters).
    func hex(byteCount: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 8)
        while bytes.count < byteCount {
            var value = next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: value))
                value >>= 8
            }
        }
        return Hex.encode(bytes[0..<byteCount])
    }

    /// A 32-character lowercase hexadecimal id (128 random bits): batch ids, crash ids, `device.id` and
    /// `app.installation.id` (`log.record.uid` is a ULID, see ``ULIDGenerator``).
    func identifier() -> String {
        hex(byteCount: 16)
    }
}

/// SplitMix64 behind a lock, so a seeded ``RandomSource`` can be shared between tasks.
private final class SplitMix64: Sendable {
    private let state: Mutex<UInt64>

    init(seed: UInt64) {
        state = Mutex(seed)
    }

    func next() -> UInt64 {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
