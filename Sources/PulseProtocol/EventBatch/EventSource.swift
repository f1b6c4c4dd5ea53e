import PulseJSON

/// Where an event was recorded: `{"module":…,"imageUuid":…}`, both nullable.
public struct EventSource: Sendable, Hashable, Codable, PulseJSONCodable {
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

    enum CodingKeys: String, CodingKey {
        case module, imageUuid
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        module = try c.decodeIfPresent(String.self, forKey: .module)
        imageUuid = try c.decodeIfPresent(String.self, forKey: .imageUuid)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeNullable(module, forKey: .module)
        try c.encodeNullable(imageUuid, forKey: .imageUuid)
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        module = try o.optionalString("module")
        imageUuid = try o.optionalString("imageUuid")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.pulseEventSource(module: module, imageUuid: imageUuid)
    }
}
