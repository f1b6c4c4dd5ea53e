import CPulseShims
import PulseHashing
import PulseKit
import Testing

@testable import PulseGateway

@Suite struct HashingTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func knownVectors(input: String, digest: String) {
        #expect(SHA256.hexDigest(Array(input.utf8)) == digest)
    }

    @Test func millionAsInUnevenPieces() {
        var hasher = SHA256()
        var remaining = 1_000_000
        var piece = 1
        while remaining > 0 {
            let count = min(piece, remaining)
            hasher.update([UInt8](repeating: UInt8(ascii: "a"), count: count))
            remaining -= count
            piece = piece * 3 % 997 + 1
        }
        #expect(Hex.encode(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func fieldsAreLengthPrefixedSoSplitsDoNotCollide() {
        var first = SHA256()
        first.updateField("ab")
        first.updateField("c")
        var second = SHA256()
        second.updateField("a")
        second.updateField("bc")
        #expect(first.finalize() != second.finalize())
        var manual = SHA256()
        manual.update([0, 0, 0, 0, 0, 0, 0, 2] + Array("ab".utf8) + [0, 0, 0, 0, 0, 0, 0, 1] + Array("c".utf8))
        var again = SHA256()
        again.updateField("ab")
        again.updateField("c")
        #expect(manual.finalize() == again.finalize())
    }
}

@Suite struct SHA256BlockFunctionTests {
    /// The accelerated and the portable block functions agree on many block counts and contents.
    @Test func acceleratedAndPortableAgree() {
        var seed: UInt32 = 12_345
        let data = (0..<(64 * 40)).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }
        for blocks in [1, 2, 3, 7, 40] {
            var fast: [UInt32] = [1, 2, 3, 4, 5, 6, 7, 8]
            var portable = fast
            data.withUnsafeBufferPointer { bytes in
                pg_sha256_blocks(&fast, bytes.baseAddress, blocks)
                pg_sha256_blocks_portable(&portable, bytes.baseAddress, blocks)
            }
            #expect(fast == portable, "\(blocks) blocks")
        }
    }
}
