import PulseHashing
public import PulseKit

/// The uploader's source of uniformly distributed random 64-bit values: PulseKit's one
/// ``PulseKit/RandomSource``.
///
/// Record ids (the random part of `log.record.uid`, crash ids, trace and span ids), batch ids and backoff jitter all draw from
/// this source, so tests inject a seeded generator and get reproducible ids and delays.
///
/// ```swift
/// let seeded = RandomSource(seed: 42)
/// ```
public typealias RandomSource = PulseKit.RandomSource

extension PulseKit.RandomSource {
    /// `byteCount` random bytes as lowercase hexadecimal (`2 * byteCount` characters).
    func hex(byteCount: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + 8)
        while bytes.count < byteCount {
            var value = nextUInt64()
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
