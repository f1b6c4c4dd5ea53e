import PulseHTTP
import PulseHashing
import PulseKit
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

    /// What the gateway derived because no rule supplied it (`appIdentity.missingIdentity`
    /// `derive`); `nil` when the resource, the headers and the app's defaults gave every value.
    var derivation: Derivation?

    /// The derived part of an identity.
    struct Derivation: Sendable, Equatable {
        /// The Pulse fields that were derived, in identity order: `installationId` and `deviceId`
        /// (together), `sdkVersion`, `platform`.
        var fields: [String]
        /// The resource attributes the derived ids were computed from, in ``derivationKeys`` order
        /// (empty when the ids were not derived, or the resource carries none of them).
        var sources: [String]
    }

    /// Resolves the identity of resource number `index` from its attributes, then the header
    /// fallbacks, then the app's `appIdentity` defaults (the rules of docs/mapping.md, "Identity").
    /// Values no rule supplies are derived (``derivation``) unless the app's `missingIdentity` is
    /// `refuse`.
    ///
    /// - Throws: ``IntakeRejection`` (400) naming the first required value that is missing, when
    ///   the app refuses derived identities.
    init(
        attributes: ResourceIdentityAttributes, index: Int, appID: String, fallbacks: IdentityFallbacks
    ) throws(IntakeRejection) {
        let app = fallbacks.app
        let derives = app.derivesMissingIdentity
        var derived: [String] = []
        var sources: [String] = []
        func missing(_ field: String, _ looked: String) -> IntakeRejection {
            IntakeRejection(.badRequest, "resource \(index): missing \(field) (\(looked))")
        }
        projectID = appID
        if let ids = Self.clientIDs(attributes, fallbacks: fallbacks) {
            installationID = ids.installation
            deviceID = ids.device
        } else if derives {
            let (id, used) = Self.derivedID(attributes, appID: appID)
            deviceID = id
            installationID = id
            derived += ["installationId", "deviceId"]
            sources = used
        } else {
            throw missing(
                "deviceId and installationId",
                "resource attribute device.id, host.id, app.installation.id or service.instance.id, "
                    + "or header Apsio-Device-Id or Apsio-Installation-Id")
        }
        userID = attributes[.userID] ?? attributes[.enduserID]
        appVersion = attributes[.serviceVersion] ?? fallbacks.appVersion ?? app.appVersion
        if let number = attributes.buildNumber {
            buildNumber = number
        } else if let build = attributes[.appBuildID], let number = Int64(build) {
            buildNumber = number
        } else {
            buildNumber = fallbacks.buildNumber ?? app.buildNumber ?? 0
        }
        let sdkName = attributes[.telemetrySDKName]
        let sdkRelease = attributes[.telemetrySDKVersion]
        if let sdkName, let sdkRelease {
            sdkVersion = sdkName + "/" + sdkRelease
        } else if let single = sdkName ?? sdkRelease ?? fallbacks.sdkVersion ?? app.sdkVersion {
            sdkVersion = single
        } else if derives {
            sdkVersion = Self.unknown
            derived.append("sdkVersion")
        } else {
            throw missing(
                "sdkVersion",
                "resource attributes telemetry.sdk.name and telemetry.sdk.version, header Apsio-Sdk-Version, "
                    + "or appIdentity sdkVersion")
        }
        // The operating system the resource names, then what the sender or the config states, and
        // only then the SDK's language (a guess: a Python SDK runs on any OS).
        if let platform = (attributes[.osName] ?? attributes[.osType])?.lowercased() ?? fallbacks.platform
            ?? app.platform ?? attributes[.telemetrySDKLanguage]?.lowercased()
        {
            self.platform = platform
        } else if derives {
            platform = Self.unknown
            derived.append("platform")
        } else {
            throw missing(
                "platform",
                "resource attribute os.name, os.type or telemetry.sdk.language, header Apsio-Platform, "
                    + "or appIdentity platform")
        }
        packageName = attributes[.packageName] ?? fallbacks.packageName ?? app.packageName
        deviceType =
            attributes[.deviceModelIdentifier] ?? attributes[.deviceModelName] ?? fallbacks.deviceType
            ?? app.deviceType ?? Self.unknown
        sessionID = attributes[.sessionID]
        buildID = attributes[.appBuildID]
        osVersion = attributes[.osVersion]
        architecture = attributes[.hostArch]
        derivation = derived.isEmpty ? nil : Derivation(fields: derived, sources: sources)
    }

    /// The installation and device id a resource or its request headers give (no derivation):
    /// installation ← `app.installation.id`, `service.instance.id`, `Apsio-Installation-Id`;
    /// device ← `device.id`, `host.id`, `Apsio-Device-Id`; each stands in for the other. `nil`
    /// when there is neither. Diagnostics (``DiagnosticsObservation``) identify senders by these.
    static func clientIDs(_ attributes: ResourceIdentityAttributes, fallbacks: IdentityFallbacks) -> (
        installation: String, device: String
    )? {
        let device = attributes[.deviceID] ?? attributes[.hostID] ?? fallbacks.deviceID
        let installation =
            attributes[.appInstallationID] ?? attributes[.serviceInstanceID] ?? fallbacks.installationID
        guard let either = device ?? installation else { return nil }
        return (installation ?? either, device ?? either)
    }

    /// The value of a derived `sdkVersion` or `platform`, and the default `deviceType`.
    static let unknown = "unknown"

    /// The prefix of derived installation and device ids, so the upstream can tell them apart from
    /// ids a device made (32 hex characters).
    static let derivedIDPrefix = "derived-"

    /// The resource attributes a derived id is computed from, when present: what names the
    /// service and where it runs, nothing that changes between requests of one process.
    static let derivationKeys: [ResourceIdentityAttributes.Key] = [
        .serviceNamespace, .serviceName, .deploymentEnvironmentName, .hostName, .k8sNamespaceName, .k8sPodName,
        .containerID,
    ]

    /// The derived installation and device id of a resource that names neither:
    /// ``derivedIDPrefix`` + the first 32 hex characters of SHA-256 of the fields
    /// (`pulsegate.derived-identity.1`, App ID, then key and value of each ``derivationKeys``
    /// attribute present, in that order); and the keys that were present.
    static func derivedID(_ attributes: ResourceIdentityAttributes, appID: String) -> (String, [String]) {
        var hasher = SHA256()
        hasher.updateField("pulsegate.derived-identity.1")
        hasher.updateField(appID)
        var used: [String] = []
        for key in derivationKeys {
            guard let value = attributes[key] else { continue }
            hasher.updateField(key.name)
            hasher.updateField(value)
            used.append(key.name)
        }
        // The hex of the digest's first 16 bytes: cutting the `String` would walk its characters.
        return (derivedIDPrefix + Hex.encode(hasher.finalize().prefix(16)), used)
    }

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
        Hex.encode(SHA256.hash(connectPayload).prefix(16))
    }
}
