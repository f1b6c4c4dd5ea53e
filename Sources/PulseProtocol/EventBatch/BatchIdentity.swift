import PulseJSON

/// The identity envelope of an upload batch (`CLIENT_EVENT_BATCH_UPLOAD` and
/// `CLIENT_CRASH_BATCH_UPLOAD`). It belongs to the whole batch and is never repeated per record; it
/// must match the identity accepted at `CLIENT_CONNECT` or the batch gets code 403.
///
/// Wire keys in canonical order: `projectId` (the App ID; the name is kept on the wire),
/// `installationId`, `deviceId`, `userId` (nullable), `appVersion` (nullable), `buildNumber` (default
/// 0), `sdkVersion`, `platform`, `packageName` (nullable, like `CLIENT_CONNECT`'s). The other strings
/// are required.
public struct BatchIdentity: Sendable, Hashable {
    /// The App ID.
    public var projectId: String
    /// The installation identifier.
    public var installationId: String
    /// The device identifier.
    public var deviceId: String
    /// The user ID set by the host app's explicit identify call, if any.
    public var userId: String?
    /// The app's display version.
    public var appVersion: String?
    /// The monotonic platform build number.
    public var buildNumber: Int64
    /// The SDK version.
    public var sdkVersion: String
    /// The platform, for example `ios`.
    public var platform: String
    /// The runtime package name, when known.
    public var packageName: String?

    /// Creates an identity.
    public init(
        projectId: String, installationId: String, deviceId: String, userId: String?, appVersion: String?,
        buildNumber: Int64 = 0, sdkVersion: String, platform: String, packageName: String?
    ) {
        self.projectId = projectId
        self.installationId = installationId
        self.deviceId = deviceId
        self.userId = userId
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.sdkVersion = sdkVersion
        self.platform = platform
        self.packageName = packageName
    }
}

extension BatchIdentity: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        BatchIdentity(
            projectId: "", installationId: "", deviceId: "", userId: nil, appVersion: nil, sdkVersion: "", platform: "",
            packageName: nil),
        .required("projectId", \.projectId), .required("installationId", \.installationId),
        .required("deviceId", \.deviceId), .nullable("userId", \.userId), .nullable("appVersion", \.appVersion),
        .defaulted("buildNumber", \.buildNumber), .required("sdkVersion", \.sdkVersion),
        .required("platform", \.platform), .nullable("packageName", \.packageName))
}
