import OTLPProtobuf

extension OTLPValidator {
    /// The JSON form a field takes: a trivial value (no reference counting while checking).
    struct Form: Sendable {
        /// The form of one value.
        enum Value: Sendable {
            case string
            case bool
            case int32
            case uint32
            case int64
            case uint64
            case double
            /// An open proto3 enum: an int32, or one of its value names.
            case enumeration(OTLPEnum)
            /// A trace or span id: this many hex characters, or empty.
            case hexID(Int)
            /// Any other `bytes` field: base64 text.
            case bytes
            /// An embedded message (its rules are ``OTLPValidator/schemas`` at the kind's raw value).
            case message(MessageKind)
        }

        var value: Value
        /// A repeated field: an array of `value`s.
        var isRepeated: Bool

        /// The JSON form of `field`.
        init(_ field: FieldSchema) {
            switch field.kind {
            case .string: value = .string
            case .bytesBase64: value = .bytes
            case .bytesHex(let bytes): value = .hexID(bytes * 2)
            case .bool: value = .bool
            case .int32, .sint32: value = .int32
            case .uint32, .fixed32: value = .uint32
            case .enumeration(let kind): value = .enumeration(kind)
            case .int64, .sfixed64: value = .int64
            case .uint64, .fixed64: value = .uint64
            case .double: value = .double
            case .message(let kind): value = .message(kind)
            }
            isRepeated = field.cardinality == .repeated
        }

        /// What the problem message says was expected.
        var expectation: String {
            if isRepeated { return "expected an array" }
            switch value {
            case .string: return "expected a string"
            case .bool: return "expected true or false"
            case .int32: return "expected a 32-bit integer"
            case .uint32: return "expected an unsigned 32-bit integer"
            case .int64: return "expected a 64-bit integer (a number or a decimal string)"
            case .uint64: return "expected an unsigned 64-bit integer (a number or a decimal string)"
            case .double: return #"expected a number (or "NaN", "Infinity", "-Infinity")"#
            case .enumeration: return "expected an enum value (an integer or its name)"
            case .hexID(let count): return "expected \(count) hex characters (or an empty string)"
            case .bytes: return "expected a base64 string"
            case .message: return "expected an object"
            }
        }
    }
}
