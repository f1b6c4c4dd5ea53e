import PulseJSON

/// `CLIENT_APP_UPDATE_CHECK` (biz type 6) request.
///
/// Wire keys in canonical order: `platform`, `appKey`, `packageName`, `buildNumber`. `buildNumber`
/// defaults to 0 when absent; the others are required. Versions are ordered by this monotonic build
/// number, never by comparing display versions.
public struct UpdateCheckRequest: Sendable, Hashable, Codable {
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

    enum CodingKeys: String, CodingKey {
        case platform, appKey, packageName, buildNumber
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        platform = try c.decode(String.self, forKey: .platform)
        appKey = try c.decode(String.self, forKey: .appKey)
        packageName = try c.decode(String.self, forKey: .packageName)
        buildNumber = try c.decode(Int64.self, forKey: .buildNumber, default: 0)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(platform, forKey: .platform)
        try c.encode(appKey, forKey: .appKey)
        try c.encode(packageName, forKey: .packageName)
        try c.encode(buildNumber, forKey: .buildNumber)
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
