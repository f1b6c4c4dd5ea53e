/// Hex text <-> bytes for fixtures. Whitespace is ignored and `#` starts a comment to end of line.
enum Hex {
    struct FormatError: Error, CustomStringConvertible {
        var description: String
    }

    static func decode(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        var inComment = false
        for scalar in text.unicodeScalars {
            if inComment {
                if scalar == "\n" { inComment = false }
                continue
            }
            if scalar == "#" {
                inComment = true
                continue
            }
            if scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" {
                continue
            }
            guard let nibble = nibble(scalar) else {
                throw FormatError(description: "invalid hex character \(scalar)")
            }
            if let pending = high {
                bytes.append(pending << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        if high != nil {
            throw FormatError(description: "odd number of hex digits")
        }
        return bytes
    }

    /// Lower-case hex, 16 space-separated bytes per line.
    static func encode(_ bytes: [UInt8], bytesPerLine: Int = 16) -> String {
        var lines: [String] = []
        var index = 0
        while index < bytes.count {
            let line = bytes[index..<min(index + bytesPerLine, bytes.count)]
            lines.append(line.map(byte).joined(separator: " "))
            index += bytesPerLine
        }
        return lines.joined(separator: "\n")
    }

    static func compact(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map(byte).joined()
    }

    private static func byte(_ value: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(value >> 4)], digits[Int(value & 0xF)]])
    }

    private static func nibble(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: return UInt8(scalar.value - 0x30)
        case 0x41...0x46: return UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(scalar.value - 0x61 + 10)
        default: return nil
        }
    }
}
