import PulseJSON

/// The build a crash happened in; it can differ from the uploading build's identity when a crash
/// from a previous launch is sent after an update.
///
/// Wire keys in canonical order: `appVersion` (nullable), `buildNumber` (default 0), `imageUuids`
/// (default `[]`: the UUIDs of the loaded images needed for symbolication), `osVersion` (nullable),
/// `architecture` (nullable, for example `arm64`).
public struct CrashBuild: Sendable, Hashable, Codable, PulseJSONCodable {
    /// The app's display version.
    public var appVersion: String?
    /// The platform build number.
    public var buildNumber: Int64
    /// UUIDs of the binary images loaded in the crashed process.
    public var imageUuids: [String]
    /// The operating system version.
    public var osVersion: String?
    /// The CPU architecture.
    public var architecture: String?

    /// Creates a build identity.
    public init(
        appVersion: String?, buildNumber: Int64 = 0, imageUuids: [String] = [], osVersion: String? = nil,
        architecture: String? = nil
    ) {
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.imageUuids = imageUuids
        self.osVersion = osVersion
        self.architecture = architecture
    }

    enum CodingKeys: String, CodingKey {
        case appVersion, buildNumber, imageUuids, osVersion, architecture
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        appVersion = try c.decodeIfPresent(String.self, forKey: .appVersion)
        buildNumber = try c.decode(Int64.self, forKey: .buildNumber, default: 0)
        imageUuids = try c.decode([String].self, forKey: .imageUuids, default: [])
        osVersion = try c.decodeIfPresent(String.self, forKey: .osVersion)
        architecture = try c.decodeIfPresent(String.self, forKey: .architecture)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeNullable(appVersion, forKey: .appVersion)
        try c.encode(buildNumber, forKey: .buildNumber)
        try c.encode(imageUuids, forKey: .imageUuids)
        try c.encodeNullable(osVersion, forKey: .osVersion)
        try c.encodeNullable(architecture, forKey: .architecture)
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        appVersion = try o.optionalString("appVersion")
        buildNumber = try o.int64("buildNumber", default: 0)
        imageUuids = try o.stringArray("imageUuids", default: [])
        osVersion = try o.optionalString("osVersion")
        architecture = try o.optionalString("architecture")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("appVersion", appVersion)
        writer.field("buildNumber", buildNumber)
        writer.key("imageUuids")
        writer.beginArray()
        for uuid in imageUuids {
            writer.string(uuid)
        }
        writer.endArray()
        writer.field("osVersion", osVersion)
        writer.field("architecture", architecture)
        writer.endObject()
    }
}
