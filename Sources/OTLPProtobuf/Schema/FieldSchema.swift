/// How a field's value is encoded on the wire and written in OTLP/JSON.
package enum FieldKind: Sendable {
    /// `string`: UTF-8 validated, a JSON string.
    case string
    /// `bytes` holding data: standard base64 with padding (protobuf's JSON mapping).
    case bytesBase64
    /// `bytes` holding a trace or span id of this many bytes: lowercase hex (OTLP's exception to the
    /// mapping).
    case bytesHex(Int)
    /// `bool`: `true` / `false`.
    case bool
    /// `int32` (varint, sign-extended on the wire): a JSON number.
    case int32
    /// `uint32`: a JSON number.
    case uint32
    /// `sint32` (zigzag varint): a JSON number.
    case sint32
    /// An enum (int32 varint): a JSON number, OTLP/JSON writes enums as integers (JSON accepts its
    /// names too).
    case enumeration(OTLPEnum)
    /// `int64` (varint): a decimal string.
    case int64
    /// `uint64` (varint): a decimal string.
    case uint64
    /// `fixed32`: a JSON number.
    case fixed32
    /// `fixed64`: a decimal string.
    case fixed64
    /// `sfixed64`: a decimal string.
    case sfixed64
    /// `double` (fixed64 bits): a JSON number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
    case double
    /// An embedded message: a JSON object.
    case message(MessageKind)

    /// The wire type a single (unpacked) value of this kind uses.
    var wireType: WireType {
        switch self {
        case .string, .bytesBase64, .bytesHex, .message: .lengthDelimited
        case .bool, .int32, .uint32, .sint32, .enumeration, .int64, .uint64: .varint
        case .fixed32: .fixed32
        case .fixed64, .sfixed64, .double: .fixed64
        }
    }

    /// Whether repeated fields of this kind may be packed (numeric scalars only).
    var isPackable: Bool { wireType != .lengthDelimited }
}

/// Whether a field is repeated and whether it tracks presence.
package enum FieldCardinality: Sendable, Equatable {
    /// A proto3 singular field without presence: written only when not the default value.
    case implicit
    /// A singular field with presence (`optional` scalars and every message field): written when
    /// present on the wire, even with the default value.
    case explicit
    /// A repeated field: written as a JSON array when it has at least one element.
    case repeated
    /// A member of the message's oneof number `n`: only the last member seen is kept.
    case oneof(Int)
}

/// One field of a message: number, JSON name, kind and cardinality.
///
/// A trivial value (the name is a `StaticString`), so reading one costs no reference counting.
package struct FieldSchema: Sendable {
    package let number: UInt32
    /// The lowerCamelCase JSON name (protobuf's `json_name`).
    package let name: StaticString
    package let kind: FieldKind
    package let cardinality: FieldCardinality
    /// A development field (profiles' dictionary indexes, entity references): decoded from
    /// protobuf, but not part of the OTLP/JSON request schema the gateway checks.
    package let isDevelopment: Bool

    init(
        _ number: UInt32, _ name: StaticString, _ kind: FieldKind, _ cardinality: FieldCardinality = .implicit,
        development: Bool = false
    ) {
        self.number = number
        self.name = name
        self.kind = kind
        self.cardinality = cardinality
        isDevelopment = development
    }

    /// Whether an occurrence with `wireType` is this field's value (a packed run counts for
    /// repeated numeric fields); other wire types make the occurrence an unknown field.
    func accepts(_ wireType: WireType) -> Bool {
        if wireType == kind.wireType { return true }
        return cardinality == .repeated && kind.isPackable && wireType == .lengthDelimited
    }
}

/// A message's fields, in field-number order (the order they are written in): the one description
/// of the OTLP schema, which the protobuf decoder reads and the gateway's OTLP/JSON type checks
/// derive their rules from.
///
/// A class so that the transcoder passes schemas around with one reference count; the transcoder's
/// inner loops read its ``layout`` instead, without any.
package final class MessageSchema: Sendable {
    /// The protobuf message name, for documentation and error messages.
    package let name: String
    package let fields: [FieldSchema]
    /// The fields, their lookup by number and their oneofs, in memory this schema owns.
    let layout: MessageLayout

    init(_ name: String, _ fields: [FieldSchema]) {
        precondition(fields.count <= 32, "presence is tracked in a 32-bit mask")
        self.name = name
        self.fields = fields.sorted { $0.number < $1.number }
        layout = MessageLayout(self.fields)
    }

    deinit { layout.deallocate() }

    /// The index in ``fields`` of the field numbered `number`, or `nil` for an unknown field.
    @inline(__always)
    func fieldIndex(_ number: UInt32) -> Int? { layout.fieldIndex(number) }
}

/// A ``MessageSchema``'s fields laid out for the transcoder's inner loops: read through pointers,
/// without reference counting or bounds checks. The memory belongs to the schema (the OTLP schemas
/// are static, so it lives as long as the process) and is never written after it is set up.
struct MessageLayout: @unchecked Sendable {
    /// The fields, in field-number order.
    let fields: UnsafePointer<FieldSchema>
    let fieldCount: Int
    /// Field index by field number (`-1` for unknown numbers), up to the largest known number.
    private let slots: UnsafePointer<Int8>
    private let slotCount: Int
    /// Per field, bit `1 << rawValue` of each wire type whose occurrences are the field's values
    /// (``FieldSchema/accepts(_:)``).
    private let wireTypes: UnsafePointer<UInt8>
    /// Per oneof number, bit `1 << index` of each member's field index.
    private let oneofs: UnsafePointer<UInt32>
    /// Per one-byte tag (below 0x80), the index of the field whose value it introduces: a valid
    /// tag (``WireReader/readTag()``) of a known field with a wire type the field accepts; `-1` for
    /// every other byte (``tagField(_:)``).
    private let tagFields: UnsafePointer<Int8>
    /// The key slot of the first field (``keySlot(_:)``), set in ``MessageKind/layouts`` (0 in the
    /// schema's own copy).
    var keyBase = 0

    fileprivate init(_ fields: [FieldSchema]) {
        let slotCount = Int(fields.last?.number ?? 0) + 1
        let slots = UnsafeMutablePointer<Int8>.allocate(capacity: slotCount)
        slots.initialize(repeating: -1, count: slotCount)
        let wireTypes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(fields.count, 1))
        let allWireTypes: [WireType] = [.varint, .fixed64, .lengthDelimited, .startGroup, .endGroup, .fixed32]
        var oneofs: [UInt32] = []
        for (index, field) in fields.enumerated() {
            slots[Int(field.number)] = Int8(index)
            wireTypes[index] = allWireTypes.reduce(0) { $0 | (field.accepts($1) ? 1 << $1.rawValue : 0) }
            guard case .oneof(let group) = field.cardinality else { continue }
            while oneofs.count <= group { oneofs.append(0) }
            oneofs[group] |= 1 << UInt32(index)
        }
        let copy = UnsafeMutablePointer<FieldSchema>.allocate(capacity: max(fields.count, 1))
        copy.initialize(from: fields, count: fields.count)
        let oneofCopy = UnsafeMutablePointer<UInt32>.allocate(capacity: max(oneofs.count, 1))
        oneofCopy.initialize(from: oneofs, count: oneofs.count)
        let tagFields = UnsafeMutablePointer<Int8>.allocate(capacity: 0x80)
        for tag in 0..<0x80 {
            // Field number 0, wire types 3, 4, 6 and 7 and unknown numbers have no field.
            let number = tag >> 3
            let field = number < slotCount ? slots[number] : -1
            tagFields[tag] = field >= 0 && wireTypes[Int(field)] & 1 << UInt8(tag & 7) != 0 ? field : -1
        }
        self.fields = UnsafePointer(copy)
        fieldCount = fields.count
        self.slots = UnsafePointer(slots)
        self.slotCount = slotCount
        self.wireTypes = UnsafePointer(wireTypes)
        self.oneofs = UnsafePointer(oneofCopy)
        self.tagFields = UnsafePointer(tagFields)
    }

    fileprivate func deallocate() {
        fields.deallocate()
        slots.deallocate()
        wireTypes.deallocate()
        oneofs.deallocate()
        tagFields.deallocate()
    }

    /// The index in ``fields`` of the field numbered `number`, or `nil` for an unknown field.
    @inline(__always)
    func fieldIndex(_ number: UInt32) -> Int? {
        guard number < UInt32(slotCount) else { return nil }
        let slot = slots[Int(number)]
        return slot < 0 ? nil : Int(slot)
    }

    /// The index of the field whose value the one-byte tag `tag` (below 0x80) introduces, or `-1`
    /// when it does not introduce a known field's value: an invalid tag, a group, an unknown field
    /// number or a wire type the field does not accept (the reader's ``WireReader/readTag()``,
    /// ``fieldIndex(_:)`` and ``accepts(_:_:)`` then tell which).
    @inline(__always)
    func tagField(_ tag: UInt8) -> Int { Int(tagFields[Int(tag)]) }

    /// Whether an occurrence of field `index` with `wireType` is the field's value.
    @inline(__always)
    func accepts(_ index: Int, _ wireType: WireType) -> Bool { wireTypes[index] & 1 << wireType.rawValue != 0 }

    /// The key slot of field `index` (below ``MessageLayouts/keySlotCount``), for a document builder
    /// that writes each key's bytes once per document: one per field of each message, so a slot
    /// always has the same name.
    @inline(__always)
    func keySlot(_ index: Int) -> Int { keyBase &+ index }

    /// The members of oneof number `group`: bit `1 << index` for each member's index in ``fields``.
    @inline(__always)
    func oneofMembers(_ group: Int) -> UInt32 { oneofs[group] }
}
