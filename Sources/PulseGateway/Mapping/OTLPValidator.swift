import Glibc
import OTLPProtobuf
import PulseHTTP
import PulseJSON

/// The JSON types of an OTLP/JSON export request, as proto3's JSON mapping has them: a known
/// member of the wrong JSON type fails the whole request (400, the message names its JSON path,
/// e.g. `resourceLogs[0].scopeLogs[0].logRecords: expected an array`); unknown members are
/// ignored; `null` means "absent" for any member, but not as an element of an array. A known
/// member that appears twice in one object fails the request too (`resourceLogs: duplicate key`):
/// the parser keeps both, and the mapper would read only one.
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
/// The mapping walk (``ResourceMapper``) applies these checks object by object as it reads the
/// request (``check(members:_:deferring:)``: the members it goes on to read itself are only
/// checked for being an object or an array there), so a request is walked once. The walk stops at
/// the first problem it meets; ``validate(_:signal:)`` then checks the request in document order
/// to name the first problem and its path, as a separate check before the mapping did.
enum OTLPValidator {
    /// Throws ``IntakeRejection`` (400) naming the JSON path of the first wrongly typed member, in
    /// document order. `root` must be an object (the mapper checks that first).
    static func validate(_ root: JSONNode, signal: OTLPSignal) throws(IntakeRejection) {
        do {
            try root.withCursor { (root) throws(Failure) in
                try check(members: root, schemas[MessageKind.request(signal).rawValue])
            }
        } catch {
            throw IntakeRejection(.badRequest, error.description)
        }
    }

    // MARK: - Checking

    /// Checks the known members of an object (the caller checked that it is one); each may
    /// appear once. The message-typed fields in `deferred` (bits of ``Schema/mask(_:)``) are only
    /// checked for being an object (an array when repeated): the caller reads them and checks
    /// their content (``check(element:)``, then their members) as it does.
    static func check(members object: JSONCursor, _ schema: Schema, deferring deferred: UInt64 = 0) throws(Failure) {
        try check(members: object, schema, deferring: deferred) { _, _ in }
    }

    /// ``check(members:_:deferring:)``, calling `found` with each known member's field index and
    /// value as the pass meets it (before checking it). The scalar fields in `folded` are not
    /// checked here: the caller checks them as it reads them (``MappingWalk/read(_:field:of:_:)``).
    @inline(__always)
    static func check(
        members object: JSONCursor, _ schema: Schema, deferring deferred: UInt64, folding folded: UInt64 = 0,
        found: (Int, JSONCursor) -> Void
    ) throws(Failure) {
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
            found(field, value)
            guard !value.isNull, folded & bit == 0 else { continue }
            do throws(Failure) {
                let form = schema.forms[field]
                if deferred & bit != 0 {
                    guard value.kind == (form.isRepeated ? .array : .object) else { throw Failure(form.expectation) }
                } else if case .string = form.value, !form.isRepeated {
                    // The commonest check (names, keys, texts) without the call.
                    guard value.kind == .string else { throw Failure(form.expectation) }
                } else {
                    try check(value, form)
                }
            } catch {
                var failure = error
                failure.reversedPath.append(.key(schema.displays[field]))
                throw failure
            }
        }
    }

    /// Checks the known members of `object` against the rules of `kind`.
    static func check(members object: JSONCursor, _ kind: MessageKind, deferring deferred: UInt64 = 0) throws(Failure) {
        try check(members: object, schemas[kind.rawValue], deferring: deferred)
    }

    /// Checks that an element of a repeated message field (which the caller walks) is an object.
    static func check(element item: JSONCursor) throws(Failure) {
        guard item.kind == .object else {
            throw Failure(item.isNull ? "expected an object, not null" : "expected an object")
        }
    }

    /// Checks a non-null message of `kind` and everything in it.
    static func check(message value: JSONCursor, _ kind: MessageKind) throws(Failure) {
        guard value.kind == .object else { throw Failure("expected an object") }
        try check(members: value, schemas[kind.rawValue])
    }

    /// Checks one non-null value.
    static func check(_ value: JSONCursor, _ form: Form) throws(Failure) {
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
        case .enumeration(let kind): valid = enumValue(value, of: kind) != nil
        case .hexID(let count): valid = isHexID(value, count: count)
        case .bytes: valid = value.kind == .string
        case .message(let kind):
            guard value.kind == .object else { throw Failure(form.expectation) }
            try check(members: value, schemas[kind.rawValue])
            return
        }
        guard valid else { throw Failure(form.expectation) }
    }

    /// ``integer(_:)-(JSONCursor)`` of a node.
    static func integer(_ value: JSONNode) -> Int64? { value.withCursor { integer($0) } }

    /// ``unsignedInteger(_:)-(JSONCursor)`` of a node.
    static func unsignedInteger(_ value: JSONNode) -> UInt64? { value.withCursor { unsignedInteger($0) } }

    /// An integer from a number (integral doubles too) or a decimal string (`-?[0-9]+`).
    static func integer(_ value: JSONCursor) -> Int64? {
        if let number = value.int64 { return number }
        return value.withUTF8 { bytes -> Int64? in
            let negative = bytes.first == UInt8(ascii: "-")
            guard let magnitude = decimalValue(UnsafeBufferPointer(rebasing: bytes[(negative ? 1 : 0)...])) else {
                return nil
            }
            if negative { return magnitude <= 1 << 63 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
        } ?? nil
    }

    /// An unsigned integer from a number or a decimal string (`[0-9]+`).
    static func unsignedInteger(_ value: JSONCursor) -> UInt64? {
        if let number = value.uint64 { return number }
        return value.withUTF8 { decimalValue($0) } ?? nil
    }

    /// The value of the decimal digits `bytes` (`[0-9]+`, as `UInt64(_:)` reads them); `nil` when
    /// `bytes` is empty, holds anything else, or is beyond `UInt64.max`.
    static func decimalValue(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        let count = bytes.count
        guard count > 0 else { return nil }
        guard count <= 19 else {
            return isDecimal(bytes, signed: false) ? digits(bytes) : nil
        }
        // Up to 19 digits (below 10^19) cannot overflow: eight at a time, then one by one.
        var value: UInt64 = 0
        var offset = 0
        while offset + 8 <= count {
            let word = UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)
            guard let eight = eightDigits(word) else { return nil }
            value = value &* 100_000_000 &+ eight
            offset += 8
        }
        while offset < count {
            let digit = bytes[offset] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ UInt64(digit)
            offset += 1
        }
        return value
    }

    /// The value of eight decimal digits read as one little-endian word (the first digit the most
    /// significant), or `nil` when a byte is not a digit.
    @inline(__always)
    private static func eightDigits(_ word: UInt64) -> UInt64? {
        // Every byte 0x30…0x3F, and still 0x3_ with 6 added: 0x30…0x39.
        let highNibbles: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        guard word & highNibbles == 0x3030_3030_3030_3030,
            (word &+ 0x0606_0606_0606_0606) & highNibbles == 0x3030_3030_3030_3030
        else { return nil }
        // Pairs, then fours, then all eight: each step multiplies the higher half by its base.
        var value = word & 0x0F0F_0F0F_0F0F_0F0F
        value = (value &* (10 << 8 + 1)) >> 8 & 0x00FF_00FF_00FF_00FF
        value = (value &* (100 << 16 + 1)) >> 16 & 0x0000_FFFF_0000_FFFF
        return (value &* (10_000 << 32 + 1)) >> 32
    }

    /// The value of the decimal digits `bytes` (more than 19), `nil` beyond `UInt64.max`.
    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    /// Whether `bytes` are decimal digits, with a leading `-` when `signed` (no `+`, no spaces).
    static func isDecimal(_ bytes: UnsafeBufferPointer<UInt8>, signed: Bool) -> Bool {
        var digits = bytes[...]
        if signed, digits.first == UInt8(ascii: "-") { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// A value of the enum `kind`: an int32 (number or decimal string) or one of its value names
    /// (looked up only for a string that is not a number).
    static func enumValue(_ value: JSONCursor, of kind: OTLPEnum) -> Int64? {
        if let number = integer(value) {
            return Int64(Int32.min)...Int64(Int32.max) ~= number ? number : nil
        }
        guard value.kind == .string else { return nil }
        for (number, name) in kind.names.enumerated() where value.stringEquals(name) { return Int64(number) }
        return nil
    }

    /// Whether `value` is a string of `count` hex characters (either case) or empty.
    static func isHexID(_ value: JSONCursor, count: Int) -> Bool {
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
