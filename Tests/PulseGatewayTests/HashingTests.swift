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

    /// Messages whose padding ends the last block exactly, just fits, or needs one more block.
    @Test(arguments: [
        (55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (57, "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6"),
        (63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
        (64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
        (119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
        (120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
    ])
    func paddingAtBlockEdges(length: Int, digest: String) {
        #expect(SHA256.hexDigest([UInt8](repeating: UInt8(ascii: "a"), count: length)) == digest)
        var bytewise = SHA256()
        for _ in 0..<length { bytewise.update([UInt8(ascii: "a")]) }
        #expect(Hex.encode(bytewise.finalize()) == digest)
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
