/// An attribute value, the uploader's form of OTLP's `AnyValue`.
///
/// Literals build values directly:
///
/// ```swift
/// let attributes: [String: AttributeValue] = ["screen": "home", "count": 3, "ratio": 0.5, "cold": true]
/// ```
public enum AttributeValue: Sendable, Hashable {
    /// A UTF-8 string (`stringValue`).
    case string(String)
    /// A boolean (`boolValue`).
    case bool(Bool)
    /// A 64-bit integer (`intValue`, sent as a decimal string).
    case int(Int64)
    /// A double (`doubleValue`).
    case double(Double)
    /// Raw bytes (`bytesValue`, sent as base64).
    case bytes([UInt8])
    /// An array of values (`arrayValue`).
    case array([AttributeValue])
    /// A map of values (`kvlistValue`), sent with its keys sorted.
    case map([String: AttributeValue])
}

extension AttributeValue: ExpressibleByStringLiteral {
    /// Creates a string value.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension AttributeValue: ExpressibleByIntegerLiteral {
    /// Creates an integer value.
    public init(integerLiteral value: Int64) {
        self = .int(value)
    }
}

extension AttributeValue: ExpressibleByFloatLiteral {
    /// Creates a double value.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension AttributeValue: ExpressibleByBooleanLiteral {
    /// Creates a boolean value.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}
