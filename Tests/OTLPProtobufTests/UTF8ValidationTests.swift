import Testing

@testable import OTLPProtobuf

/// The transcoder's UTF-8 validator against the standard library's.
@Suite struct UTF8ValidationTests {
    private func agrees(_ bytes: [UInt8]) -> Bool {
        let expected = String(validating: bytes, as: UTF8.self) != nil
        return bytes.withUnsafeBufferPointer { UTF8Validation.isValid($0) } == expected
    }

    @Test func everyOneAndTwoByteSequence() {
        var disagreements = 0
        for first in 0...255 {
            if !agrees([UInt8(first)]) { disagreements += 1 }
            for second in 0...255 where !agrees([UInt8(first), UInt8(second)]) {
                disagreements += 1
            }
        }
        #expect(disagreements == 0)
    }

    @Test func everyThreeByteSequenceWithAMultiByteLead() {
        var disagreements = 0
        for first in 0xC0...0xFF {
            for second in 0x70...0xC2 {
                for third in [0x00, 0x41, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xE0, 0xFF] {
                    if !agrees([UInt8(first), UInt8(second), UInt8(third)]) { disagreements += 1 }
                }
            }
        }
        #expect(disagreements == 0)
    }

    @Test func boundaryScalarsAndRandomInputs() {
        // The first and last scalars of each encoded length, and the surrogate edges.
        let scalars: [UInt32] = [0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]
        for value in scalars {
            let text = String(Unicode.Scalar(value)!)
            #expect(agrees(Array(text.utf8)))
            #expect(agrees(Array(("abcdefgh" + text + "ijklmnop").utf8)))
        }
        #expect(!UTF8Validation.isValid([0xED, 0xA0, 0x80].withUnsafeBufferPointer { $0 }))  // U+D800
        #expect(!UTF8Validation.isValid([0xF4, 0x90, 0x80, 0x80].withUnsafeBufferPointer { $0 }))  // U+110000
        #expect(!UTF8Validation.isValid([0xE0, 0x80, 0xAF].withUnsafeBufferPointer { $0 }))  // overlong "/"
        var generator = SystemRandomNumberGenerator()
        var disagreements = 0
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            // Mostly ASCII with some high bytes, so long valid runs and the fast path both occur.
            let bytes = (0..<length).map { _ in
                Bool.random(using: &generator) ? UInt8.random(in: 0x20...0x7E) : UInt8.random(in: 0x80...0xF5)
            }
            if !agrees(bytes) { disagreements += 1 }
        }
        #expect(disagreements == 0)
    }
}
