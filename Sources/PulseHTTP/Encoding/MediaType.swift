/// A parsed media type (RFC 9110 §8.3.1), such as the value of a `Content-Type` header.
///
/// Type, subtype and parameter names are compared case-insensitively and stored lowercased;
/// parameter values keep their case (quoted values are unquoted). `MediaType.parse("Application/JSON;
/// charset=\"utf-8\"")` gives type `application`, subtype `json` and parameter `charset` = `utf-8`.
package struct MediaType: Sendable, Hashable, CustomStringConvertible {
    /// The top-level type, lowercased (`application`).
    package let type: String
    /// The subtype, lowercased (`json`).
    package let subtype: String
    /// The parameters by lowercased name; when a name repeats, the first value wins.
    package let parameters: [String: String]

    /// Creates a media type; type, subtype and parameter names are lowercased.
    package init(type: String, subtype: String, parameters: [String: String] = [:]) {
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        var lowered: [String: String] = [:]
        for (name, value) in parameters { lowered[name.lowercased()] = value }
        self.parameters = lowered
    }

    /// `application/json`.
    package static let json = MediaType(type: "application", subtype: "json")
    /// `application/x-protobuf`.
    package static let protobuf = MediaType(type: "application", subtype: "x-protobuf")

    /// `type/subtype` without parameters.
    package var essence: String { "\(type)/\(subtype)" }

    /// The value of a parameter (name compared case-insensitively), or `nil`.
    package func parameter(_ name: String) -> String? {
        parameters[name.lowercased()]
    }

    /// Whether type and subtype equal `other`'s, ignoring parameters; `*` in `other` matches anything.
    package func matches(_ other: MediaType) -> Bool {
        (other.type == "*" || other.type == type) && (other.subtype == "*" || other.subtype == subtype)
    }

    /// `type/subtype` followed by the parameters sorted by name, values quoted when needed.
    package var description: String {
        var text = essence
        for name in parameters.keys.sorted() {
            let value = parameters[name] ?? ""
            let isToken = !value.isEmpty && value.utf8.allSatisfy(Self.isTokenByte)
            text += isToken ? "; \(name)=\(value)" : "; \(name)=\"\(Self.escaped(value))\""
        }
        return text
    }

    /// Parses a media type; returns `nil` when `text` is not one (missing subtype, characters that are
    /// not allowed in tokens, a parameter without `=`, an unterminated quoted string).
    package static func parse(_ text: String) -> MediaType? {
        var scanner = Scanner(Array(text.utf8))
        scanner.skipWhitespace()
        guard let type = scanner.token(), scanner.consume(UInt8(ascii: "/")), let subtype = scanner.token() else {
            return nil
        }
        var parameters: [String: String] = [:]
        while true {
            scanner.skipWhitespace()
            if scanner.isAtEnd { break }
            guard scanner.consume(UInt8(ascii: ";")) else { return nil }
            scanner.skipWhitespace()
            if scanner.isAtEnd { break }
            if scanner.peek == UInt8(ascii: ";") { continue }  // Empty parameter, tolerated.
            guard let name = scanner.token(), scanner.consume(UInt8(ascii: "=")) else { return nil }
            let value: String
            if scanner.peek == UInt8(ascii: "\"") {
                guard let quoted = scanner.quotedString() else { return nil }
                value = quoted
            } else {
                guard let token = scanner.token() else { return nil }
                value = token
            }
            let key = name.lowercased()
            if parameters[key] == nil { parameters[key] = value }
        }
        return MediaType(type: type, subtype: subtype, parameters: parameters)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// A cursor over the bytes of a header value.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var isAtEnd: Bool { index >= bytes.count }
        var peek: UInt8? { isAtEnd ? nil : bytes[index] }

        mutating func skipWhitespace() {
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func token() -> String? {
            let start = index
            while let byte = peek, MediaType.isTokenByte(byte) { index += 1 }
            guard index > start else { return nil }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// A quoted-string, unescaped; `nil` when unterminated or containing control characters.
        mutating func quotedString() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            var value: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek else { return nil }
                    index += 1
                    value.append(escaped)
                case 0x00...0x08, 0x0A...0x1F, 0x7F:
                    return nil
                default:
                    value.append(byte)
                }
            }
            return nil
        }
    }
}
