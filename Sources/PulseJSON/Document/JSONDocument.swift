/// A parsed JSON document.
///
/// The document owns its own copy of the node tape and the unescaped strings, so it is
/// independent of the ``JSONParser`` that produced it, immutable and `Sendable`.
public struct JSONDocument: Sendable {
    let storage: JSONStorage

    init(storage: JSONStorage) {
        self.storage = storage
    }

    /// The top-level value.
    public var root: JSONNode { JSONNode(storage: storage, index: 0) }

    /// The number of nodes (every value and every object key counts one).
    public var nodeCount: Int { storage.nodeCount }

    /// The bytes the document holds: 16 per node plus its unescaped strings.
    public var byteCount: Int { storage.nodeCount * 16 + storage.stringCount }
}
