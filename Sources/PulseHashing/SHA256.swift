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
    /// The eight state words, inline (no heap storage: a hasher per event id costs no allocation).
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes not yet hashed: the first `pendingCount` of these 64.
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0
    private var totalBytes: UInt64 = 0

    /// Creates a hasher.
    package init() {}

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
        if text.utf8.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            var text = text
            text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Feeds bytes from memory the caller owns.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        totalBytes &+= UInt64(bytes.count)
        var offset = 0
        let count = bytes.count
        if pendingCount > 0 {
            let take = min(64 - pendingCount, count)
            appendPending(base, count: take)
            offset = take
            if pendingCount == 64 {
                compressPending()
                pendingCount = 0
            }
        }
        let blocks = (count - offset) / 64
        if blocks > 0 {
            compress(base + offset, blocks: blocks)
            offset += blocks * 64
        }
        if offset < count { appendPending(base + offset, count: count - offset) }
    }

    /// Feeds one field of a composite key: its length as 8 big-endian bytes, then its bytes, so
    /// that different splits of the same bytes never collide (`("ab","c")` vs `("a","bc")`).
    package mutating func updateField(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ updateField(utf8: $0) }) == nil {
            var text = text
            text.withUTF8 { updateField(utf8: $0) }
        }
    }

    /// ``updateField(_:)`` for UTF-8 bytes.
    private mutating func updateField(utf8: UnsafeBufferPointer<UInt8>) {
        withUnsafeBytes(of: UInt64(utf8.count).bigEndian) { update($0) }
        update(UnsafeRawBufferPointer(utf8))
    }

    /// Finishes and returns the 32-byte digest.
    package mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        // The padding: 0x80, zeros up to 56 bytes into a block, the bit length as 8 big-endian bytes.
        // Up to 72 bytes (when 56 or more are pending, the length goes into a second block).
        var tail: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        let padding = (pendingCount < 56 ? 56 : 120) - pendingCount
        withUnsafeMutableBytes(of: &tail) { raw in
            raw[0] = 0x80
            withUnsafeBytes(of: bitLength.bigEndian) { length in
                raw.baseAddress!.advanced(by: padding).copyMemory(from: length.baseAddress!, byteCount: 8)
            }
            update(UnsafeRawBufferPointer(rebasing: raw[..<(padding + 8)]))
        }
        pendingCount = 0
        return [UInt8](unsafeUninitializedCapacity: 32) { digest, initialized in
            withUnsafeBytes(of: state) { raw in
                for index in 0..<8 {
                    let word = raw.load(fromByteOffset: index * 4, as: UInt32.self)
                    digest[index * 4] = UInt8(truncatingIfNeeded: word >> 24)
                    digest[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
                    digest[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
                    digest[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
                }
            }
            initialized = 32
        }
    }

    /// Copies `count` bytes (no more than fit) after the pending ones.
    private mutating func appendPending(_ bytes: UnsafeRawPointer, count: Int) {
        let start = pendingCount
        withUnsafeMutableBytes(of: &pending) { raw in
            raw.baseAddress!.advanced(by: start).copyMemory(from: bytes, byteCount: count)
        }
        pendingCount += count
    }

    /// Hashes the 64 pending bytes.
    private mutating func compressPending() {
        let block = pending
        withUnsafeBytes(of: block) { compress($0.baseAddress!, blocks: 1) }
    }

    private mutating func compress(_ blocks: UnsafeRawPointer, blocks count: Int) {
        withUnsafeMutableBytes(of: &state) { raw in
            pg_sha256_blocks(
                raw.baseAddress!.assumingMemoryBound(to: UInt32.self), blocks.assumingMemoryBound(to: UInt8.self), count
            )
        }
    }
}
