/// Lower-case hexadecimal encoding.
public enum Hex {
    /// `bytes` as lower-case hex, two characters per byte.
    ///
    /// Inlinable so that callers in other modules get a specialized call: contiguous collections
    /// (arrays, buffers, digests) go straight to the buffer encoder, without generic iteration.
    @inlinable
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// The hex of a buffer, written straight into the string's storage.
    @usableFromInline
    static func encode(buffer bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            var index = 0
            for byte in bytes {
                output[index] = digit(byte >> 4)
                output[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    @inline(__always)
    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
