/// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
/// as protobuf requires of `string` fields.
enum UTF8Validation {
    /// Whether `bytes` is well-formed UTF-8.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if isASCII(bytes) { return true }
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII fast path, eight bytes at a time.
            if count - index >= 8 {
                let word = UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                    continue
                }
            }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lowest: UInt8 = 0x80
            var highest: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF:
                length = 2
            case 0xE0:
                length = 3
                lowest = 0xA0  // no overlong three-byte forms
            case 0xE1...0xEC, 0xEE...0xEF:
                length = 3
            case 0xED:
                length = 3
                highest = 0x9F  // no surrogates
            case 0xF0:
                length = 4
                lowest = 0x90  // no overlong four-byte forms
            case 0xF1...0xF3:
                length = 4
            case 0xF4:
                length = 4
                highest = 0x8F  // nothing above U+10FFFF
            default:
                return false
            }
            guard count - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= lowest && second <= highest else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
                return false
            }
            index += length
        }
        return true
    }

    /// Whether every byte of `bytes` is below 0x80, the common case (keys, names, most values),
    /// checked a word at a time: the last word overlaps the one before it, and strings under eight
    /// bytes are read as two overlapping halves.
    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var high: UInt64 = 0
        if count >= 8 {
            var index = 0
            while index < count &- 8 {
                high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index &+= 8
            }
            high |= raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        } else if count >= 4 {
            high = UInt64(
                raw.loadUnaligned(as: UInt32.self) | raw.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
        } else {
            for index in 0..<count { high |= UInt64(base[index]) }
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
