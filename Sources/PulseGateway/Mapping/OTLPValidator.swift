import Glibc
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

    /// The JSON rules of every OTLP message, indexed by ``MessageKind`` raw value.
    static let schemas: [Schema] = MessageKind.allCases.map { Schema($0.schema) }

    /// The fields of one OTLP message.
    final class Schema: Sendable {
        /// The JSON names, one after the other (``nameEnds`` delimits them).
        private let names: [UInt8]
        private let nameEnds: [Int]
        let forms: [Form]
        let displays: [String]

        /// The JSON fields of `message` (its development fields left out).
        init(_ message: MessageSchema) {
            let fields = message.fields.filter { !$0.isDevelopment }
            precondition(fields.count <= 64, "duplicate detection keeps one bit per field")
            var names: [UInt8] = []
            var nameEnds: [Int] = []
            for field in fields {
                field.name.withUTF8Buffer { names.append(contentsOf: $0) }
                nameEnds.append(names.count)
            }
            self.names = names
            self.nameEnds = nameEnds
            forms = fields.map(Form.init)
            displays = fields.map { $0.name.description }
        }

        /// The index of the field named by `key`, or `nil` for an unknown member.
        func field(_ key: JSONNode) -> Int? {
            key.withUTF8 { (bytes) -> Int? in
                names.withUnsafeBufferPointer { names in
                    nameEnds.withUnsafeBufferPointer { ends in
                        var start = 0
                        for index in 0..<ends.count {
                            let end = ends[index]
                            if end - start == bytes.count
                                && (bytes.isEmpty
                                    || memcmp(names.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0)
                            {
                                return index
                            }
                            start = end
                        }
                        return nil
                    }
                }
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
            let bit: UInt64 = 1 << UInt64(field)
            guard seen & bit == 0 else {
                var failure = Failure("duplicate key")
                failure.reversedPath.append(.key(schema.displays[field]))
                throw failure
            }
            seen |= bit
            guard !value.isNull else { continue }
            do {
                try check(value, schema.forms[field])
            } catch {
                var failure = error
                failure.reversedPath.append(.key(schema.displays[field]))
                throw failure
            }
        }
    }

    /// Checks one non-null value.
    static func check(_ value: JSONNode, _ form: Form) throws(Failure) {
        if form.isRepeated {
            guard value.kind == .array else { throw Failure(form.expectation) }
            var element = form
            element.isRepeated = false
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
        let valid: Bool
        switch form.value {
        case .string: valid = value.kind == .string
        case .bool: valid = value.kind == .bool
        case .int32: valid = integer(value).map { Int64(Int32.min)...Int64(Int32.max) ~= $0 } ?? false
        case .uint32: valid = integer(value).map { 0...Int64(UInt32.max) ~= $0 } ?? false
        case .int64: valid = integer(value) != nil
        case .uint64: valid = unsignedInteger(value) != nil
        case .double: valid = AnyValue.double(value) != nil
        case .enumeration(let kind): valid = enumValue(value, names: kind.names) != nil
        case .hexID(let count): valid = isHexID(value, count: count)
        case .bytes: valid = value.kind == .string
        case .message(let kind):
            guard value.kind == .object else { throw Failure(form.expectation) }
            try check(members: value, schemas[kind.rawValue])
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
