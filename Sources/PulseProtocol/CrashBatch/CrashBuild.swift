public import PulseJSON

/// The build a crash happened in; it can differ from the uploading build's identity when a crash
/// from a previous launch is sent after an update.
///
/// Wire keys in canonical order: `appVersion` (nullable), `buildNumber` (default 0), `imageUuids`
/// (default `[]`: the UUIDs of the loaded images needed for symbolication), `osVersion` (nullable),
/// `architecture` (nullable, for example `arm64`).
public struct CrashBuild: Sendable, Hashable, PulseJSONCodable {
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
