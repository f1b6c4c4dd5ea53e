import OTLPProtobuf
import PulseJSON

/// Reading OTLP/JSON `AnyValue`s and attribute lists.
enum AnyValue {
    /// The string of a `{"stringValue": …}`, or `nil`.
    static func string(_ value: JSONCursor?) -> String? {
        value?["stringValue"]?.string
    }

    /// An integer from `intValue` (decimal string or number), or a `stringValue` holding digits.
    static func int(_ value: JSONCursor?) -> Int64? {
        guard let value else { return nil }
        if let node = value["intValue"] { return int64(node) }
        if let text = value["stringValue"]?.string { return Int64(text) }
        return nil
    }

    /// ``int(_:)-(JSONCursor?)`` of a node.
    static func int(_ value: JSONNode?) -> Int64? { value?.withCursor { int($0) } }

    /// ``int64(_:)-(JSONCursor?)`` of a node.
    static func int64(_ node: JSONNode) -> Int64? { node.withCursor { int64($0) } }

    /// ``nanosToMillis(_:)-(JSONCursor?)`` of a node.
    static func nanosToMillis(_ node: JSONNode) -> Int64? { node.withCursor { nanosToMillis($0) } }

    /// ``write(_:into:depth:)`` of a node.
    static func write(_ value: JSONNode?, into writer: inout JSONWriter) throws(MappingProblem) {
        guard let value else { return writer.null() }
        try value.withCursor { (value) throws(MappingProblem) in try write(value, into: &writer) }
    }

    /// ``write(_:into:depth:)`` as one run of `writer`'s.
    static func write(_ value: JSONCursor?, into writer: inout JSONWriter) throws(MappingProblem) {
        try writer.withRun { (run) throws(MappingProblem) in try write(value, into: &run) }
    }

    /// An OTLP int64 field: a decimal string or a number.
    static func int64(_ node: JSONCursor?) -> Int64? {
        guard let node else { return nil }
        // Decimal strings without making a `String`; any other text as `Int64(_:)` reads it.
        return OTLPValidator.integer(node) ?? node.string.flatMap { Int64($0) }
    }

    /// An OTLP fixed64 nanosecond timestamp in milliseconds (0 and missing give `nil`).
    static func nanosToMillis(_ node: JSONCursor?) -> Int64? {
        guard let node else { return nil }
        // Decimal strings without making a `String`; any other text as `UInt64(_:)` reads it.
        guard let nanos = OTLPValidator.unsignedInteger(node) ?? node.string.flatMap({ UInt64($0) }) else { return nil }
        return millis(nanos: nanos)
    }

    /// A nanosecond timestamp in milliseconds (0 gives `nil`).
    static func millis(nanos: UInt64) -> Int64? {
        nanos > 0 ? Int64(nanos / 1_000_000) : nil
    }

    /// An OTLP double field: a number, the strings `NaN`, `Infinity`, `-Infinity`, or a decimal
    /// string (`"1.5"`, `"-2e3"`), as proto3 JSON allows.
    static func double(_ node: JSONCursor?) -> Double? {
        guard let node else { return nil }
        if let number = node.double { return number }
        guard let text = node.string else { return nil }
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            // Only digits, sign, point and exponent: `Double("inf")`, `"nan"` and hex floats are not
            // proto3 JSON.
            let decimal = text.utf8.allSatisfy {
                switch $0 {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                    UInt8(ascii: "e"), UInt8(ascii: "E"):
                    return true
                default: return false
                }
            }
            return decimal ? Double(text) : nil
        }
    }

    /// An OTLP enum field of the enum `kind`: an int32 (a number or a decimal string) or one of its
    /// value names (the index is the value); `nil` when missing or neither.
    static func enumValue(_ node: JSONCursor?, of kind: OTLPEnum) -> Int64? {
        guard let node else { return nil }
        return OTLPValidator.enumValue(node, of: kind)
    }

    /// Writes an `AnyValue` as plain JSON: strings, booleans, int64 as numbers, doubles, arrays,
    /// key/value lists as objects (sensitive keys redacted at every level), bytes as their base64
    /// text; an empty or unknown value as `null`. Checks the value's JSON types as it goes (the
    /// caller checked that it is an object, or `null`), everything it does not write too.
    static func write(_ value: JSONCursor?, into run: inout JSONWriter.Run, depth: Int = 0) throws(MappingProblem) {
        guard let value, value.kind == .object else {
            run.null()
            return
        }
        guard depth < 32 else {
            run.null()
            try MappingWalk.check(skipped: value, .anyValue)
            return
        }
        // One pass over the members: the first value member is written, the others only checked.
        let schema = valueSchema
        var seen: UInt64 = 0
        var written = false
        for (key, member) in value.memberNodes {
            guard let field = schema.field(key) else { continue }
            let bit: UInt64 = 1 << UInt64(field)
            guard seen & bit == 0 else { throw .invalid(OTLPValidator.Failure("duplicate key")) }
            seen |= bit
            guard !written else {
                if !member.isNull { try MappingWalk.check(member, field: field, of: .anyValue) }
                continue
            }
            written = true
            // A scalar is checked as it is read (``MappingWalk/read(_:field:of:_:)``: each read
            // returns `nil` exactly when the member's check fails); `null` is written as `null`.
            switch valueMembers[field] {
            case .string:
                let string: Void? = try MappingWalk.read(member, field: field, of: .anyValue) {
                    $0.withUTF8 { run.string(utf8: $0) }
                }
                if string == nil { run.null() }
            case .bool:
                if let flag = try MappingWalk.read(member, field: field, of: .anyValue, \.bool) {
                    run.bool(flag)
                } else {
                    run.null()
                }
            case .int:
                if let number = try MappingWalk.read(member, field: field, of: .anyValue, OTLPValidator.integer) {
                    run.int(number)
                } else {
                    run.null()
                }
            case .double:
                if let number = try MappingWalk.read(member, field: field, of: .anyValue, double) {
                    run.double(number)
                } else {
                    run.null()
                }
            case .array, .list:
                if !member.isNull, member.kind != .object {
                    throw .invalid(OTLPValidator.Failure("expected an object"))
                }
                try writeNested(member, list: valueMembers[field] == .list, into: &run, depth: depth)
            }
        }
        if !written { run.null() }
    }

    /// What a member of an `AnyValue` holds (`bytesValue` is written as its base64 string).
    private enum ValueMember {
        case string, bool, int, double, array, list
    }

    private static let valueSchema = OTLPValidator.schemas[MessageKind.anyValue.rawValue]
    /// By field index of ``valueSchema``.
    private static let valueMembers: [ValueMember] = valueSchema.displays.map { name in
        switch name {
        case "stringValue", "bytesValue": .string
        case "boolValue": .bool
        case "intValue": .int
        case "doubleValue": .double
        case "arrayValue": .array
        case "kvlistValue": .list
        default: preconditionFailure("AnyValue has no member \(name) to write")
        }
    }

    /// Writes an `arrayValue` as an array or a `kvlistValue` as an object (`list`), checking its
    /// members and each element.
    private static func writeNested(_ member: JSONCursor, list: Bool, into run: inout JSONWriter.Run, depth: Int)
        throws(MappingProblem)
    {
        if list { run.beginObject() } else { run.beginArray() }
        if !member.isNull { try MappingWalk.enter(member, list ? .keyValueList : .arrayValue) }
        if let values = member["values"] {
            for element in values.elements {
                guard list else {
                    try MappingWalk.check(element: element)
                    try write(element, into: &run, depth: depth + 1)
                    continue
                }
                let (name, value) = try MappingWalk.keyValue(element)
                guard let name, name.withUTF8({ run.key(utf8: $0) }) != nil else {
                    try MappingWalk.check(skipped: value, .anyValue)
                    continue
                }
                if name.withUTF8({ Redaction.isSensitive(utf8: $0) }) == true {
                    run.string(Redaction.placeholder)
                    try MappingWalk.check(skipped: value, .anyValue)
                } else {
                    try write(value, into: &run, depth: depth + 1)
                }
            }
        }
        if list { run.endObject() } else { run.endArray() }
    }
}
