import Glibc
import PulseJSON

/// A fixed set of names (JSON member names of an OTLP message, attribute keys the mapping reads)
/// looked up by their UTF-8 bytes, as a parsed document holds them: no `String` is made and
/// nothing is hashed with `Hasher`. A key is read as two words (``words(_:)``: its first and last
/// eight bytes, or overlapping shorter loads), which for keys of up to 16 bytes hold every byte;
/// the lookup hashes them with the length, probes an open-addressing table whose slots hold the
/// names' words, and compares the words there (and, for a name over 16 bytes, its middle bytes).
struct KeyTable: Sendable {
    /// One slot of the table: a name's words, length and index, or an empty slot (`index` -1).
    private struct Slot: Sendable {
        var head: UInt64 = 0
        var tail: UInt64 = 0
        var count: Int32 = 0
        var index: Int32 = -1
        /// Where the name starts in ``bytes`` (read only for names over 16 bytes).
        var start: Int = 0
    }

    /// The names, one after the other.
    private let bytes: [UInt8]
    /// A power of two in size, at most a quarter full.
    private let slots: [Slot]
    private let shift: UInt64

    /// The number of names.
    let count: Int

    /// A table of `names`; ``index(_:)-(UnsafeBufferPointer<UInt8>)`` finds `names[i]` as `i`.
    init(_ names: [String]) {
        precondition(names.count < Int(Int32.max), "one Int32 per name")
        precondition(Set(names).count == names.count, "names are distinct")
        var bytes: [UInt8] = []
        var bits: UInt64 = 2
        while 1 << bits < 4 * names.count { bits += 1 }
        var slots = [Slot](repeating: Slot(), count: 1 << bits)
        let shift = 64 - bits
        for (index, name) in names.enumerated() {
            let utf8 = Array(name.utf8)
            let (head, tail) = utf8.withUnsafeBufferPointer { Self.words($0) }
            var slot = Int(truncatingIfNeeded: Self.hash(head, tail, utf8.count) >> shift)
            while slots[slot].index >= 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Slot(
                head: head, tail: tail, count: Int32(utf8.count), index: Int32(index), start: bytes.count)
            bytes.append(contentsOf: utf8)
        }
        self.bytes = bytes
        self.slots = slots
        self.shift = shift
        self.count = names.count
    }

    /// The index of the name `key` holds, or `nil`.
    func index(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        let (head, tail) = Self.words(key)
        let count = key.count
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: Self.hash(head, tail, count) >> shift)
            while true {
                let entry = slots[slot]
                guard entry.index >= 0 else { return nil }
                if entry.head == head && entry.tail == tail && Int(entry.count) == count
                    && (count <= 16 || middleEquals(key, at: entry.start))
                {
                    return Int(entry.index)
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Whether the bytes of `key` (over 16 bytes) between its first and last eight equal the name's
    /// starting at `start`.
    private func middleEquals(_ key: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
        bytes.withUnsafeBufferPointer { bytes in
            memcmp(bytes.baseAddress! + start + 8, key.baseAddress! + 8, key.count - 16) == 0
        }
    }

    /// The index of the name the string node `key` holds, or `nil` (also for a node of another kind).
    @inline(__always)
    func index(_ key: JSONCursor) -> Int? {
        key.withUTF8 { index($0) } ?? nil
    }

    /// Two words that, with the length, hold every byte of a key of up to 16 bytes: the first and
    /// the last eight bytes (overlapping below 16); below eight, the first and last four bytes
    /// (overlapping) in one word; below four, the first, middle and last byte. Both zero when empty.
    @inline(__always)
    static func words(_ key: UnsafeBufferPointer<UInt8>) -> (head: UInt64, tail: UInt64) {
        let count = key.count
        guard let base = key.baseAddress, count > 0 else { return (0, 0) }
        let raw = UnsafeRawPointer(base)
        if count >= 8 {
            return (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        }
        let word: UInt64
        if count >= 4 {
            word =
                UInt64(raw.loadUnaligned(as: UInt32.self))
                | UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
        } else {
            word = UInt64(base[0]) | UInt64(base[count >> 1]) << 8 | UInt64(base[count - 1]) << 16
        }
        return (word, word)
    }

    /// The words of a key and its length, mixed.
    @inline(__always)
    private static func hash(_ head: UInt64, _ tail: UInt64, _ count: Int) -> UInt64 {
        let mixed = (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail << 29 | tail >> 35) ^ UInt64(count)
        return mixed &* 0xBF58_476D_1CE4_E5B9
    }
}
