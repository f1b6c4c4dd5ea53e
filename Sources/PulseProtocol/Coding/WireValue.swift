import PulseJSON
import PulseKit

/// A value the fast decoders read from one JSON node: the one place that knows what a kind of value
/// looks like on the wire and what a wrong one is reported as.
///
/// Errors are rooted at the value itself (`$: expected a string`); the member or element that holds
/// it re-roots them with ``PulseProtocolError/at(_:)`` (`appId: expected a string`,
/// `capabilities[2]: expected a string`, `endpoints[0].url: required field is missing`).
protocol WireReadable: SendableMetatype {
    /// Reads a value from `node`, which is never `null`. `nullable` says whether the member holding
    /// it may also be `null` or absent; only the strings' messages mention it.
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError)
}

/// A value the wire writers write: how it looks, without a key.
protocol WireWritable: SendableMetatype {
    /// Appends the canonical JSON of this value to `writer`.
    func writeWire(to writer: inout JSONWriter)
}

/// A value of a wire table's member (see ``WireObject``).
typealias WireValue = WireReadable & WireWritable

extension WireReadable where Self: PulseJSONCodable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        try self.init(jsonNode: node)
    }
}

extension WireWritable where Self: PulseJSONCodable {
    func writeWire(to writer: inout JSONWriter) {
        writeJSON(to: &writer)
    }
}

extension PulseProtocolError {
    /// `<path>: expected <expected>`, the type mismatch of a value read by a fast decoder (`$`:
    /// the value itself).
    static func mismatch(_ expected: String, at path: String = "$") -> PulseProtocolError {
        PulseProtocolError(.typeMismatch, "\(path): expected \(expected)")
    }
}

extension String: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        guard let string = node.string else {
            throw .mismatch(nullable ? "a string or null" : "a string")
        }
        self = string
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.string(self)
    }
}

extension Int64: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        guard let int = node.int64 else {
            throw .mismatch("an integer")
        }
        self = int
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.int(self)
    }
}

extension Int: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        guard let int = Int(exactly: try Int64(wireNode: node, nullable: nullable)) else {
            throw .mismatch("an integer in range")
        }
        self = int
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.int(Int64(self))
    }
}

extension Bool: WireReadable, WireWritable {}

extension PulseEventKind: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        try self.init(jsonNode: node, field: "$")
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.string(rawValue)
    }
}

/// An array of wire values; each element's errors are prefixed with its index (`[3].kind: …`).
extension Array: WireReadable where Element: WireReadable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        guard node.kind == .array else {
            throw .mismatch("an array")
        }
        self = []
        reserveCapacity(node.count)
        var index = 0
        for element in node.elements {
            do {
                append(try Element(wireNode: element, nullable: false))
            } catch {
                throw error.at("[\(index)]")
            }
            index += 1
        }
    }
}

extension Array: WireWritable where Element: WireWritable {
    func writeWire(to writer: inout JSONWriter) {
        writer.beginArray()
        for element in self {
            element.writeWire(to: &writer)
        }
        writer.endArray()
    }
}

/// A closed set of strings read and written by raw value, such as ``PayloadCodec``: an unknown
/// string is ``PulseProtocolError/Code/invalidValue`` `unknown <noun> "<text>"`.
protocol WireStringEnum: RawRepresentable<String>, WireValue {
    /// What one value is called in the error for an unknown string (`codec`, `level`).
    static var wireNoun: String { get }
}

extension WireStringEnum {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        try self.init(wireText: try String(wireNode: node, nullable: nullable), noun: Self.wireNoun, prefix: "$: ")
    }

    /// Reads the value from a `Codable` decoder (configuration files), where an unknown string is
    /// `unknown <noun> "<text>"`.
    init(from decoder: any Decoder, noun: String) throws {
        try self.init(wireText: try decoder.singleValueContainer().decode(String.self), noun: noun, prefix: "")
    }

    /// The value named `text`; an unknown one throws `<prefix>unknown <noun> "<text>"`.
    private init(wireText text: String, noun: String, prefix: String) throws(PulseProtocolError) {
        guard let value = Self(rawValue: text) else {
            throw PulseProtocolError(.invalidValue, "\(prefix)unknown \(noun) \(PulseProtocolError.quoted(text))")
        }
        self = value
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.string(rawValue)
    }
}

extension PayloadCodec: WireStringEnum {
    static var wireNoun: String { "codec" }
}

extension DiagnosticsLevel: WireStringEnum {
    static var wireNoun: String { "level" }
}

/// Lenient by contract: any string but `optional` and `forced` reads as ``UpdateAction/none``.
extension UpdateAction: WireReadable, WireWritable {
    init(wireNode node: JSONNode, nullable: Bool) throws(PulseProtocolError) {
        self.init(wireValue: try String(wireNode: node, nullable: nullable))
    }

    func writeWire(to writer: inout JSONWriter) {
        writer.string(rawValue)
    }
}
