/// Hex dump helpers for the golden frame files.
enum Hex {
    /// Formats a frame: `# comment`, the 16-byte header on one line, then 16 payload bytes per line.
    static func format(frame bytes: [UInt8], comment: String) -> String {
        var lines = ["# " + comment]
        let header = Array(bytes.prefix(16))
        lines.append(line(header))
        var index = 16
        while index < bytes.count {
            lines.append(line(Array(bytes[index..<min(index + 16, bytes.count)])))
            index += 16
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Parses a hex dump, ignoring `#` comment lines and whitespace.
    static func parse(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for rawLine in text.split(separator: "\n") where !rawLine.hasPrefix("#") {
            for token in rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }) {
                guard token.count == 2, let byte = UInt8(token, radix: 16) else {
                    throw HexError(token: String(token))
                }
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func line(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
    }

    struct HexError: Error, CustomStringConvertible {
        let token: String
        var description: String { "bad hex token \(token)" }
    }
}
