import PulseJSON
import PulseKit

/// The one description of a Pulse wire object: its members in canonical order, each with its key,
/// its value kind (a ``WireValue``) and its null/absence rule, driving both the fast decoder and the
/// canonical writer, so a type's key order, defaults and errors are written down once.
///
/// Decoding starts from `template`, a value holding the documented defaults (the public
/// initialiser's default arguments), and overwrites what the document says: a ``WireField/required(_:_:)``
/// member must be present and not `null`; a ``WireField/nullable(_:_:)`` one reads absent or
/// `null` as `nil`; a ``WireField/defaulted(_:_:)`` one keeps the template's value when absent or
/// `null`. Unknown keys are ignored. Writing emits every member in table order, `nil` as `null`.
struct WireObject<Root: Sendable>: Sendable {
    /// The documented defaults decoding starts from.
    let template: Root
    /// The members in canonical order.
    let fields: [WireField<Root>]
    /// The checks of a whole decoded value (for example ranges), run after every member is read.
    let validate: @Sendable (Root) throws(PulseProtocolError) -> Void

    init(
        _ template: Root, _ fields: WireField<Root>...,
        validate: @escaping @Sendable (Root) throws(PulseProtocolError) -> Void = { _ in }
    ) {
        self.template = template
        self.fields = fields
        self.validate = validate
    }

    /// Reads an object; errors name the member (`appId: expected a string`).
    func decode(_ node: JSONNode) throws(PulseProtocolError) -> Root {
        let object = try JSONObjectReader(node)
        var value = template
        for field in fields {
            try field.read(&value, object)
        }
        try validate(value)
        return value
    }

    /// Writes `value` as one object.
    func write(_ value: Root, to writer: inout JSONWriter) {
        writer.beginObject()
        writeMembers(value, to: &writer)
        writer.endObject()
    }

    /// Writes `value`'s members without braces (for an object that adds members of its own).
    func writeMembers(_ value: Root, to writer: inout JSONWriter) {
        for field in fields {
            field.write(value, &writer)
        }
    }
}

/// A Pulse payload whose codec is its ``WireObject`` table: both ``PulseJSONCodable`` witnesses
/// come from ``wire``.
protocol WireObjectCodable: PulseJSONCodable, WireReadable, WireWritable {
    /// The type's members, in canonical order, with their rules.
    static var wire: WireObject<Self> { get }
}

extension WireObjectCodable {
    /// Reads a value by the rules of the type's ``WireObjectCodable/wire`` table.
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        self = try Self.wire.decode(node)
    }

    /// Writes every member of the type's ``WireObjectCodable/wire`` table in order, `nil` as `null`.
    public func writeJSON(to writer: inout JSONWriter) {
        Self.wire.write(self, to: &writer)
    }
}

/// One member of a ``WireObject``.
struct WireField<Root>: Sendable {
    let read: @Sendable (inout Root, JSONObjectReader) throws(PulseProtocolError) -> Void
    let write: @Sendable (Root, inout JSONWriter) -> Void

    /// A member that must be present and not `null`.
    static func required<Value: WireValue>(_ key: String, _ path: WritableKeyPath<Root, Value>) -> Self {
        WireField(key: key, WireSlot(path)) { root, slot, object throws(PulseProtocolError) in
            slot.set(&root, try object.value(key))
        }
    }

    /// A member whose absence or `null` means the template's value.
    static func defaulted<Value: WireValue>(_ key: String, _ path: WritableKeyPath<Root, Value>) -> Self {
        WireField(key: key, WireSlot(path)) { root, slot, object throws(PulseProtocolError) in
            if let value: Value = try object.nullable(key) { slot.set(&root, value) }
        }
    }

    /// A member that may be absent or `null` (`nil`), written as `null` when `nil`.
    static func nullable<Value: WireValue>(_ key: String, _ path: WritableKeyPath<Root, Value?>) -> Self {
        WireField(key: key, WireSlot(path)) { root, slot, object throws(PulseProtocolError) in
            slot.set(&root, try object.nullable(key))
        }
    }

    private init<Value: WireWritable>(
        key: String, _ slot: WireSlot<Root, Value>,
        read:
            @escaping @Sendable (inout Root, WireSlot<Root, Value>, JSONObjectReader) throws(PulseProtocolError) ->
            Void
    ) {
        self.read = { root, object throws(PulseProtocolError) in try read(&root, slot, object) }
        self.write = { root, writer in
            writer.key(key)
            slot.get(root).writeWire(to: &writer)
        }
    }
}

/// Where a member is stored in `Root`: its byte offset, accessed through a pointer, which
/// `MemoryLayout.offset(of:)` documents as equivalent to the key path, without the key path's
/// run-time projection on every access (in a micro-benchmark about 100 ns a member, against about
/// 25 ns through the offset).
struct WireSlot<Root, Value>: Sendable {
    let offset: Int

    /// The slot of `path`, which must name a stored property.
    init(_ path: WritableKeyPath<Root, Value>) {
        guard let offset = MemoryLayout<Root>.offset(of: path) else {
            preconditionFailure("a wire member must be a stored property")
        }
        self.offset = offset
    }

    func get(_ root: Root) -> Value {
        withUnsafePointer(to: root) { pointer in
            UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
        }
    }

    func set(_ root: inout Root, _ value: Value) {
        withUnsafeMutablePointer(to: &root) { pointer in
            UnsafeMutableRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee = value
        }
    }
}

/// `nil` is written as `null`.
extension Optional: WireWritable where Wrapped: WireWritable {
    func writeWire(to writer: inout JSONWriter) {
        if let self { self.writeWire(to: &writer) } else { writer.null() }
    }
}
