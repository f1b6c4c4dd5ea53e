public import PulseKit

/// The one error type of the `PulseProtocol` module: the shared ``PulseError`` shape with
/// ``PulseProtocolErrorCode``.
///
/// Thrown by the payload decoders (the fast byte codecs, and the `Decodable` conformance of
/// ``ConfigSnapshot`` that config files use) and by
/// validating initialisers such as ``ControlRoute/init(validating:)``. The description names the
/// offending field or value token but never contains payload bytes or secrets: of an underlying
/// cause (a `DecodingError` may quote the value it rejected) it names only the type.
public typealias PulseProtocolError = PulseError<PulseProtocolErrorCode>

/// What went wrong in the `PulseProtocol` module, coarse enough to branch on.
public enum PulseProtocolErrorCode: String, PulseErrorCode, CaseIterable {
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

    /// Names only the cause's type: a `DecodingError` or parser error may quote payload values.
    public static func describe(underlying: any Error & Sendable) -> String {
        "\(type(of: underlying))"
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
