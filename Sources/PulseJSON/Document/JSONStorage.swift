import CPulseSimdJSON

/// The immutable node tape and string arena of one parsed document, shared by its nodes.
///
/// One allocation holds both (first `nodeCount` 16-byte nodes, then the string bytes), or two: the
/// parser's buffers or a ``JSONDocumentBuilder``'s, taken over without copying. Each node
/// is two words, in document (pre-order) order: `head` (bits 0-7 the kind, bits 32-63 the index of
/// the first node after the node's subtree) and `payload` (scalar bits, string offset in bits 0-31
/// and length in bits 32-63, or the container's element/member count). An object's children
/// alternate key (a string node) and value. This mirrors `pgjson_node` in `pulse_simdjson.h`.
///
/// Reads are unchecked: every index handed out comes from the tape itself, which the C++ side
/// builds consistently (children and `next` indices lie within the tape, string ranges within the
/// arena). The memory is written once in `init` and freed in `deinit`, so sharing is safe.
@usableFromInline
final class JSONStorage: @unchecked Sendable {
    /// Node words, then string bytes.
    @usableFromInline let base: UnsafeMutableRawPointer
    /// Start of the string arena.
    @usableFromInline let strings: UnsafePointer<UInt8>
    let nodeCount: Int
    let stringCount: Int
    /// Who owns `base` and `strings`.
    private let owner: Owner

    private enum Owner {
        /// One allocation of this storage's own.
        case copy
        /// The parser's buffers (``pgjson_parser_take``).
        case parser
        /// A builder's buffers, shared with it: it copies them before it writes again.
        case builder(JSONOutputBuffer, JSONOutputBuffer)
    }

    /// Copies `nodeCount` nodes from `nodes` and `stringCount` bytes from `strings`.
    init(nodes: UnsafeRawPointer, nodeCount: Int, strings: UnsafePointer<UInt8>?, stringCount: Int) {
        let nodeBytes = nodeCount * 16
        base = UnsafeMutableRawPointer.allocate(byteCount: max(nodeBytes + stringCount, 1), alignment: 8)
        base.copyMemory(from: nodes, byteCount: nodeBytes)
        let stringBase = (base + nodeBytes).bindMemory(to: UInt8.self, capacity: stringCount)
        if stringCount > 0, let strings {
            stringBase.initialize(from: strings, count: stringCount)
        }
        self.strings = UnsafePointer(stringBase)
        self.nodeCount = nodeCount
        self.stringCount = stringCount
        owner = .copy
    }

    /// Takes over the parser's node tape and string arena (``pgjson_parser_take``) without copying.
    init(
        adoptingNodes nodes: UnsafeMutablePointer<pgjson_node>, nodeCount: Int, strings: UnsafeMutablePointer<UInt8>,
        stringCount: Int
    ) {
        base = UnsafeMutableRawPointer(nodes)
        self.strings = UnsafePointer(strings)
        self.nodeCount = nodeCount
        self.stringCount = stringCount
        owner = .parser
    }

    /// Shares a builder's node tape (`nodeCount` nodes) and strings (`stringCount` bytes) without
    /// copying; the buffers are not written while shared (``JSONOutputBuffer`` copies first).
    init(sharingNodes nodes: JSONOutputBuffer, nodeCount: Int, strings: JSONOutputBuffer, stringCount: Int) {
        base = UnsafeMutableRawPointer(nodes.base)
        self.strings = UnsafePointer(strings.base)
        self.nodeCount = nodeCount
        self.stringCount = stringCount
        owner = .builder(nodes, strings)
    }

    deinit {
        switch owner {
        case .copy:
            base.deallocate()
        case .parser:
            pgjson_nodes_free(base.assumingMemoryBound(to: pgjson_node.self))
            pgjson_strings_free(UnsafeMutablePointer(mutating: strings))
        case .builder:
            break  // the buffers go with `owner`
        }
    }

    // The node words of a tape at `nodes` (``base``), read the one way for the storage and for
    // ``JSONCursor``s.

    @inlinable @inline(__always) static func head(_ nodes: UnsafeRawPointer, _ index: Int) -> UInt64 {
        nodes.load(fromByteOffset: index &* 16, as: UInt64.self)
    }

    @inlinable @inline(__always) static func payload(_ nodes: UnsafeRawPointer, _ index: Int) -> UInt64 {
        nodes.load(fromByteOffset: index &* 16 &+ 8, as: UInt64.self)
    }

    @inlinable @inline(__always) static func kindBits(_ nodes: UnsafeRawPointer, _ index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: head(nodes, index))
    }

    /// The index of the first node after the subtree of the node at `index`.
    @inlinable @inline(__always) static func next(_ nodes: UnsafeRawPointer, _ index: Int) -> Int {
        Int(truncatingIfNeeded: head(nodes, index) >> 32)
    }

    @inlinable @inline(__always) func head(_ index: Int) -> UInt64 { Self.head(base, index) }

    @inlinable @inline(__always) func payload(_ index: Int) -> UInt64 { Self.payload(base, index) }

    @inlinable @inline(__always) func kindBits(_ index: Int) -> UInt8 { Self.kindBits(base, index) }

    @inlinable @inline(__always) func next(_ index: Int) -> Int { Self.next(base, index) }

    /// A cursor at node `index` (valid while `self` lives).
    @inlinable @inline(__always) func cursor(_ index: Int) -> JSONCursor {
        JSONCursor(nodes: base, strings: strings, index: index)
    }

    @inlinable @inline(__always) func count(_ index: Int) -> Int { Int(truncatingIfNeeded: payload(index)) }

    /// The UTF-8 bytes of the string node at `index` (which must be a string). Valid while `self` lives.
    @inlinable @inline(__always) func stringBytes(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        cursor(index).stringBytes
    }

    @inlinable func string(_ index: Int) -> String {
        String(decoding: stringBytes(index), as: UTF8.self)
    }

    /// Index of the value of the first member of the object at `object` whose key is `key`, or -1.
    ///
    /// Static and pointer-based so callers can run it inside a closure without capturing (and so
    /// retaining) the storage object; the caller keeps the storage alive.
    @inlinable @inline(__always)
    static func find(
        nodes: UnsafeRawPointer, strings: UnsafePointer<UInt8>, object: Int, key: UnsafeBufferPointer<UInt8>
    ) -> Int {
        let keyCount = key.count
        var position = object &+ 1
        var remaining = Int(truncatingIfNeeded: payload(nodes, object))
        while remaining > 0 {
            let payload = payload(nodes, position)
            if Int(truncatingIfNeeded: payload >> 32) == keyCount
                && (keyCount == 0
                    || bytesEqual(strings + Int(truncatingIfNeeded: payload & 0xFFFF_FFFF), key.baseAddress!, keyCount))
            {
                return position &+ 1
            }
            position = next(nodes, position &+ 1)
            remaining &-= 1
        }
        return -1
    }

    /// The value at `index` as a tree.
    @usableFromInline func value(_ index: Int) -> JSONValue {
        let payload = payload(index)
        switch kindBits(index) {
        case JSONKind.bool.rawValue: return .bool(payload != 0)
        case JSONKind.int.rawValue: return .int(Int64(bitPattern: payload))
        case JSONKind.uint.rawValue: return .uint(payload)
        case JSONKind.double.rawValue: return .double(Double(bitPattern: payload))
        case JSONKind.string.rawValue: return .string(string(index))
        case JSONKind.array.rawValue:
            var remaining = Int(truncatingIfNeeded: payload)
            var values: [JSONValue] = []
            values.reserveCapacity(remaining)
            var position = index &+ 1
            while remaining > 0 {
                values.append(value(position))
                position = next(position)
                remaining &-= 1
            }
            return .array(values)
        case JSONKind.object.rawValue:
            var remaining = Int(truncatingIfNeeded: payload)
            var members: [JSONMember] = []
            members.reserveCapacity(remaining)
            var position = index &+ 1
            while remaining > 0 {
                members.append(JSONMember(key: string(position), value: value(position &+ 1)))
                position = next(position &+ 1)
                remaining &-= 1
            }
            return .object(members)
        default: return .null
        }
    }
}

/// Byte-wise equality of two ranges of `count` bytes, a word at a time.
@inlinable @inline(__always)
func bytesEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    let rawA = UnsafeRawPointer(a)
    let rawB = UnsafeRawPointer(b)
    var offset = 0
    while offset &+ 8 <= count {
        if rawA.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            != rawB.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
            return false
        }
        offset &+= 8
    }
    while offset < count {
        if a[offset] != b[offset] { return false }
        offset &+= 1
    }
    return true
}
