/// Builds a ``JSONDocument`` value by value, without JSON text in between.
///
/// The calls are the same as ``JSONWriter``'s, in document order, and the document is the one
/// ``JSONParser`` gives for the text the writer would produce: an unsigned integer up to
/// `Int64.max` is an ``JSONKind/int`` (as the parser reads it), a finite double stays a
/// ``JSONKind/double``, a non-finite one becomes `null` (the writer writes `null`). A decoder of
/// another format (the OTLP protobuf decoder) uses it to hand the mapping the document model it
/// walks, so both formats take the same walk.
///
/// Like the writer, the builder does not validate nesting: every value inside an object must be
/// preceded by ``key(utf8:)``, every begin matched by its end, and strings must be valid UTF-8.
/// Containers hold at most `UInt32.max` children and the strings at most 4 GiB in all.
public struct JSONDocumentBuilder: Sendable {
    /// Two words per node (`head`, `payload`), as ``JSONStorage`` lays them out; `nodeBytes` of
    /// them are written. A ``JSONOutputBuffer``, as the string arena: one check for room per value, and
    /// one uniqueness check, the tape's (``reserveNode(room:checked:)``).
    @usableFromInline var nodes: JSONOutputBuffer
    @usableFromInline var nodeBytes = 0
    /// The string arena; `stringBytes` of it are written.
    @usableFromInline var strings: JSONOutputBuffer
    @usableFromInline var stringBytes = 0
    /// The innermost open container (`index` -1 at the top level); its child count is kept here
    /// and written to the tape when it closes. The frames of the containers around it are kept in
    /// the tape, each in the node of the container it encloses until that one closes (see
    /// ``beginContainer(_:checked:)``), so opening and closing needs no stack of its own.
    @usableFromInline var top = Frame(index: -1, isArray: false, count: 0)

    /// An open container: its node, whether it is an array, and its children so far.
    @usableFromInline struct Frame: Sendable {
        @usableFromInline var index: Int
        @usableFromInline var isArray: Bool
        @usableFromInline var count: UInt64

        @inlinable init(index: Int, isArray: Bool, count: UInt64) {
            self.index = index
            self.isArray = isArray
            self.count = count
        }
    }

    /// Creates a builder with room for about `nodes` nodes and `stringBytes` bytes of strings.
    public init(nodes: Int = 256, stringBytes: Int = 4096) {
        self.nodes = JSONOutputBuffer(capacity: nodes * 16)
        strings = JSONOutputBuffer(capacity: stringBytes)
    }

    /// The bytes the document takes so far: 16 per node plus the strings.
    @inlinable public var byteCount: Int { nodeBytes &+ stringBytes }

    /// The number of nodes so far.
    @inlinable public var nodeCount: Int { nodeBytes >> 4 }

    /// Drops everything written so far, keeping the room, to build another document from the
    /// start (the OTLP protobuf decoder starts over when its one-pass path gives up).
    package mutating func reset() {
        nodeBytes = 0
        stringBytes = 0
        top = Frame(index: -1, isArray: false, count: 0)
    }

    /// The finished document; the builder starts over empty. Call it when every container is closed.
    public mutating func finish() -> JSONDocument {
        precondition(top.index < 0 && nodeBytes > 0, "finish() needs exactly one complete top-level value")
        // The document takes the buffers over; the builder's next write copies them (nothing, as it
        // starts empty) into buffers of its own.
        let storage = JSONStorage(
            sharingNodes: nodes, nodeCount: nodeBytes >> 4, strings: strings, stringCount: stringBytes)
        nodeBytes = 0
        stringBytes = 0
        return JSONDocument(storage: storage)
    }

    // MARK: Containers

    /// Opens an object; its members follow as ``key(utf8:)`` and a value each.
    @inlinable @inline(__always) public mutating func beginObject() {
        beginContainer(JSONKind.object.rawValue, checked: true)
    }

    /// Closes the innermost open object.
    @inlinable @inline(__always) public mutating func endObject() { endContainer(checked: true) }

    /// Opens an array.
    @inlinable @inline(__always) public mutating func beginArray() {
        beginContainer(JSONKind.array.rawValue, checked: true)
    }

    /// Closes the innermost open array.
    @inlinable @inline(__always) public mutating func endArray() { endContainer(checked: true) }

    /// Adds an object key (UTF-8); the member's value must follow.
    @inlinable @inline(__always) public mutating func key(utf8 key: UnsafeBufferPointer<UInt8>) {
        self.key(utf8: key, checked: true)
    }

    /// Adds an object key; the member's value must follow.
    @inlinable @inline(__always) public mutating func key(_ key: StaticString) {
        key.withUTF8Buffer { self.key(utf8: $0, checked: true) }
    }

    // MARK: Scalars

    /// Adds a string value (UTF-8).
    @inlinable @inline(__always) public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        string(utf8: value, checked: true)
    }

    /// Adds a string value.
    @inlinable public mutating func string(_ value: String) {
        withUTF8Bytes(of: value) { string(utf8: $0, checked: true) }
    }

    /// Adds a string value holding the decimal text of `value` (OTLP/JSON's 64-bit integers),
    /// without an intermediate `String`.
    package mutating func string(decimal value: Int64) { string(decimal: value, checked: true) }

    /// Adds a string value holding the decimal text of `value`.
    package mutating func string(decimal value: UInt64) { string(decimal: value, checked: true) }

    /// Adds a string value of `byteCount` UTF-8 bytes that `initialize` writes in place (hex or
    /// base64 text, for example, without an intermediate `String`).
    @inlinable public mutating func string(
        byteCount: Int, initializingWith initialize: (UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        string(byteCount: byteCount, checked: true, initializingWith: initialize)
    }

    /// Adds an integer value.
    @inlinable @inline(__always) public mutating func int(_ value: Int64) { int(value, checked: true) }

    /// Adds an unsigned integer value (an ``JSONKind/int`` when it fits `Int64`, as parsed).
    @inlinable @inline(__always) public mutating func uint(_ value: UInt64) { uint(value, checked: true) }

    /// Adds a double value; NaN and infinities become `null`, as ``JSONWriter`` writes them.
    @inlinable public mutating func double(_ value: Double) { double(value, checked: true) }

    /// Adds `true` or `false`.
    @inlinable public mutating func bool(_ value: Bool) { bool(value, checked: true) }

    /// Adds `null`.
    @inlinable public mutating func null() {
        countValue()
        appendScalar(JSONKind.null.rawValue, 0, checked: true)
    }

    /// Adds a copy of `node` and its subtree (a node of any document), value by value.
    public mutating func copy(_ node: JSONNode) {
        switch node.kind {
        case .null: null()
        case .bool: bool(node.bool ?? false)
        case .int: int(node.int64 ?? 0)
        case .uint: uint(node.uint64 ?? 0)
        case .double: double(node.double ?? 0)
        case .string: _ = node.withUTF8 { string(utf8: $0) }
        case .array:
            beginArray()
            for element in node.elements { copy(element) }
            endArray()
        case .object:
            beginObject()
            for (key, value) in node.memberNodes {
                _ = key.withUTF8 { self.key(utf8: $0) }
                copy(value)
            }
            endObject()
        }
    }

    // MARK: Tape

    // The writes themselves, for this builder (`checked`: the tape and arena may be shared with a
    // copy or a finished document, and are copied before a write) and for an
    // ``ExclusiveDocumentBuilder`` (not `checked`: no other holder can exist, so only room is
    // checked). `checked` is a constant at every call, so each caller gets one of the two.

    @inlinable @inline(__always) mutating func key(utf8 key: UnsafeBufferPointer<UInt8>, checked: Bool) {
        top.count &+= 1
        appendString(key, checked: checked)
    }

    @inlinable @inline(__always) mutating func string(utf8 value: UnsafeBufferPointer<UInt8>, checked: Bool) {
        countValue()
        appendString(value, checked: checked)
    }

    @inlinable @inline(__always) mutating func string(decimal value: Int64, checked: Bool) {
        withDecimalText(value.magnitude, negative: value < 0, afterComma: false) { string(utf8: $0, checked: checked) }
    }

    @inlinable @inline(__always) mutating func string(decimal value: UInt64, checked: Bool) {
        withDecimalText(value, negative: false, afterComma: false) { string(utf8: $0, checked: checked) }
    }

    @inlinable @inline(__always) mutating func string(
        byteCount: Int, checked: Bool, initializingWith initialize: (UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        countValue()
        let node = reserveNode(checked: checked)
        let offset = stringBytes
        let text = strings.reserve(unshared: byteCount, after: offset)
        text.initialize(repeating: 0, count: byteCount)
        initialize(UnsafeMutableBufferPointer(start: text, count: byteCount))
        stringBytes = offset &+ byteCount
        storeScalar(
            JSONKind.string.rawValue,
            UInt64(truncatingIfNeeded: offset) | UInt64(truncatingIfNeeded: byteCount) << 32, at: node)
    }

    @inlinable @inline(__always) mutating func int(_ value: Int64, checked: Bool) {
        countValue()
        appendScalar(JSONKind.int.rawValue, UInt64(bitPattern: value), checked: checked)
    }

    @inlinable @inline(__always) mutating func uint(_ value: UInt64, checked: Bool) {
        countValue()
        appendScalar(
            value <= UInt64(Int64.max) ? JSONKind.int.rawValue : JSONKind.uint.rawValue, value, checked: checked)
    }

    @inlinable @inline(__always) mutating func double(_ value: Double, checked: Bool) {
        countValue()
        if value.isFinite {
            appendScalar(JSONKind.double.rawValue, value.bitPattern, checked: checked)
        } else {
            appendScalar(JSONKind.null.rawValue, 0, checked: checked)
        }
    }

    @inlinable @inline(__always) mutating func bool(_ value: Bool, checked: Bool) {
        countValue()
        appendScalar(JSONKind.bool.rawValue, value ? 1 : 0, checked: checked)
    }

    /// Opens a container. Until it closes, its node holds the enclosing container's frame: the
    /// payload its child count (at most `UInt32.max`) and node index (`UInt32.max` at the top
    /// level) and the head, besides the kind, whether it is an array (bit 8).
    @inlinable @inline(__always) mutating func beginContainer(_ kind: UInt8, checked: Bool) {
        countValue()
        let enclosing = top
        let node = reserveNode(checked: checked)
        top = Frame(index: nodeBytes >> 4, isArray: kind == JSONKind.array.rawValue, count: 0)
        storeNode(
            UInt64(kind) | (enclosing.isArray ? 0x100 : 0),
            UInt64(truncatingIfNeeded: enclosing.count) & 0xFFFF_FFFF
                | UInt64(UInt32(truncatingIfNeeded: enclosing.index)) << 32, at: node)
    }

    /// Closes the innermost container: writes its end and child count to its node and takes the
    /// enclosing container's frame back from it.
    @inlinable @inline(__always) mutating func endContainer(checked: Bool) {
        if checked { _ = reserveNode(room: 0, checked: true) }  // a tape no copy of the builder shares
        let node = UnsafeMutableRawPointer(nodes.base + top.index &* 16)
        let head = node.load(as: UInt64.self)
        let saved = node.load(fromByteOffset: 8, as: UInt64.self)
        let next = UInt64(truncatingIfNeeded: nodeBytes >> 4) << 32
        node.storeBytes(of: head & 0xFF | next, as: UInt64.self)
        node.storeBytes(of: top.count, toByteOffset: 8, as: UInt64.self)
        let index = UInt32(truncatingIfNeeded: saved >> 32)
        top = Frame(
            index: index == UInt32.max ? -1 : Int(index), isArray: head & 0x100 != 0, count: saved & 0xFFFF_FFFF)
    }

    /// A value counts as a child only inside an array (an object member was counted at its key).
    @inlinable @inline(__always) mutating func countValue() {
        if top.isArray { top.count &+= 1 }
    }

    @inlinable @inline(__always) mutating func appendScalar(_ kind: UInt8, _ payload: UInt64, checked: Bool) {
        storeScalar(kind, payload, at: reserveNode(checked: checked))
    }

    /// Writes a scalar node at `node`, the room ``reserveNode(room:checked:)`` returned.
    @inlinable @inline(__always) mutating func storeScalar(
        _ kind: UInt8, _ payload: UInt64, at node: UnsafeMutableRawPointer
    ) {
        storeNode(UInt64(kind) | UInt64(truncatingIfNeeded: (nodeBytes >> 4) &+ 1) << 32, payload, at: node)
    }

    @inlinable @inline(__always) mutating func storeNode(
        _ head: UInt64, _ payload: UInt64, at node: UnsafeMutableRawPointer
    ) {
        node.storeBytes(of: head, as: UInt64.self)
        node.storeBytes(of: payload, toByteOffset: 8, as: UInt64.self)
        nodeBytes &+= 16
    }

    /// Room for `room` bytes of tape (one node's by default), where the next node goes, in a tape
    /// and a string arena no other holder shares. The arena is shared only while the tape is
    /// (copies of the builder and a finished document hold both, and the tape is never replaced
    /// without the arena being unshared too), so the tape's one uniqueness check covers both and
    /// the arena is then written with ``JSONOutputBuffer/reserve(unshared:after:)``: every write to
    /// the arena comes after this call in the same value. Not `checked`, for a holder no one else
    /// can share the buffers with, only the room is checked.
    @inlinable @inline(__always) mutating func reserveNode(room: Int = 16, checked: Bool) -> UnsafeMutableRawPointer {
        if checked {
            if _slowPath(!nodes.canWrite(room, after: nodeBytes)) { unshareBuffers(room: room) }
            return UnsafeMutableRawPointer(nodes.base + nodeBytes)
        }
        return UnsafeMutableRawPointer(nodes.reserve(unshared: room, after: nodeBytes))
    }

    /// Copies the tape (grown when it has no room for `room` more bytes) and, if shared, the arena.
    @usableFromInline mutating func unshareBuffers(room: Int) {
        nodes = nodes.copy(nodeBytes, minimumCapacity: nodeBytes &+ room)
        strings.unshare(after: stringBytes)
    }

    @inlinable @inline(__always) mutating func appendString(_ bytes: UnsafeBufferPointer<UInt8>, checked: Bool) {
        let node = reserveNode(checked: checked)
        let offset = stringBytes
        let count = bytes.count
        if let source = bytes.baseAddress, count > 0 {
            Self.copy(source, to: strings.reserve(unshared: count, after: offset), count: count)
            stringBytes = offset &+ count
        }
        storeScalar(
            JSONKind.string.rawValue,
            UInt64(truncatingIfNeeded: offset) | UInt64(truncatingIfNeeded: count) << 32, at: node)
    }

    /// Copies `count` bytes; keys and most values are short, so up to 16 bytes are copied inline
    /// (two overlapping loads and stores) rather than with a call to `memcpy`.
    @inlinable @inline(__always)
    static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(target)
        if count >= 8 && count <= 16 {
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count &- 8, as: UInt64.self)
        } else if count >= 4 && count < 8 {
            let head = from.loadUnaligned(as: UInt32.self)
            let tail = from.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: count &- 4, as: UInt32.self)
        } else {
            target.initialize(from: source, count: count)
        }
    }
}

/// A ``JSONDocumentBuilder`` that cannot be copied, for a decoder that writes whole documents (the
/// OTLP protobuf decoder).
///
/// Its tape and arena are its own from its `init` on and nothing can share them before
/// ``finish()`` hands them to the document, so its writes check only for room: the copyable
/// builder must check for sharing before every node (a runtime uniqueness call), because a copy of
/// it can be taken between any two writes. The writes are the builder's (same nodes, same
/// strings); in addition, a key written with ``key(_:slot:)`` is copied into the arena the first
/// time only, and its later members' key nodes point at the same bytes (the storage format lets
/// string nodes share a range: readers take each node's offset and length as they are).
///
/// Made and finished only inside the package; the writes are public so that they inline into the
/// decoder in another module (`@inlinable package` members were called, not inlined).
public struct ExclusiveDocumentBuilder: ~Copyable {
    @usableFromInline var builder: JSONDocumentBuilder
    /// Per key slot, the payload of the key's string node (arena offset, length in bits 32-63)
    /// once written to this document, 0 before.
    @usableFromInline var keys: [UInt64]

    /// A builder with room for about `nodes` nodes and `stringBytes` bytes of strings, and
    /// `keySlots` slots for ``key(_:slot:)``.
    package init(nodes: Int, stringBytes: Int, keySlots: Int) {
        builder = JSONDocumentBuilder(nodes: nodes, stringBytes: stringBytes)
        keys = Array(repeating: 0, count: keySlots)
    }

    /// The bytes the document takes so far: 16 per node plus the strings (each key slot's once).
    @inlinable public var byteCount: Int { builder.byteCount }

    /// Drops everything written so far, keeping the room, to build the document from the start.
    package mutating func reset() {
        builder.reset()
        for slot in keys.indices { keys[slot] = 0 }
    }

    /// The finished document. Call it when every container is closed.
    package consuming func finish() -> JSONDocument { builder.finish() }

    @inlinable @inline(__always) public mutating func beginObject() {
        builder.beginContainer(JSONKind.object.rawValue, checked: false)
    }

    @inlinable @inline(__always) public mutating func endObject() { builder.endContainer(checked: false) }

    @inlinable @inline(__always) public mutating func beginArray() {
        builder.beginContainer(JSONKind.array.rawValue, checked: false)
    }

    @inlinable @inline(__always) public mutating func endArray() { builder.endContainer(checked: false) }

    /// Adds an object key whose bytes are in the arena once per document for each `slot` (below
    /// `keySlots`): the caller gives every distinct key a slot of its own, and `name` is always the
    /// same for a slot.
    @inlinable @inline(__always) public mutating func key(_ name: StaticString, slot: Int) {
        let cached = keys[slot]
        if cached != 0 {
            builder.top.count &+= 1
            builder.appendScalar(JSONKind.string.rawValue, cached, checked: false)
            return
        }
        let offset = builder.stringBytes
        name.withUTF8Buffer { builder.key(utf8: $0, checked: false) }
        keys[slot] = UInt64(truncatingIfNeeded: offset) | UInt64(truncatingIfNeeded: name.utf8CodeUnitCount) << 32
    }

    @inlinable @inline(__always) public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        builder.string(utf8: value, checked: false)
    }

    @inlinable public mutating func string(_ value: String) {
        withUTF8Bytes(of: value) { builder.string(utf8: $0, checked: false) }
    }

    package mutating func string(decimal value: Int64) { builder.string(decimal: value, checked: false) }

    package mutating func string(decimal value: UInt64) { builder.string(decimal: value, checked: false) }

    @inlinable public mutating func string(
        byteCount: Int, initializingWith initialize: (UnsafeMutableBufferPointer<UInt8>) -> Void
    ) {
        builder.string(byteCount: byteCount, checked: false, initializingWith: initialize)
    }

    @inlinable @inline(__always) public mutating func int(_ value: Int64) { builder.int(value, checked: false) }

    @inlinable @inline(__always) public mutating func uint(_ value: UInt64) { builder.uint(value, checked: false) }

    @inlinable public mutating func double(_ value: Double) { builder.double(value, checked: false) }

    @inlinable public mutating func bool(_ value: Bool) { builder.bool(value, checked: false) }
}
