/// A cheap cursor to one value of a ``JSONDocument``.
///
/// A node is a reference to the document's storage plus an index: copying it is cheap and it keeps
/// the document alive. Accessors never throw; they return `nil` (or an empty sequence) when the
/// node has another kind.
public struct JSONNode: Sendable {
    @usableFromInline let storage: JSONStorage
    @usableFromInline let index: Int

    @inlinable init(storage: JSONStorage, index: Int) {
        self.storage = storage
        self.index = index
    }

    /// This node as a ``JSONCursor`` (valid while this node's document lives).
    @inlinable @inline(__always)
    var cursor: JSONCursor { storage.cursor(index) }

    /// Calls `body` with this node as a ``JSONCursor``, keeping the document alive while it runs:
    /// the cursor and every cursor reached from it are valid only inside `body` (package use: the
    /// gateway's mapping walk steps through the request with cursors, without reference counting).
    @inlinable
    package func withCursor<R, E: Error>(_ body: (JSONCursor) throws(E) -> R) throws(E) -> R {
        try withExtendedLifetime(storage) { () throws(E) -> R in try body(cursor) }
    }

    /// The kind of this value.
    @inlinable @inline(__always)
    public var kind: JSONKind { cursor.kind }

    /// Whether this value is `null`.
    @inlinable @inline(__always)
    public var isNull: Bool { cursor.isNull }

    /// The Boolean, or `nil` if this is not `true`/`false`.
    @inlinable @inline(__always)
    public var bool: Bool? { cursor.bool }

    /// The value as an exact `Int64`, or `nil`.
    ///
    /// Integers (``JSONKind/int``, and ``JSONKind/uint`` within range) convert; so do doubles with
    /// an integral value in range (`2.0`, `1e3`), since some encoders write integers that way.
    /// Fractional or out-of-range numbers and every non-number give `nil`: nothing is rounded or
    /// truncated. Strings are not converted (OTLP's decimal-string int64s are the caller's job).
    @inlinable @inline(__always)
    public var int64: Int64? { cursor.int64 }

    /// The value as an exact `UInt64`, or `nil`; same rules as ``int64`` (negative values give `nil`).
    @inlinable @inline(__always)
    public var uint64: UInt64? { cursor.uint64 }

    /// The value as a `Double` for any number kind (integers beyond 2^53 round to the nearest
    /// double), or `nil` for non-numbers.
    @inlinable @inline(__always)
    public var double: Double? { cursor.double }

    /// The string (unescaped), or `nil` if this is not a string.
    @inlinable @inline(__always)
    public var string: String? { withCursor { $0.string } }

    /// Calls `body` with the unescaped UTF-8 bytes of this string without creating a `String`;
    /// returns `nil` without calling it if this is not a string. The buffer is valid only inside
    /// `body`.
    @inlinable
    public func withUTF8<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R? {
        try withCursor { cursor throws(E) -> R? in try cursor.withUTF8(body) }
    }

    /// Whether this is a string equal to `other` (byte-wise UTF-8 comparison, no allocation).
    @inlinable
    public func stringEquals(_ other: String) -> Bool {
        withCursor { $0.stringEquals(other) }
    }

    /// Whether this is a string equal to `other` (byte-wise UTF-8 comparison, no allocation).
    @inlinable
    public func stringEquals(_ other: StaticString) -> Bool {
        withCursor { $0.stringEquals(other) }
    }

    /// The number of elements of an array or members of an object; 0 for any other kind.
    @inlinable @inline(__always)
    public var count: Int { cursor.count }

    /// The value of the first member named `key`, or `nil` if there is none or this is not an object.
    ///
    /// Lookup is a linear scan over the members comparing UTF-8 bytes (no allocation). With
    /// duplicate keys the first occurrence wins; ``members`` still yields every one.
    @inlinable @inline(__always)
    public subscript(key: String) -> JSONNode? {
        // The cursor holds only pointers (a closure capturing the storage costs a retain); the
        // storage is kept alive while they are in use.
        withCursor { $0[key] }.map { JSONNode(storage: storage, index: $0.index) }
    }

    /// The element at `index` of an array, or `nil` if out of bounds or this is not an array.
    ///
    /// Elements are reached by skipping the preceding subtrees (one step each); iterate
    /// ``elements`` to visit them all.
    @inlinable
    public subscript(index: Int) -> JSONNode? {
        withCursor { $0[index] }.map { JSONNode(storage: storage, index: $0.index) }
    }

    /// The elements of an array in order (empty for any other kind).
    @inlinable
    public var elements: Elements { Elements(children: ChildRun(of: self, kind: .array)) }

    /// The members of an object in document order, duplicates included (empty for any other kind).
    /// Each key is materialized as a `String`; use ``memberNodes`` to match keys without allocating.
    @inlinable
    public var members: Members { Members(nodes: memberNodes) }

    /// The members of an object in document order, with each key as a string ``JSONNode`` (use
    /// ``stringEquals(_:)-(String)`` to match keys without allocating). Empty for any other kind.
    @inlinable
    public var memberNodes: MemberNodes { MemberNodes(children: ChildRun(of: self, kind: .object)) }

    /// The value materialized as a ``JSONValue`` tree (objects keep member order and duplicates).
    public var value: JSONValue { storage.value(index) }
}

extension JSONNode {
    /// Where this node stands in its document: with ``init(inDocumentOf:at:)`` a handle of four
    /// bytes that holds no reference (package use: the gateway's mapping keeps an object's
    /// members by field this way).
    /// (The node tape addresses nodes with 32 bits.)
    package var place: UInt32 { UInt32(truncatingIfNeeded: index) }

    /// The node at `place` (a ``place`` of a node or a ``JSONCursor``) of the document `node`
    /// belongs to.
    package init(inDocumentOf node: JSONNode, at place: UInt32) {
        precondition(Int(place) < node.storage.nodeCount, "a place in the document")
        self.init(storage: node.storage, index: Int(place))
    }

    /// The node `cursor` reads, of the document `node` belongs to (which `cursor` must read too).
    package init(inDocumentOf node: JSONNode, at cursor: JSONCursor) {
        precondition(cursor.nodes == UnsafeRawPointer(node.storage.base), "a cursor of the same document")
        self.init(storage: node.storage, index: cursor.index)
    }
}

extension JSONNode {
    /// The children of a container node: where the first one stands and how many there are (none
    /// for a node of another kind). Arrays and objects step through them the same way.
    @usableFromInline struct ChildRun: Sendable {
        @usableFromInline let storage: JSONStorage
        @usableFromInline let index: Int
        @usableFromInline let kind: JSONKind

        @inlinable init(of node: JSONNode, kind: JSONKind) {
            storage = node.storage
            index = node.index
            self.kind = kind
        }

        @inlinable var count: Int { makeCursor().steps.remaining }

        @inlinable func makeCursor() -> Cursor {
            Cursor(storage: storage, steps: JSONChildSteps(nodes: storage.base, of: index, kind: kind))
        }

        /// Steps over the children (``JSONChildSteps``), keeping the document alive.
        @usableFromInline struct Cursor: @unchecked Sendable {
            // Sendable: the steps read the immutable tape of `storage`, which this holds.
            @usableFromInline let storage: JSONStorage
            @usableFromInline var steps: JSONChildSteps

            @inlinable init(storage: JSONStorage, steps: JSONChildSteps) {
                self.storage = storage
                self.steps = steps
            }

            /// The index of the next child's first node, or `nil` after the last.
            @inlinable mutating func next(nodes: Int) -> Int? { steps.next(nodes: nodes) }
        }
    }

    /// The elements of an array node, in order.
    public typealias Elements = Children<ArrayChild>

    /// The members of an object node, in document order, keys as string nodes.
    public typealias MemberNodes = Children<MemberChild>

    /// The children of a container node, in order, each as `Kind` makes it from its nodes.
    public struct Children<Kind: JSONChildKind>: Sequence, Sendable {
        @usableFromInline let children: ChildRun

        @inlinable init(children: ChildRun) { self.children = children }

        @inlinable
        public var underestimatedCount: Int { children.count }

        @inlinable
        public func makeIterator() -> Iterator { Iterator(cursor: children.makeCursor()) }

        /// Iterates the children of a container node.
        public struct Iterator: IteratorProtocol, Sendable {
            @usableFromInline var cursor: ChildRun.Cursor

            @inlinable init(cursor: ChildRun.Cursor) { self.cursor = cursor }

            @inlinable
            public mutating func next() -> Kind.Child? {
                cursor.next(nodes: Kind.nodesPerChild).map {
                    Kind.child(at: JSONNode(storage: cursor.storage, index: $0))
                }
            }
        }
    }

    /// An array's child: one node, the element.
    public enum ArrayChild: JSONChildKind {
        @inlinable public static var nodesPerChild: Int { 1 }
        @inlinable public static func child(at first: JSONNode) -> JSONNode { first }
    }

    /// An object's child: two nodes, the key (a string node) and the value.
    public enum MemberChild: JSONChildKind {
        @inlinable public static var nodesPerChild: Int { 2 }
        @inlinable public static func child(at first: JSONNode) -> (key: JSONNode, value: JSONNode) {
            (first, JSONNode(storage: first.storage, index: first.index + 1))
        }
    }

    /// The members of an object node, in document order, keys as `String`s.
    public struct Members: Sequence, Sendable {
        @usableFromInline let nodes: MemberNodes

        @inlinable init(nodes: MemberNodes) { self.nodes = nodes }

        @inlinable
        public var underestimatedCount: Int { nodes.children.count }

        @inlinable
        public func makeIterator() -> Iterator { Iterator(base: nodes.makeIterator()) }

        /// Iterates the members of an object node.
        public struct Iterator: IteratorProtocol, Sendable {
            @usableFromInline var base: MemberNodes.Iterator

            @inlinable init(base: MemberNodes.Iterator) { self.base = base }

            @inlinable
            public mutating func next() -> (key: String, value: JSONNode)? {
                guard let (key, value) = base.next() else { return nil }
                return (key.storage.string(key.index), value)
            }
        }
    }
}

// `Int64(exactly:)` on a Double calls libm's rounding functions, which this module does not link;
// truncating conversion plus a round-trip check is exact and needs no library call.

/// `value` as an `Int64` if it is integral and in range, else `nil`.
@usableFromInline func exactInt64(_ value: Double) -> Int64? {
    // -2^63 is representable; 2^63 is the first value out of range. NaN fails both comparisons.
    guard value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0 else { return nil }
    let truncated = Int64(value)
    return Double(truncated) == value ? truncated : nil
}

/// `value` as a `UInt64` if it is integral and in range, else `nil`.
@usableFromInline func exactUInt64(_ value: Double) -> UInt64? {
    guard value >= 0, value < 18_446_744_073_709_551_616.0 else { return nil }
    let truncated = UInt64(value)
    return Double(truncated) == value ? truncated : nil
}

/// Calls `body` with the UTF-8 bytes of `text` (contiguous for every native string, so the
/// fallback copy is for bridged strings only). Cheaper than `withUTF8` on a mutable copy.
@inlinable @inline(__always)
func withUTF8Bytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = text
    return copy.withUTF8(body)
}

/// How the children of one kind of container node are made from its node tape (``JSONNode/ArrayChild``,
/// ``JSONNode/MemberChild``).
public protocol JSONChildKind: Sendable {
    /// What one child is.
    associatedtype Child
    /// The nodes one child starts with: its first node and those after it before the last one's subtree.
    static var nodesPerChild: Int { get }
    /// The child whose first node is `first`.
    static func child(at first: JSONNode) -> Child
}
