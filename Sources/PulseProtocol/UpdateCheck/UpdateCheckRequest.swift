public import PulseJSON

/// `CLIENT_APP_UPDATE_CHECK` (biz type 6) request.
///
/// Wire keys in canonical order: `platform`, `appKey`, `packageName`, `buildNumber`. `buildNumber`
/// defaults to 0 when absent; the others are required. Versions are ordered by this monotonic build
/// number, never by comparing display versions.
public struct UpdateCheckRequest: Sendable, Hashable {
    /// The platform, for example `ios`.
    public var platform: String
    /// The App ID (AppKey).
    public var appKey: String
    /// The runtime package name.
    public var packageName: String
    /// The installed platform build number.
    public var buildNumber: Int64

    /// Creates a request.
    public init(platform: String, appKey: String, packageName: String, buildNumber: Int64) {
        self.platform = platform
        self.appKey = appKey
        self.packageName = packageName
        self.buildNumber = buildNumber
    }
}

extension UpdateCheckRequest: PulseJSONCodable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        platform = try o.string("platform")
        appKey = try o.string("appKey")
        packageName = try o.string("packageName")
        buildNumber = try o.int64("buildNumber", default: 0)
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("platform", platform)
        writer.field("appKey", appKey)
        writer.field("packageName", packageName)
        writer.field("buildNumber", buildNumber)
        writer.endObject()
    }
}
