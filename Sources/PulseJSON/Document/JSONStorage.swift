/// The immutable node tape and string arena of one parsed document, shared by its nodes.
///
/// `nodes` holds two words per node, in document (pre-order) order: `head` (bits 0-7 the kind,
/// bits 32-63 the index of the first node after the node's subtree) and `payload` (scalar bits,
/// string offset/length, or the container's element/member count). An object's children alternate
/// key (a string node) and value. This mirrors `pgjson_node` in `pulse_simdjson.h`.
final class JSONStorage: Sendable {
    let nodes: [UInt64]
    let strings: [UInt8]

    init(nodes: [UInt64], strings: [UInt8]) {
        self.nodes = nodes
        self.strings = strings
    }

    @inline(__always) func head(_ index: Int) -> UInt64 { nodes[index &* 2] }
    @inline(__always) func payload(_ index: Int) -> UInt64 { nodes[index &* 2 &+ 1] }
    @inline(__always) func kindBits(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: head(index)) }
    @inline(__always) func next(_ index: Int) -> Int { Int(truncatingIfNeeded: head(index) >> 32) }

    /// Calls `body` with the UTF-8 bytes of the string node at `index` (which must be a string).
    @inline(__always)
    func withStringBytes<R, E: Error>(
        _ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R
    ) throws(E) -> R {
        let payload = payload(index)
        let offset = Int(truncatingIfNeeded: payload & 0xFFFF_FFFF)
        let length = Int(truncatingIfNeeded: payload >> 32)
        return try strings.withUnsafeBufferPointer { (all) throws(E) -> R in
            try body(UnsafeBufferPointer(rebasing: all[offset..<(offset + length)]))
        }
    }

    /// Whether the string node at `index` holds exactly the bytes `other`.
    @inline(__always)
    func stringEquals(_ index: Int, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        let payload = payload(index)
        let length = Int(truncatingIfNeeded: payload >> 32)
        guard length == other.count else { return false }
        let offset = Int(truncatingIfNeeded: payload & 0xFFFF_FFFF)
        return strings.withUnsafeBufferPointer { all in
            precondition(offset + length <= all.count)
            guard length > 0, let base = all.baseAddress, let otherBase = other.baseAddress else { return true }
            var i = 0
            while i < length {
                if base[offset &+ i] != otherBase[i] { return false }
                i &+= 1
            }
            return true
        }
    }

    func string(_ index: Int) -> String {
        withStringBytes(index) { String(decoding: $0, as: UTF8.self) }
    }
}
