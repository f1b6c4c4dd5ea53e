import PulseHashing

/// Validation of the lowercase hex the uploader writes (encoding is ``PulseHashing/Hex/encode(_:)``).
extension Hex {
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
