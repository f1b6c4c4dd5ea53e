import PulseJSON

/// `CLIENT_CONNECT` (biz type 1) request: binds the connection to an app, package, installation and
/// SDK build. It is SDK registration, not user login.
///
/// Wire keys in canonical order: `protocolVersion`, `appId`, `deviceId`, `installationId`, `platform`,
/// `deviceType`, `packageName`, `appVersion`, `buildNumber`, `sdkVersion`, `capabilities`.
/// `packageName` and `appVersion` may be `null`; `buildNumber` defaults to 0 and `capabilities` to `[]`
/// when absent; every other field is required.
public struct ConnectRequest: Sendable, Hashable {
    /// The Pulse protocol version the client speaks; 2 for this registry.
    public var protocolVersion: Int
    /// The public App ID.
    public var appId: String
    /// The device identifier.
    public var deviceId: String
    /// The installation identifier.
    public var installationId: String
    /// The platform, for example `ios` or `android`.
    public var platform: String
    /// The device type, for example `phone`.
    public var deviceType: String
    /// The runtime package (bundle identifier), checked against the App ID's package policy.
    public var packageName: String?
    /// The display version of the app.
    public var appVersion: String?
    /// The monotonic platform build number (`CFBundleVersion` on iOS).
    public var buildNumber: Int64
    /// The SDK (PulseKit) version.
    public var sdkVersion: String
    /// Capability tokens such as `batch_upload`, `compression:zstd`, `bidirectional_request`.
    public var capabilities: [String]

    /// The protocol version described by this module.
    public static let currentProtocolVersion = 2

    /// Creates a request.
    public init(
        protocolVersion: Int = ConnectRequest.currentProtocolVersion, appId: String, deviceId: String,
        installationId: String, platform: String, deviceType: String, packageName: String?, appVersion: String?,
        buildNumber: Int64 = 0, sdkVersion: String, capabilities: [String] = []
    ) {
        self.protocolVersion = protocolVersion
        self.appId = appId
        self.deviceId = deviceId
        self.installationId = installationId
        self.platform = platform
        self.deviceType = deviceType
        self.packageName = packageName
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.sdkVersion = sdkVersion
        self.capabilities = capabilities
    }
}

extension ConnectRequest: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        ConnectRequest(
            appId: "", deviceId: "", installationId: "", platform: "", deviceType: "", packageName: nil,
            appVersion: nil, sdkVersion: ""),
        .required("protocolVersion", \.protocolVersion), .required("appId", \.appId),
        .required("deviceId", \.deviceId), .required("installationId", \.installationId),
        .required("platform", \.platform), .required("deviceType", \.deviceType),
        .nullable("packageName", \.packageName), .nullable("appVersion", \.appVersion),
        .defaulted("buildNumber", \.buildNumber), .required("sdkVersion", \.sdkVersion),
        .defaulted("capabilities", \.capabilities))
}
