import CPulseShims
import PulseKit

/// SHA-256 (FIPS 180-4), incremental.
///
/// The block function is `CPulseShims`' (the CPU's SHA extensions when present, a portable C
/// version otherwise). The gateway uses it for batch ids derived from bodies, body hashes in the
/// dedup table, app-key digests and the deterministic event and Pulse batch ids of the mapping; the
/// uploader for resource fingerprints and attachment digests.
///
/// ```swift
/// var hasher = SHA256()
/// hasher.update(Array("abc".utf8))
/// let digest = hasher.finalize()  // 32 bytes
/// ```
package struct SHA256: Sendable {
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    /// Bytes not yet hashed (fewer than 64).
    private var pending: [UInt8] = []
    private var totalBytes: UInt64 = 0

    /// Creates a hasher.
    package init() {
        pending.reserveCapacity(64)
    }

    /// Whether the block function uses the CPU's SHA extensions.
    static var isAccelerated: Bool { pg_sha256_accelerated() != 0 }

    /// The digest of `bytes` (32 bytes).
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lower-case hex digest of `bytes` (64 characters).
    package static func hexDigest(_ bytes: [UInt8]) -> String {
        Hex.encode(hash(bytes))
    }

    /// Feeds bytes.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds the UTF-8 bytes of a string.
    package mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds bytes from memory the caller owns.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        totalBytes &+= UInt64(bytes.count)
        var offset = 0
        let count = bytes.count
        if !pending.isEmpty {
            let take = min(64 - pending.count, count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            if pending.count == 64 {
                pending.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        let blocks = (count - offset) / 64
        if blocks > 0 {
            compress(base + offset, blocks: blocks)
            offset += blocks * 64
        }
        if offset < count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: count - offset))
        }
    }

    /// Feeds one field of a composite key: its length as 8 big-endian bytes, then its bytes, so
    /// that different splits of the same bytes never collide (`("ab","c")` vs `("a","bc")`).
    package mutating func updateField(_ text: String) {
        let length = UInt64(text.utf8.count)
        var lengthBytes = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { lengthBytes[index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64(index))) }
        update(lengthBytes)
        update(text)
    }

    /// Finishes and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { compress($0.baseAddress!, blocks: $0.count / 64) }
        pending.removeAll()
        var digest = [UInt8](repeating: 0, count: 32)
        for (index, word) in state.enumerated() {
            digest[index * 4] = UInt8(truncatingIfNeeded: word >> 24)
            digest[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
            digest[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
            digest[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
        }
        return digest
    }

    private mutating func compress(_ blocks: UnsafeRawPointer, blocks count: Int) {
        state.withUnsafeMutableBufferPointer { words in
            pg_sha256_blocks(words.baseAddress, blocks.assumingMemoryBound(to: UInt8.self), count)
        }
    }
}
