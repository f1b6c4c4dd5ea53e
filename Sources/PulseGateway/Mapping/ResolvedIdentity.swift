import PulseHashing
import PulseJSON
import PulseProtocol

/// The Pulse identity of one OTLP resource (see the identity table in `docs/mapping.md`).
struct ResolvedIdentity: Sendable, Equatable {
    var projectID: String
    var installationID: String
    var deviceID: String
    var userID: String?
    var appVersion: String?
    var buildNumber: Int64
    var sdkVersion: String
    var platform: String
    var packageName: String?
    /// CONNECT's `deviceType` (not part of the batch identity).
    var deviceType: String
    /// Resource values the events need: `session.id`, `app.build_id`, `os.version`, `host.arch`.
    var sessionID: String?
    var buildID: String?
    var osVersion: String?
    var architecture: String?

    /// Resolves the identity of resource number `index` from its attributes and the header
    /// fallbacks.
    ///
    /// - Throws: ``IntakeRejection`` (400) naming the first required value that is missing.
    init(
        resource: JSONNode?, index: Int, appID: String, fallbacks: IdentityFallbacks
    ) throws(IntakeRejection) {
        var found: [String: JSONNode] = [:]
        if let attributes = resource?["attributes"] {
            for attribute in attributes.elements {
                guard let key = attribute["key"]?.string, Self.resourceKeys.contains(key), found[key] == nil,
                    let value = attribute["value"]
                else { continue }
                found[key] = value
            }
        }
        func text(_ key: String) -> String? {
            guard let value = AnyValue.string(found[key]), !value.isEmpty else { return nil }
            return value
        }
        func missing(_ field: String, _ looked: String) -> IntakeRejection {
            IntakeRejection(.badRequest, "resource \(index): missing \(field) (\(looked))")
        }
        projectID = appID
        let device = text("device.id") ?? fallbacks.deviceID
        let installation = text("app.installation.id") ?? fallbacks.installationID
        guard let deviceOrInstallation = device ?? installation else {
            throw missing(
                "deviceId and installationId",
                "resource attribute device.id or app.installation.id, or header Apsio-Device-Id or Apsio-Installation-Id"
            )
        }
        deviceID = device ?? deviceOrInstallation
        installationID = installation ?? deviceOrInstallation
        userID = text("user.id") ?? text("enduser.id")
        appVersion = text("service.version") ?? fallbacks.appVersion
        if let number = AnyValue.int(found["apsio.app.build_number"]) {
            buildNumber = number
        } else if let build = text("app.build_id"), let number = Int64(build) {
            buildNumber = number
        } else {
            buildNumber = fallbacks.buildNumber ?? 0
        }
        let sdkName = text("telemetry.sdk.name")
        let sdkRelease = text("telemetry.sdk.version")
        if let sdkName, let sdkRelease {
            sdkVersion = sdkName + "/" + sdkRelease
        } else if let single = sdkName ?? sdkRelease {
            sdkVersion = single
        } else if let header = fallbacks.sdkVersion {
            sdkVersion = header
        } else {
            throw missing(
                "sdkVersion",
                "resource attributes telemetry.sdk.name and telemetry.sdk.version, or header Apsio-Sdk-Version")
        }
        guard let platform = (text("os.name") ?? text("os.type"))?.lowercased() ?? fallbacks.platform else {
            throw missing("platform", "resource attribute os.name or os.type, or header Apsio-Platform")
        }
        self.platform = platform
        packageName = text("apsio.app.package_name") ?? fallbacks.packageName
        deviceType = text("device.model.identifier") ?? text("device.model.name") ?? fallbacks.deviceType ?? "unknown"
        sessionID = text("session.id")
        buildID = text("app.build_id")
        osVersion = text("os.version")
        architecture = text("host.arch")
    }

    static let resourceKeys: Set<String> = [
        "device.id", "app.installation.id", "user.id", "enduser.id", "service.version", "apsio.app.build_number",
        "app.build_id", "telemetry.sdk.name", "telemetry.sdk.version", "os.name", "os.type", "apsio.app.package_name",
        "device.model.identifier", "device.model.name", "session.id", "os.version", "host.arch",
    ]

    /// The batch `identity` object (PulseProtocol's ``BatchIdentity`` writes it, keys in wire order).
    func batchIdentityJSON() -> [UInt8] {
        BatchIdentity(
            projectId: projectID, installationId: installationID, deviceId: deviceID, userId: userID,
            appVersion: appVersion, buildNumber: buildNumber, sdkVersion: sdkVersion, platform: platform,
            packageName: packageName
        ).encodeJSON()
    }

    /// The `CLIENT_CONNECT` request payload that binds an upstream connection to this identity
    /// (PulseProtocol's ``ConnectRequest`` writes it).
    func connectPayload() -> [UInt8] {
        ConnectRequest(
            protocolVersion: ConnectRequest.currentProtocolVersion, appId: projectID, deviceId: deviceID,
            installationId: installationID, platform: platform, deviceType: deviceType, packageName: packageName,
            appVersion: appVersion, buildNumber: buildNumber, sdkVersion: sdkVersion, capabilities: Self.capabilities
        ).encodeJSON()
    }

    /// The capabilities the gateway announces upstream.
    static let capabilities = ["batch_upload", "crash_upload", "compression:zstd"]

    /// The outbox key of this identity: the first 32 hex characters of SHA-256 of the CONNECT
    /// payload (which contains the App ID), so each distinct identity gets its own connection.
    static func key(connectPayload: [UInt8]) -> String {
        String(SHA256.hexDigest(connectPayload).prefix(32))
    }
}
