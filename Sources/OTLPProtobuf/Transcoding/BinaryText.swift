import PulseKit

/// Text forms of `bytes` fields: lowercase hex (trace and span ids) and base64 (everything else),
/// written in place (``TranscodingOutput`` outputs take them without an intermediate `String`).
enum BinaryText {
    private static let base64Alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Lowercase hex, two digits per byte.
    static func hex(_ bytes: UnsafeBufferPointer<UInt8>) -> String { Hex.encode(buffer: bytes) }

    /// Writes the lowercase hex of `bytes` into `output` (`2 × bytes.count` bytes).
    static func writeHex(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) {
        Hex.write(bytes, into: output)
    }

    /// The length of the base64 text of `count` bytes.
    static func base64Count(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Standard base64 (RFC 4648 section 4) with `=` padding, as protobuf's JSON mapping writes bytes.
    static func base64(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: base64Count(bytes.count)) { output in
            writeBase64(bytes, into: output)
            return base64Count(bytes.count)
        }
    }

    /// Writes the base64 of `bytes` into `output` (``base64Count(_:)`` bytes).
    static func writeBase64(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) {
        var index = 0
        var position = 0
        while position + 3 <= bytes.count {
            let chunk = UInt32(bytes[position]) << 16 | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2])
            output[index] = base64Alphabet[Int(chunk >> 18 & 63)]
            output[index + 1] = base64Alphabet[Int(chunk >> 12 & 63)]
            output[index + 2] = base64Alphabet[Int(chunk >> 6 & 63)]
            output[index + 3] = base64Alphabet[Int(chunk & 63)]
            index += 4
            position += 3
        }
        let rest = bytes.count - position
        if rest > 0 {
            var chunk = UInt32(bytes[position]) << 16
            if rest == 2 { chunk |= UInt32(bytes[position + 1]) << 8 }
            output[index] = base64Alphabet[Int(chunk >> 18 & 63)]
            output[index + 1] = base64Alphabet[Int(chunk >> 12 & 63)]
            output[index + 2] = rest == 2 ? base64Alphabet[Int(chunk >> 6 & 63)] : UInt8(ascii: "=")
            output[index + 3] = UInt8(ascii: "=")
        }
    }
}
