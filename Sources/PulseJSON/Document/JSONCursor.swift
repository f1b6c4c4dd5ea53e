/// A value of a parsed document read straight from the document's memory, holding no reference to
/// it: stepping through a document with cursors costs no reference counting, where every
/// ``JSONNode`` made (an element, a member, a lookup's result) retains the document's storage and
/// releases it again.
///
/// Package use (the gateway's mapping walk). A cursor is valid only while its document lives, so it
/// comes from ``JSONNode/withCursor(_:)``, which keeps the document alive while its body runs, and
/// must not outlive that body; ``JSONNode/init(inDocumentOf:at:)`` with its ``place`` makes a node
/// again where one must be kept. The accessors are ``JSONNode``'s (which reads through a cursor).
@usableFromInline
package struct JSONCursor {
    /// The document's node tape and its strings (``JSONStorage/base``, ``JSONStorage/strings``).
    @usableFromInline let nodes: UnsafeRawPointer
    @usableFromInline let strings: UnsafePointer<UInt8>
    @usableFromInline let index: Int

    @inlinable init(nodes: UnsafeRawPointer, strings: UnsafePointer<UInt8>, index: Int) {
        self.nodes = nodes
        self.strings = strings
        self.index = index
    }

    /// The cursor at node `index` of the same document.
    @inlinable @inline(__always) func at(_ index: Int) -> JSONCursor {
        JSONCursor(nodes: nodes, strings: strings, index: index)
    }

    @inlinable @inline(__always) var kindBits: UInt8 { JSONStorage.kindBits(nodes, index) }

    @inlinable @inline(__always) var payload: UInt64 { JSONStorage.payload(nodes, index) }

    /// The kind of this value.
    @inlinable @inline(__always)
    package var kind: JSONKind { JSONKind(rawValue: kindBits) ?? .null }

    /// Whether this value is `null`.
    @inlinable @inline(__always)
    package var isNull: Bool { kindBits == JSONKind.null.rawValue }

    /// ``JSONNode/bool``.
    @inlinable @inline(__always)
    package var bool: Bool? {
        guard kindBits == JSONKind.bool.rawValue else { return nil }
        return payload != 0
    }

    /// ``JSONNode/int64``.
    @inlinable @inline(__always)
    package var int64: Int64? { exactInteger(fromDouble: exactInt64) }

    /// ``JSONNode/uint64``.
    @inlinable @inline(__always)
    package var uint64: UInt64? { exactInteger(fromDouble: exactUInt64) }

    /// This number as a `T` when it is integral and in `T`'s range (an integer, or a double with
    /// no fraction, converted by `fromDouble`: `T(exactly:)` on a `Double` needs libm, which this
    /// module does not link), else `nil`: the one conversion behind ``int64`` and ``uint64``.
    @inlinable @inline(__always)
    func exactInteger<T: FixedWidthInteger>(fromDouble: (Double) -> T?) -> T? {
        let payload = payload
        switch kindBits {
        case JSONKind.int.rawValue: return T(exactly: Int64(bitPattern: payload))
        case JSONKind.uint.rawValue: return T(exactly: payload)
        case JSONKind.double.rawValue: return fromDouble(Double(bitPattern: payload))
        default: return nil
        }
    }

    /// ``JSONNode/double``.
    @inlinable @inline(__always)
    package var double: Double? {
        let payload = payload
        switch kindBits {
        case JSONKind.int.rawValue: return Double(Int64(bitPattern: payload))
        case JSONKind.uint.rawValue: return Double(payload)
        case JSONKind.double.rawValue: return Double(bitPattern: payload)
        default: return nil
        }
    }

    /// The unescaped UTF-8 bytes of this string node (which must be one).
    @inlinable @inline(__always)
    var stringBytes: UnsafeBufferPointer<UInt8> {
        let payload = payload
        return UnsafeBufferPointer(
            start: strings + Int(truncatingIfNeeded: payload & 0xFFFF_FFFF),
            count: Int(truncatingIfNeeded: payload >> 32))
    }

    /// ``JSONNode/string``.
    @inlinable
    package var string: String? {
        guard kindBits == JSONKind.string.rawValue else { return nil }
        return String(decoding: stringBytes, as: UTF8.self)
    }

    /// ``JSONNode/withUTF8(_:)``: `body` with the string's bytes, `nil` without calling it for
    /// another kind.
    @inlinable @inline(__always)
    package func withUTF8<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R? {
        guard kindBits == JSONKind.string.rawValue else { return nil }
        return try body(stringBytes)
    }

    /// Whether this is a string holding exactly the bytes `other`.
    @inlinable @inline(__always)
    func stringEquals(utf8 other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard kindBits == JSONKind.string.rawValue else { return false }
        let bytes = stringBytes
        guard bytes.count == other.count else { return false }
        guard bytes.count > 0, let start = bytes.baseAddress, let otherStart = other.baseAddress else { return true }
        return bytesEqual(start, otherStart, bytes.count)
    }

    /// ``JSONNode/stringEquals(_:)-(String)``.
    @inlinable
    package func stringEquals(_ other: String) -> Bool {
        withUTF8Bytes(of: other) { stringEquals(utf8: $0) }
    }

    /// ``JSONNode/stringEquals(_:)-(StaticString)``.
    @inlinable
    package func stringEquals(_ other: StaticString) -> Bool {
        other.withUTF8Buffer { stringEquals(utf8: $0) }
    }

    /// ``JSONNode/count``.
    @inlinable @inline(__always)
    package var count: Int {
        let kind = kindBits
        guard kind == JSONKind.array.rawValue || kind == JSONKind.object.rawValue else { return 0 }
        return Int(truncatingIfNeeded: payload)
    }

    /// ``JSONNode/subscript(_:)-(String)``: the value of the first member named `key`.
    @inlinable @inline(__always)
    package subscript(key: String) -> JSONCursor? {
        guard kindBits == JSONKind.object.rawValue else { return nil }
        let found = withUTF8Bytes(of: key) {
            JSONStorage.find(nodes: nodes, strings: strings, object: index, key: $0)
        }
        return found < 0 ? nil : at(found)
    }

    /// ``JSONNode/subscript(_:)-(Int)``: the element at `position` of an array.
    @inlinable
    package subscript(position: Int) -> JSONCursor? {
        guard kindBits == JSONKind.array.rawValue, position >= 0, position < Int(truncatingIfNeeded: payload)
        else { return nil }
        var child = index + 1
        for _ in 0..<position { child = JSONStorage.next(nodes, child) }
        return at(child)
    }

    /// ``JSONNode/elements``: the elements of an array in order (none for another kind).
    @inlinable
    package var elements: Elements {
        Elements(steps: JSONChildSteps(nodes: nodes, of: index, kind: .array), strings: strings)
    }

    /// ``JSONNode/memberNodes``: the members of an object in document order (none for another kind).
    @inlinable
    package var memberNodes: MemberNodes {
        MemberNodes(steps: JSONChildSteps(nodes: nodes, of: index, kind: .object), strings: strings)
    }

    /// ``JSONNode/place``: where this value stands in its document.
    @inlinable
    package var place: UInt32 { UInt32(truncatingIfNeeded: index) }

    /// The cursor at `place` (a ``place`` of a cursor of the same document, which is not checked)
    /// of the document `cursor` reads.
    @inlinable @inline(__always)
    package init(inDocumentOf cursor: JSONCursor, at place: UInt32) {
        self.init(nodes: cursor.nodes, strings: cursor.strings, index: Int(place))
    }

    /// The elements of an array, in order.
    @usableFromInline package typealias Elements = Children<ElementKind>

    /// The members of an object, in document order, keys as string cursors.
    @usableFromInline package typealias MemberNodes = Children<MemberKind>

    /// The children of a container, in order, each as `Kind` makes it from its first node.
    @usableFromInline
    package struct Children<Kind: JSONCursorChildKind>: Sequence, IteratorProtocol {
        @usableFromInline var steps: JSONChildSteps
        @usableFromInline let strings: UnsafePointer<UInt8>

        @inlinable init(steps: JSONChildSteps, strings: UnsafePointer<UInt8>) {
            self.steps = steps
            self.strings = strings
        }

        @inlinable
        package var underestimatedCount: Int { steps.remaining }

        @inlinable @inline(__always)
        package mutating func next() -> Kind.Child? {
            steps.next(nodes: Kind.nodesPerChild).map {
                Kind.child(at: JSONCursor(nodes: steps.nodes, strings: strings, index: $0))
            }
        }
    }

    /// An array's child: one node, the element.
    @usableFromInline
    package enum ElementKind: JSONCursorChildKind {
        @inlinable package static var nodesPerChild: Int { 1 }
        @inlinable package static func child(at first: JSONCursor) -> JSONCursor { first }
    }

    /// An object's child: two nodes, the key (a string) and the value.
    @usableFromInline
    package enum MemberKind: JSONCursorChildKind {
        @inlinable package static var nodesPerChild: Int { 2 }
        @inlinable package static func child(at first: JSONCursor) -> (key: JSONCursor, value: JSONCursor) {
            (first, first.at(first.index &+ 1))
        }
    }
}

/// How the children of one kind of container are made from cursors (``JSONCursor/ElementKind``,
/// ``JSONCursor/MemberKind``), as ``JSONChildKind`` makes them from nodes.
@usableFromInline
package protocol JSONCursorChildKind {
    /// What one child is.
    associatedtype Child
    /// The nodes one child starts with.
    static var nodesPerChild: Int { get }
    /// The child whose first node is `first`.
    static func child(at first: JSONCursor) -> Child
}

/// The steps over the children of a container node: where the next one stands and how many are
/// left (none for a node of another kind). Arrays and objects, of nodes and of cursors, step
/// through them the same way.
@usableFromInline
struct JSONChildSteps {
    @usableFromInline let nodes: UnsafeRawPointer
    @usableFromInline var position: Int
    @usableFromInline var remaining: Int

    /// The children of the node at `index` when it is of `kind`.
    @inlinable @inline(__always)
    init(nodes: UnsafeRawPointer, of index: Int, kind: JSONKind) {
        self.nodes = nodes
        position = index &+ 1
        remaining =
            JSONStorage.kindBits(nodes, index) == kind.rawValue
            ? Int(truncatingIfNeeded: JSONStorage.payload(nodes, index)) : 0
    }

    /// The index of the next child's first node, or `nil` after the last; a child is `nodes`
    /// consecutive nodes (an element 1, a member its key and its value) followed by the rest of
    /// the last one's subtree.
    @inlinable @inline(__always)
    mutating func next(nodes count: Int) -> Int? {
        guard remaining > 0 else { return nil }
        remaining &-= 1
        let child = position
        position = JSONStorage.next(nodes, child &+ count &- 1)
        return child
    }
}
