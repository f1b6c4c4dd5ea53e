/// The one error type of the `PulseProtocol` module.
///
/// Thrown by the payload decoders (the fast byte codecs, and the `Decodable` conformance of
/// ``ConfigSnapshot`` that config files use) and by
/// validating initialisers such as ``ControlRoute/init(validating:)``. The description names the
/// offending field or value token but never contains payload bytes or secrets.
public struct PulseProtocolError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, coarse enough to branch on.
    public enum Code: String, Sendable, Hashable {
        /// The bytes are not well-formed JSON.
        case malformedJSON
        /// A required field is absent.
        case missingField
        /// A field holds a JSON value of the wrong type (for example a string where an integer belongs).
        case typeMismatch
        /// An event `kind` outside the eight case-sensitive kinds of protocol version 2.
        case unknownEventKind
        /// A field has the right type but a value the contract forbids (an empty event array, a
        /// sampling rate outside 0...1, a malformed route, ...).
        case invalidValue
    }

    /// The category of the failure.
    public let code: Code
    /// A human-readable explanation naming the field; never contains payload bytes.
    public let message: String
    /// The lower-level cause, if any (for example a `DecodingError` or a JSON parser error).
    public let underlying: (any Error)?

    /// Creates an error.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        var text = "PulseProtocolError.\(code.rawValue): \(message)"
        if let underlying {
            text += " (caused by \(type(of: underlying)))"
        }
        return text
    }
}

extension PulseProtocolError {
    /// Quotes a short wire token (an event kind, a route, an enum value) for an error message,
    /// truncating it and escaping control characters so a hostile payload cannot flood logs.
    static func quoted(_ token: String, limit: Int = 64) -> String {
        var out = "\""
        var count = 0
        for scalar in token.unicodeScalars {
            if count == limit {
                out += "..."
                break
            }
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return out + "\""
    }
}
