public import PulseJSON
public import PulseKit

/// The stack of a crash: structured frames (a JSON array) or an unparsed textual trace (a JSON
/// string), for example a platform crash log section.
public enum CrashStack: Sendable, Hashable, PulseJSONCodable, WireReadable {
    /// Frames, innermost first.
    case frames([CrashFrame])
    /// A raw textual stack trace.
    case text(String)

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        if let text = node.string {
            self = .text(text)
            return
        }
        guard node.kind == .array else {
            throw PulseProtocolError(.typeMismatch, "$: expected an array of frames or a string")
        }
        self = .frames(try [CrashFrame](wireNode: node, nullable: false))
    }

    public func writeJSON(to writer: inout JSONWriter) {
        switch self {
        case .frames(let frames):
            frames.writeWire(to: &writer)
        case .text(let text):
            writer.string(text)
        }
    }
}
