import PulseKit
import Testing

@Suite("Hex")
struct HexTests {
    @Test("encode: two lower-case digits per byte, every nibble value, and the empty input")
    func encode() {
        #expect(Hex.encode([0x00, 0x01, 0x7f, 0x80, 0xab, 0xcd, 0xef, 0xff]) == "00017f80abcdefff")
        #expect(Hex.encode(Array(0...15).map { UInt8($0) * 17 }) == "00112233445566778899aabbccddeeff")
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test("encode: a non-contiguous collection gives the same text as its array")
    func nonContiguous() {
        let bytes: [UInt8] = [0xde, 0xad, 0xbe, 0xef]
        #expect(Hex.encode(bytes.reversed()) == "efbeadde")
        #expect(Hex.encode(bytes.lazy.map { $0 }) == Hex.encode(bytes))
    }

    @Test("write: fills exactly twice the bytes into a larger buffer and leaves the rest")
    func write() {
        let bytes: [UInt8] = [0x0f, 0xf0]
        var output = [UInt8](repeating: UInt8(ascii: "."), count: 6)
        bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { Hex.write(input, into: $0) }
        }
        #expect(String(decoding: output, as: UTF8.self) == "0ff0..")
    }
}
