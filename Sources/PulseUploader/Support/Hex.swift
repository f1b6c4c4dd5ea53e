/// Lowercase hexadecimal encoding and validation.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` is exactly `length` lowercase hex characters.
    static func isLowercaseHex(_ text: String, length: Int) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == length else { return false }
        return utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Whether `text` is all zeros (an invalid trace or span id in OTLP).
    static func isAllZeros(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == 0x30 }
    }
}
