import Synchronization

/// The one source of randomness: uniformly distributed 64-bit values from an injected generator.
///
/// Backoff jitter, ids and sampling draw from it, so tests inject a seeded (or scripted) source and
/// get reproducible delays and ids. ``system`` is the system's cryptographically secure generator.
///
/// ```swift
/// let seeded = RandomSource(seed: 42)
/// let jitter = seeded.uniform(upTo: 1_000)  // 0...1000
/// ```
public struct RandomSource: Sendable {
    private let next: @Sendable () -> UInt64

    /// Creates a source from a closure returning uniformly distributed values.
    public init(_ next: @escaping @Sendable () -> UInt64) {
        self.next = next
    }

    /// A deterministic source (SplitMix64, shareable between tasks) for tests and benchmarks. Not
    /// for production ids.
    public init(seed: UInt64) {
        let state = Mutex(seed)
        self.next = {
            state.withLock { state in
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
    }

    /// A source over any standard generator (each draw takes the generator's lock).
    public init(_ generator: some RandomNumberGenerator & Sendable) {
        let state = Mutex(generator)
        self.next = { state.withLock { $0.next() } }
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

    /// A value in `0...upperBound` from exactly one draw (multiply-shift: the draw's high word of
    /// `value × (upperBound + 1)`), so a scripted source maps its smallest word to 0 and its largest
    /// to `upperBound`. The bias is below 2⁻²⁴ for bounds under 2⁴⁰.
    public func uniform(upTo upperBound: UInt64) -> UInt64 {
        guard upperBound < UInt64.max else { return next() }
        return next().multipliedFullWidth(by: upperBound + 1).high
    }

    /// A value in `0..<1` with 53 random bits.
    public func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A standard-library generator drawing from this source (for `shuffled(using:)` and
    /// `Int.random(in:using:)`).
    public var generator: Generator { Generator(source: self) }

    /// A `RandomNumberGenerator` view of a ``RandomSource``.
    public struct Generator: RandomNumberGenerator, Sendable {
        let source: RandomSource

        /// The next value of the source.
        public mutating func next() -> UInt64 {
            source.nextUInt64()
        }
    }
}
