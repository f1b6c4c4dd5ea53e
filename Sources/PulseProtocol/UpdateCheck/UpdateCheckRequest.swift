import PulseJSON

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

extension UpdateCheckRequest: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        UpdateCheckRequest(platform: "", appKey: "", packageName: "", buildNumber: 0),
        .required("platform", \.platform), .required("appKey", \.appKey), .required("packageName", \.packageName),
        .defaulted("buildNumber", \.buildNumber))
}
