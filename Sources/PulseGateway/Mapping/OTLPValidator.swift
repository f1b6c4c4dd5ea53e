import OTLPProtobuf
import PulseJSON

/// Checks the JSON types of an OTLP/JSON export request before it is mapped, as proto3's JSON
/// mapping does: a known member of the wrong JSON type fails the whole request (400, the message
/// names its JSON path, e.g. `resourceLogs[0].scopeLogs[0].logRecords: expected an array`);
/// unknown members are ignored; `null` means "absent" for any member, but not as an element of
/// an array. A known member that appears twice in one object fails the request too
/// (`resourceLogs: duplicate key`): the parser keeps both, and the mapper would read only one.
///
/// Accepted forms (see `docs/mapping.md`, "Validation"): 64-bit integers as numbers or decimal
/// strings; 32-bit integers as numbers (decimal strings too, as proto3 JSON allows); enums as
/// integers, decimal strings or their proto names; doubles as numbers, decimal strings, `"NaN"`,
/// `"Infinity"`, `"-Infinity"`; trace and span ids as hex (32 / 16 characters, or empty);
/// `bytesValue` as a string.
///
/// The rules come from the one OTLP schema description, `OTLPProtobuf`'s ``MessageSchema`` table
/// (field names, kinds, cardinality); its development fields (profiles' dictionary indexes,
/// entity references) are not part of the JSON request schema and are ignored like unknown members.
///
/// A separate pass over the tape (no allocation on success), so the mapper itself keeps reading
/// only what it needs and a rejected request never reaches it.
enum OTLPValidator {
    /// Throws ``IntakeRejection`` (400) naming the JSON path of the first wrongly typed member.
    /// `root` must be an object (the mapper checks that first).
    static func validate(_ root: JSONNode, signal: OTLPSignal) throws(IntakeRejection) {
        do {
            try check(members: root, schemas[MessageKind.request(signal).rawValue])
        } catch {
            throw IntakeRejection(.badRequest, error.description)
        }
    }

    // MARK: - Schema

    /// The JSON form a field takes.
    indirect enum Form: Sendable {
        case string
        case bool
        case int32
        case uint32
        case int64
        case uint64
        case double
        /// An open proto3 enum: an int32, or one of these names (the index is the value).
        case enumeration([String])
        /// A trace or span id: this many hex characters, or empty.
        case hexID(Int)
        /// Any other `bytes` field: base64 text.
        case bytes
        /// An embedded message (its rules are ``OTLPValidator/schemas`` at the kind's raw value).
        case message(MessageKind)
        case repeated(Form)

        /// The JSON form of `field`.
        init(_ field: FieldSchema) {
            let value: Form
            switch field.kind {
            case .string: value = .string
            case .bytesBase64: value = .bytes
            case .bytesHex(let bytes): value = .hexID(bytes * 2)
            case .bool: value = .bool
            case .int32, .sint32: value = .int32
            case .uint32, .fixed32: value = .uint32
            case .enumeration(let kind): value = .enumeration(kind.names)
            case .int64, .sfixed64: value = .int64
            case .uint64, .fixed64: value = .uint64
            case .double: value = .double
            case .message(let kind): value = .message(kind)
            }
            self = field.cardinality == .repeated ? .repeated(value) : value
        }

        /// What the problem message says was expected.
        var expectation: String {
            switch self {
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
            case .repeated: return "expected an array"
            }
        }
    }

    /// The JSON rules of every OTLP message, indexed by ``MessageKind`` raw value.
    static let schemas: [Schema] = MessageKind.allCases.map { Schema($0.schema) }

    /// The fields of one OTLP message.
    final class Schema: Sendable {
        let fields: [(name: [UInt8], display: String, form: Form)]

        /// The JSON fields of `message` (its development fields left out).
        init(_ message: MessageSchema) {
            let fields = message.fields.filter { !$0.isDevelopment }
            precondition(fields.count <= 64, "duplicate detection keeps one bit per field")
            self.fields = fields.map { field in
                field.name.withUTF8Buffer { (Array($0), field.name.description, Form(field)) }
            }
        }

        /// The field named by `key` and its position, or `nil` for an unknown member.
        func field(_ key: JSONNode) -> (index: Int, display: String, form: Form)? {
            key.withUTF8 { bytes in
                for (index, field) in fields.enumerated() where field.name.count == bytes.count {
                    if field.name.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
                        return (index, field.display, field.form)
                    }
                }
                return nil
            } ?? nil
        }
    }

    // MARK: - Failures

    /// A problem and the path to it, innermost component first while unwinding.
    struct Failure: Error, CustomStringConvertible {
        enum Component {
            case key(String)
            case index(Int)
        }

        var reversedPath: [Component] = []
        var problem: String

        init(_ problem: String) { self.problem = problem }

        var description: String {
            var path = ""
            for component in reversedPath.reversed() {
                switch component {
                case .key(let name): path += path.isEmpty ? name : "." + name
                case .index(let index): path += "[\(index)]"
                }
            }
            return path.isEmpty ? problem : path + ": " + problem
        }
    }

    // MARK: - Checking

    /// Checks the known members of an object (the caller checked that it is one); each may
    /// appear once.
    static func check(members object: JSONNode, _ schema: Schema) throws(Failure) {
        var seen: UInt64 = 0
        for (key, value) in object.memberNodes {
            guard let field = schema.field(key) else { continue }
            let bit: UInt64 = 1 << UInt64(field.index)
            guard seen & bit == 0 else {
                var failure = Failure("duplicate key")
                failure.reversedPath.append(.key(field.display))
                throw failure
            }
            seen |= bit
            guard !value.isNull else { continue }
            do {
                try check(value, field.form)
            } catch {
                var failure = error
                failure.reversedPath.append(.key(field.display))
                throw failure
            }
        }
    }

    /// Checks one non-null value.
    static func check(_ value: JSONNode, _ form: Form) throws(Failure) {
        let valid: Bool
        switch form {
        case .string: valid = value.kind == .string
        case .bool: valid = value.kind == .bool
        case .int32: valid = integer(value).map { Int64(Int32.min)...Int64(Int32.max) ~= $0 } ?? false
        case .uint32: valid = integer(value).map { 0...Int64(UInt32.max) ~= $0 } ?? false
        case .int64: valid = integer(value) != nil
        case .uint64: valid = unsignedInteger(value) != nil
        case .double: valid = AnyValue.double(value) != nil
        case .enumeration(let names): valid = enumValue(value, names: names) != nil
        case .hexID(let count): valid = isHexID(value, count: count)
        case .bytes: valid = value.kind == .string
        case .message(let kind):
            guard value.kind == .object else { throw Failure(form.expectation) }
            try check(members: value, schemas[kind.rawValue])
            return
        case .repeated(let element):
            guard value.kind == .array else { throw Failure(form.expectation) }
            for (index, item) in value.elements.enumerated() {
                do throws(Failure) {
                    guard !item.isNull else { throw Failure(element.expectation + ", not null") }
                    try check(item, element)
                } catch {
                    var failure = error
                    failure.reversedPath.append(.index(index))
                    throw failure
                }
            }
            return
        }
        guard valid else { throw Failure(form.expectation) }
    }

    /// An integer from a number (integral doubles too) or a decimal string (`-?[0-9]+`).
    static func integer(_ value: JSONNode) -> Int64? {
        if let number = value.int64 { return number }
        return value.withUTF8 { isDecimal($0, signed: true) } == true ? value.string.flatMap { Int64($0) } : nil
    }

    /// An unsigned integer from a number or a decimal string (`[0-9]+`).
    static func unsignedInteger(_ value: JSONNode) -> UInt64? {
        if let number = value.uint64 { return number }
        return value.withUTF8 { isDecimal($0, signed: false) } == true ? value.string.flatMap { UInt64($0) } : nil
    }

    /// Whether `bytes` are decimal digits, with a leading `-` when `signed` (no `+`, no spaces).
    static func isDecimal(_ bytes: UnsafeBufferPointer<UInt8>, signed: Bool) -> Bool {
        var digits = bytes[...]
        if signed, digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// An enum value: an int32 (number or decimal string) or one of `names`.
    static func enumValue(_ value: JSONNode, names: [String]) -> Int64? {
        if let number = integer(value) {
            return Int64(Int32.min)...Int64(Int32.max) ~= number ? number : nil
        }
        guard value.kind == .string else { return nil }
        for (number, name) in names.enumerated() where value.stringEquals(name) { return Int64(number) }
        return nil
    }

    /// Whether `value` is a string of `count` hex characters (either case) or empty.
    static func isHexID(_ value: JSONNode, count: Int) -> Bool {
        value.withUTF8 { bytes in
            guard bytes.isEmpty || bytes.count == count else { return false }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"):
                    continue
                default: return false
                }
            }
            return true
        } ?? false
    }
}
