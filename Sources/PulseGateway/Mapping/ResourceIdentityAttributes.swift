import PulseJSON

/// The resource attributes the identity rules read (``ResolvedIdentity``), collected from one OTLP
/// resource: the seam between a resource's encoding and the rules, so any walk of the request
/// (OTLP/JSON today) fills it and the rules stay the same.
struct ResourceIdentityAttributes: Sendable, Equatable {
    /// The string-valued keys the rules read (docs/mapping.md, "Identity"); each has a slot.
    enum Key: Int, CaseIterable, Sendable {
        case deviceID, hostID, appInstallationID, serviceInstanceID, userID, enduserID, serviceVersion, appBuildID
        case telemetrySDKName, telemetrySDKVersion, telemetrySDKLanguage, osName, osType, packageName
        case deviceModelIdentifier, deviceModelName, sessionID, osVersion, hostArch
        /// The keys a derived id is computed from (``ResolvedIdentity/derivationKeys``).
        case serviceNamespace, serviceName, deploymentEnvironmentName, hostName, k8sNamespaceName, k8sPodName
        case containerID

        /// The attribute key.
        var name: String {
            switch self {
            case .deviceID: "device.id"
            case .hostID: "host.id"
            case .appInstallationID: "app.installation.id"
            case .serviceInstanceID: "service.instance.id"
            case .userID: "user.id"
            case .enduserID: "enduser.id"
            case .serviceVersion: "service.version"
            case .appBuildID: "app.build_id"
            case .telemetrySDKName: "telemetry.sdk.name"
            case .telemetrySDKVersion: "telemetry.sdk.version"
            case .telemetrySDKLanguage: "telemetry.sdk.language"
            case .osName: "os.name"
            case .osType: "os.type"
            case .packageName: "apsio.app.package_name"
            case .deviceModelIdentifier: "device.model.identifier"
            case .deviceModelName: "device.model.name"
            case .sessionID: "session.id"
            case .osVersion: "os.version"
            case .hostArch: "host.arch"
            case .serviceNamespace: "service.namespace"
            case .serviceName: "service.name"
            case .deploymentEnvironmentName: "deployment.environment.name"
            case .hostName: "host.name"
            case .k8sNamespaceName: "k8s.namespace.name"
            case .k8sPodName: "k8s.pod.name"
            case .containerID: "container.id"
            }
        }

        /// The key named `name`, or `nil`.
        init?(name: String) {
            guard let key = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = key
        }
    }

    /// By ``Key`` raw value, the non-empty `stringValue` of its first occurrence (`nil` when absent
    /// or not a non-empty string).
    private var values = [String?](repeating: nil, count: Self.slotCount)
    /// `apsio.app.build_number` as an integer (an `intValue`, or a `stringValue` of digits).
    var buildNumber: Int64?

    private static let slotCount = Key.allCases.count

    /// The attributes `strings` (by attribute key, each a ``Key``'s name) and `buildNumber`.
    init(strings: [String: String] = [:], buildNumber: Int64? = nil) {
        for (name, value) in strings {
            guard let key = Key(name: name) else { preconditionFailure("the identity rules do not read \(name)") }
            values[key.rawValue] = value
        }
        self.buildNumber = buildNumber
    }

    /// The ``Key``s' names and `apsio.app.build_number` after them (``KeyTable``): a key's index is
    /// its slot.
    private static let keyTable: KeyTable = {
        precondition(slotCount < 64, "first occurrences are kept as one bit per key")
        return KeyTable(Key.allCases.map(\.name) + ["apsio.app.build_number"])
    }()

    /// Collects the attributes of an OTLP/JSON `resource` object (`{"attributes":[…]}`).
    init(json resource: JSONNode?) {
        guard let resource else { return }
        self = resource.withCursor { Self(resource: $0) }
    }

    /// ``init(json:)`` of a resource read through a cursor (the walk's).
    init(resource: JSONCursor?) {
        guard let attributes = resource?["attributes"] else { return }
        var seen: UInt64 = 0
        for attribute in attributes.elements {
            guard let key = attribute["key"], let index = Self.keyTable.index(key) else { continue }
            let bit: UInt64 = 1 << UInt64(index)
            guard seen & bit == 0 else { continue }
            seen |= bit
            let value = attribute["value"]
            if index == Self.slotCount {
                buildNumber = AnyValue.int(value)
            } else if let text = AnyValue.string(value), !text.isEmpty {
                values[index] = text
            }
        }
    }

    /// The non-empty string value of `key`.
    subscript(_ key: Key) -> String? { values[key.rawValue] }
}
