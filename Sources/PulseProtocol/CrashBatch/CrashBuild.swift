public import PulseJSON

/// The build a crash happened in; it can differ from the uploading build's identity when a crash
/// from a previous launch is sent after an update.
///
/// Wire keys in canonical order: `appVersion` (nullable), `buildNumber` (default 0), `imageUuids`
/// (default `[]`: the UUIDs of the loaded images needed for symbolication), `osVersion` (nullable),
/// `architecture` (nullable, for example `arm64`).
public struct CrashBuild: Sendable, Hashable {
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
}

// Not `WireObjectCodable`: the inlinable `pulseCrashReport` writer calls `writeJSON(to:)`, which
// must be a public member for that.
extension CrashBuild: PulseJSONCodable, WireReadable, WireWritable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        self = try Self.wire.decode(node)
    }

    public func writeJSON(to writer: inout JSONWriter) {
        Self.wire.write(self, to: &writer)
    }

    static let wire = WireObject(
        CrashBuild(appVersion: nil),
        .nullable("appVersion", \.appVersion), .defaulted("buildNumber", \.buildNumber),
        .defaulted("imageUuids", \.imageUuids), .nullable("osVersion", \.osVersion),
        .nullable("architecture", \.architecture))
}
