/// Lower-case hexadecimal encoding, the one implementation: ids and digests (`PulseHashing`
/// re-exports it as its `Hex`) and OTLP trace and span ids written in place (`OTLPProtobuf`).
package enum Hex {
    /// `bytes` as lower-case hex, two characters per byte.
    ///
    /// Inlinable so that callers in other modules get a specialized call: contiguous collections
    /// (arrays, buffers, digests) go straight to the buffer encoder, without generic iteration.
    @inlinable
    package static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// The hex of a buffer, written straight into the string's storage.
    package static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            write(bytes, into: output)
            return bytes.count * 2
        }
    }

    /// Writes the lower-case hex of `bytes` into `output`, which holds at least `2 × bytes.count`
    /// bytes.
    package static func write(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) {
        precondition(output.count >= bytes.count * 2, "the output is shorter than the hex of the bytes")
        var index = 0
        for byte in bytes {
            output[index] = digit(byte >> 4)
            output[index + 1] = digit(byte & 0x0F)
            index += 2
        }
    }

    @inline(__always)
    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
