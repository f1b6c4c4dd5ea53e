/// Who is sending: the resource attributes put on every batch (see `docs/mapping.md` for how the gateway reads
/// them).
public struct ResourceIdentity: Sendable, Equatable {
    /// `device.id`.
    public var deviceId: String
    /// `app.installation.id`.
    public var installationId: String
    /// `service.name`; defaults to the app id.
    public var serviceName: String?
    /// `service.version`, the app version, if known.
    public var appVersion: String?
    /// `apsio.app.build_number`, if known.
    public var buildNumber: Int64?
    /// `apsio.app.package_name`, if known.
    public var packageName: String?
    /// `os.type` (lower case: `linux`, `darwin`, `android`, …).
    public var osType: String
    /// `os.version`, if known.
    public var osVersion: String?
    /// `host.arch`, if known.
    public var hostArch: String?
    /// `user.id`, if the app has one and may send it.
    public var userId: String?
    /// Further resource attributes.
    public var attributes: [String: AttributeValue]

    /// Creates an identity.
    public init(
        deviceId: String, installationId: String, serviceName: String? = nil, appVersion: String? = nil,
        buildNumber: Int64? = nil, packageName: String? = nil, osType: String = ResourceIdentity.currentOSType,
        osVersion: String? = nil, hostArch: String? = nil, userId: String? = nil,
        attributes: [String: AttributeValue] = [:]
    ) {
        self.deviceId = deviceId
        self.installationId = installationId
        self.serviceName = serviceName
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.packageName = packageName
        self.osType = osType
        self.osVersion = osVersion
        self.hostArch = hostArch
        self.userId = userId
        self.attributes = attributes
    }

    /// The `os.type` of the running system.
    public static var currentOSType: String {
        #if os(Linux)
            return "linux"
        #elseif os(macOS) || os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            return "darwin"
        #elseif os(Android)
            return "android"
        #else
            return "unknown"
        #endif
    }

    /// The SDK name sent as `telemetry.sdk.name`.
    public static let sdkName = "pulsegate-uploader"
    /// The SDK version sent as `telemetry.sdk.version`.
    public static let sdkVersion = "0.1.0"

    /// The full attribute set, sorted by key (the order they are encoded in).
    func resourceAttributes(appId: String) -> [(String, AttributeValue)] {
        var all = attributes
        all["device.id"] = .string(deviceId)
        all["app.installation.id"] = .string(installationId)
        all["service.name"] = .string(serviceName ?? appId)
        if let appVersion { all["service.version"] = .string(appVersion) }
        if let buildNumber { all["apsio.app.build_number"] = .int(buildNumber) }
        if let packageName { all["apsio.app.package_name"] = .string(packageName) }
        all["os.type"] = .string(osType)
        if let osVersion { all["os.version"] = .string(osVersion) }
        if let hostArch { all["host.arch"] = .string(hostArch) }
        if let userId { all["user.id"] = .string(userId) }
        all["telemetry.sdk.name"] = .string(ResourceIdentity.sdkName)
        all["telemetry.sdk.version"] = .string(ResourceIdentity.sdkVersion)
        all["telemetry.sdk.language"] = .string("swift")
        return all.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
