import Glibc
import PulseJSON

/// A fixed set of names (JSON member names of an OTLP message, attribute keys the mapping reads)
/// looked up by their UTF-8 bytes, as a parsed document holds them: no `String` is made and
/// nothing is hashed with `Hasher`. The lookup hashes the length and the first and last eight
/// bytes of the key, probes an open-addressing table and compares the bytes of the one candidate
/// it finds there.
struct KeyTable: Sendable {
    /// The names, one after the other (``ends`` delimits them).
    private let bytes: [UInt8]
    private let ends: [Int]
    /// Per slot the index of a name, or -1; a power of two in size, at most a quarter full.
    private let slots: [Int16]
    private let shift: UInt64

    /// The number of names.
    var count: Int { ends.count }

    /// A table of `names`; ``index(_:)-(UnsafeBufferPointer<UInt8>)`` finds `names[i]` as `i`.
    init(_ names: [String]) {
        precondition(names.count < Int(Int16.max), "one Int16 per name")
        precondition(Set(names).count == names.count, "names are distinct")
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for name in names {
            bytes.append(contentsOf: name.utf8)
            ends.append(bytes.count)
        }
        var bits: UInt64 = 2
        while 1 << bits < 4 * names.count { bits += 1 }
        var slots = [Int16](repeating: -1, count: 1 << bits)
        let shift = 64 - bits
        for (index, name) in names.enumerated() {
            var slot = Array(name.utf8).withUnsafeBufferPointer { Int(truncatingIfNeeded: Self.hash($0) >> shift) }
            while slots[slot] >= 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int16(index)
        }
        self.bytes = bytes
        self.ends = ends
        self.slots = slots
        self.shift = shift
    }

    /// The index of the name `key` holds, or `nil`.
    func index(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        slots.withUnsafeBufferPointer { slots in
            ends.withUnsafeBufferPointer { ends in
                bytes.withUnsafeBufferPointer { bytes in
                    let mask = slots.count - 1
                    var slot = Int(truncatingIfNeeded: Self.hash(key) >> shift)
                    while true {
                        let index = Int(slots[slot])
                        guard index >= 0 else { return nil }
                        let start = index == 0 ? 0 : ends[index - 1]
                        if ends[index] - start == key.count
                            && (key.isEmpty || memcmp(bytes.baseAddress! + start, key.baseAddress!, key.count) == 0)
                        {
                            return index
                        }
                        slot = (slot + 1) & mask
                    }
                }
            }
        }
    }

    /// The index of the name the string node `key` holds, or `nil` (also for a node of another kind).
    @inline(__always)
    func index(_ key: JSONCursor) -> Int? {
        key.withUTF8 { index($0) } ?? nil
    }

    /// The length and the first and last eight bytes of `key`, mixed.
    @inline(__always)
    private static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = key.count
        guard let base = key.baseAddress, count > 0 else { return 0 }
        var head: UInt64 = 0
        var tail: UInt64 = 0
        if count >= 8 {
            head = UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)
            tail = UnsafeRawPointer(base + count - 8).loadUnaligned(as: UInt64.self)
        } else {
            for offset in 0..<count { head = head << 8 | UInt64(base[offset]) }
            tail = head
        }
        let mixed = (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail << 29 | tail >> 35) ^ UInt64(count)
        return mixed &* 0xBF58_476D_1CE4_E5B9
    }
}
