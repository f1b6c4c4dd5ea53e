/// A materialized JSON value.
///
/// Objects are ordered lists of ``JSONMember`` (document order, duplicates kept), so a value
/// survives a parse/encode round trip unchanged. Numbers keep the kind the parser gave them (see
/// ``JSONKind``); `.double` is never NaN or infinite when it comes from the parser. Equality is
/// structural: `.int(1)`, `.uint(1)` and `.double(1)` are different values, member order matters,
/// and `.double(0)` equals `.double(-0.0)` (IEEE equality).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// Parses a complete JSON text into a value tree.
    ///
    /// This creates a temporary ``JSONParser``; on hot paths reuse a parser and read
    /// ``JSONNode``s (or materialize with ``JSONNode/value``) instead.
    public static func parse(
        _ bytes: [UInt8], maxDepth: Int = 64, maxBytes: Int = 64 << 20
    ) throws(PulseJSONError) -> JSONValue {
        try JSONParser(maxDepth: maxDepth, maxBytes: maxBytes).parse(bytes).root.value
    }

    /// The compact JSON encoding of this value (see ``JSONWriter`` for the exact format).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    /// The value of the first member named `key` when this is an object, otherwise `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}
