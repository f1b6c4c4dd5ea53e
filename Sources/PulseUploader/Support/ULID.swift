import PulseKit
import Synchronization

/// ULIDs (<https://github.com/ulid/spec>): 48 bits of Unix time in milliseconds, then 80 random bits, written
/// as 26 Crockford base32 characters (`0123456789ABCDEFGHJKMNPQRSTVWXYZ`). They sort by creation time as
/// strings, which is what Apsio 4.3 asks of `log.record.uid` ("a UUID or ULID") and keeps downstream index
/// inserts at the end of the index.
///
/// One generator per uploader makes ids monotonic within a millisecond: a second id in the same
/// millisecond (or after the clock stepped back) is the previous one plus one, so ids of one queue sort in
/// the order they were made. The random bits come from the injected ``RandomSource``.
final class ULIDGenerator: Sendable {
    /// The length of every ULID.
    static let length = 26
    /// Crockford's base32 alphabet (no I, L, O, U).
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    /// The largest time a ULID holds (2^48 − 1 ms, in the year 10889).
    static let maximumMilliseconds: Int64 = (1 << 48) - 1

    private let random: RandomSource
    private let last = Mutex<UInt128?>(nil)

    init(random: RandomSource) {
        self.random = random
    }

    /// The next id at `milliseconds` (epoch ms; clamped to 0…2^48 − 1).
    func next(milliseconds: Int64) -> String {
        let time = UInt128(UInt64(min(max(milliseconds, 0), ULIDGenerator.maximumMilliseconds)))
        let value = last.withLock { last -> UInt128 in
            let fresh = (time << 80) | ULIDGenerator.randomBits(random)
            // Same millisecond, or the clock went back: keep the order by counting on from the last id,
            // unless the 80 random bits would overflow into the time.
            if let previous = last, previous >> 80 >= time,
                previous & ULIDGenerator.randomMask != ULIDGenerator.randomMask
            {
                last = previous + 1
            } else {
                last = fresh
            }
            return last!
        }
        return ULIDGenerator.encode(value)
    }

    /// One ULID without the monotonic counter (for ids made outside an uploader's record path).
    static func make(milliseconds: Int64, random: RandomSource) -> String {
        let time = UInt128(UInt64(min(max(milliseconds, 0), maximumMilliseconds)))
        return encode((time << 80) | randomBits(random))
    }

    /// Whether `text` is a ULID (26 Crockford characters, upper case, first one at most `7`).
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == length, bytes[0] <= UInt8(ascii: "7") else { return false }
        return bytes.allSatisfy { alphabet.contains($0) }
    }

    private static let randomMask: UInt128 = (1 << 80) - 1

    private static func randomBits(_ random: RandomSource) -> UInt128 {
        let high = UInt128(random.nextUInt64() & 0xFFFF)
        return (high << 64) | UInt128(random.nextUInt64())
    }

    /// 128 bits as 26 base32 digits (the first digit carries the top 3 bits).
    static func encode(_ value: UInt128) -> String {
        var characters = [UInt8](repeating: 0, count: length)
        var rest = value
        for index in stride(from: length - 1, through: 0, by: -1) {
            characters[index] = alphabet[Int(rest & 31)]
            rest >>= 5
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
