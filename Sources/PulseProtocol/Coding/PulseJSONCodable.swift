public import PulseJSON
public import PulseKit

/// A Pulse payload with a fast, Foundation-free JSON codec built on `PulseJSON`.
///
/// ``writeJSON(to:)`` produces the *canonical* encoding documented in `docs/wire-protocol.md`:
/// compact UTF-8, keys in the documented order, every field present with explicit `null`s. Decoding
/// ignores unknown keys, applies the documented defaults and throws ``PulseProtocolError`` with the
/// path of the offending field. Object members inside free-form values (event `attributes`, RPC
/// `args`) keep their order and number kinds, so decode-then-encode reproduces canonical input
/// byte for byte.
public protocol PulseJSONCodable: Sendable {
    /// Appends the canonical JSON of this value to `writer`.
    func writeJSON(to writer: inout JSONWriter)
    /// Reads a value from a parsed JSON node.
    init(jsonNode node: JSONNode) throws(PulseProtocolError)
}

extension PulseJSONCodable {
    /// The canonical JSON bytes of this value.
    public func encodeJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writeJSON(to: &writer)
        return writer.bytes
    }

    /// Parses `bytes` with a new parser and decodes a value.
    public init(decodingJSON bytes: [UInt8]) throws(PulseProtocolError) {
        try self.init(decodingJSON: bytes, parser: JSONParser())
    }

    /// Parses `bytes` with `parser` (reuse one per task on hot paths) and decodes a value.
    public init(decodingJSON bytes: [UInt8], parser: JSONParser) throws(PulseProtocolError) {
        self = try decodeDocument(bytes, parser: parser) { node throws(PulseProtocolError) in
            try Self(jsonNode: node)
        }
    }
}

/// Parses `bytes` with `parser` and reads the root with `decode`: the payload-level errors every
/// fast decoder reports (`$: payload is not valid JSON`, field errors prefixed with `$`).
func decodeDocument<T>(
    _ bytes: [UInt8], parser: JSONParser, _ decode: (JSONNode) throws(PulseProtocolError) -> T
) throws(PulseProtocolError) -> T {
    let document: JSONDocument
    do {
        document = try parser.parse(bytes)
    } catch {
        throw PulseProtocolError(.malformedJSON, "$: payload is not valid JSON", underlying: error)
    }
    do {
        return try decode(document.root)
    } catch {
        throw error.at("$")
    }
}

extension Bool: PulseJSONCodable {
    /// Writes `true` or `false`.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.bool(self)
    }

    /// Reads a JSON Boolean.
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        guard let value = node.bool else {
            throw PulseProtocolError(.typeMismatch, "$: expected a boolean")
        }
        self = value
    }
}
