public import PulseJSON
public import PulseKit

/// The stack of a crash: structured frames (a JSON array) or an unparsed textual trace (a JSON
/// string), for example a platform crash log section.
public enum CrashStack: Sendable, Hashable, PulseJSONCodable {
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
        var frames: [CrashFrame] = []
        frames.reserveCapacity(node.count)
        for (index, element) in node.elements.enumerated() {
            do {
                frames.append(try CrashFrame(jsonNode: element))
            } catch {
                throw error.at("[\(index)]")
            }
        }
        self = .frames(frames)
    }

    public func writeJSON(to writer: inout JSONWriter) {
        switch self {
        case .frames(let frames):
            writer.beginArray()
            for frame in frames {
                frame.writeJSON(to: &writer)
            }
            writer.endArray()
        case .text(let text):
            writer.string(text)
        }
    }
}
