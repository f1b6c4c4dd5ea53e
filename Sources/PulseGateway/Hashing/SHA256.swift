/// SHA-256 (FIPS 180-4), incremental.
///
/// Used for batch ids derived from bodies, body hashes in the dedup table, and the deterministic
/// event and Pulse batch ids of the mapping. Not used for anything secret.
///
/// ```swift
/// var hasher = SHA256()
/// hasher.update(Array("abc".utf8))
/// let digest = hasher.finalize()  // 32 bytes
/// ```
public struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes not yet hashed (fewer than 64).
    private var pending: [UInt8] = []
    private var totalBytes: UInt64 = 0

    /// Creates a hasher.
    public init() {
        pending.reserveCapacity(64)
    }

    /// The digest of `bytes` (32 bytes).
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The lower-case hex digest of `bytes` (64 characters).
    public static func hexDigest(_ bytes: [UInt8]) -> String {
        Hex.encode(hash(bytes))
    }

    /// Feeds bytes.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds the UTF-8 bytes of a string.
    public mutating func update(_ text: String) {
        var text = text
        text.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    /// Feeds bytes from memory the caller owns.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        totalBytes &+= UInt64(bytes.count)
        var offset = 0
        let count = bytes.count
        if !pending.isEmpty {
            let take = min(64 - pending.count, count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            if pending.count == 64 {
                pending.withUnsafeBytes { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while count - offset >= 64 {
            compress(base + offset)
            offset += 64
        }
        if offset < count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: count - offset))
        }
    }

    /// Feeds one field of a composite key: its length as 8 big-endian bytes, then its bytes, so
    /// that different splits of the same bytes never collide (`("ab","c")` vs `("a","bc")`).
    public mutating func updateField(_ text: String) {
        let length = UInt64(text.utf8.count)
        var lengthBytes = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { lengthBytes[index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64(index))) }
        update(lengthBytes)
        update(text)
    }

    /// Finishes and returns the 32-byte digest.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                compress(raw.baseAddress! + offset)
                offset += 64
            }
        }
        pending.removeAll()
        var digest = [UInt8](repeating: 0, count: 32)
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        for (index, word) in words.enumerated() {
            digest[index * 4] = UInt8(truncatingIfNeeded: word >> 24)
            digest[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
            digest[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
            digest[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
        }
        return digest
    }

    /// Processes one 64-byte block.
    private mutating func compress(_ block: UnsafeRawPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            for index in 0..<16 {
                let b = block + index * 4
                w[index] =
                    UInt32(b.load(as: UInt8.self)) << 24 | UInt32(b.load(fromByteOffset: 1, as: UInt8.self)) << 16
                    | UInt32(b.load(fromByteOffset: 2, as: UInt8.self)) << 8
                    | UInt32(b.load(fromByteOffset: 3, as: UInt8.self))
            }
            for index in 16..<64 {
                let x = w[index - 15]
                let y = w[index - 2]
                let s0 = x.rotatedRight(7) ^ x.rotatedRight(18) ^ (x >> 3)
                let s1 = y.rotatedRight(17) ^ y.rotatedRight(19) ^ (y >> 10)
                w[index] = w[index - 16] &+ s0 &+ w[index - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, h) = state
            SHA256Constants.k.withUnsafeBufferPointer { k in
                for index in 0..<64 {
                    let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                    let choice = (e & f) ^ (~e & g)
                    let t1 = h &+ s1 &+ choice &+ k[index] &+ w[index]
                    let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let t2 = s0 &+ majority
                    h = g
                    g = f
                    f = e
                    e = d &+ t1
                    d = c
                    c = b
                    b = a
                    a = t1 &+ t2
                }
            }
            state.0 &+= a
            state.1 &+= b
            state.2 &+= c
            state.3 &+= d
            state.4 &+= e
            state.5 &+= f
            state.6 &+= g
            state.7 &+= h
        }
    }
}

private enum SHA256Constants {
    static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 {
        (self >> count) | (self << (32 - count))
    }
}

/// Lower-case hexadecimal encoding.
enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `bytes` as lower-case hex, two characters per byte.
    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
