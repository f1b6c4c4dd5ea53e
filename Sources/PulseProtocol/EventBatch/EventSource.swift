public import PulseJSON

/// Where an event was recorded: `{"module":…,"imageUuid":…}`, both nullable.
public struct EventSource: Sendable, Hashable, PulseJSONCodable, WireReadable, WireWritable {
    /// The module (library or framework) that produced the event.
    public var module: String?
    /// The UUID of the binary image containing the call site.
    public var imageUuid: String?

    /// An unknown source: both fields `null`.
    public static let unknown = EventSource(module: nil, imageUuid: nil)

    /// Creates a source.
    public init(module: String?, imageUuid: String?) {
        self.module = module
        self.imageUuid = imageUuid
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        module = try o.nullable("module")
        imageUuid = try o.nullable("imageUuid")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.withRun { $0.pulseEventSource(module: module, imageUuid: imageUuid) }
    }
}
