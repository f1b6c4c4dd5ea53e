import PulseJSON

/// The resource attributes the identity rules read (``ResolvedIdentity``), collected from one OTLP
/// resource: the seam between a resource's encoding and the rules, so any walk of the request
/// (OTLP/JSON today) fills it and the rules stay the same.
struct ResourceIdentityAttributes: Sendable, Equatable {
    /// Non-empty `stringValue`s of the keys in ``keys``, the first occurrence of each key.
    var strings: [String: String] = [:]
    /// `apsio.app.build_number` as an integer (an `intValue`, or a `stringValue` of digits).
    var buildNumber: Int64?

    /// The keys the rules read (docs/mapping.md, "Identity").
    static let keys = Set(ResolvedIdentity.derivationKeys).union([
        "device.id", "host.id", "app.installation.id", "service.instance.id", "user.id", "enduser.id",
        "service.version", "apsio.app.build_number", "app.build_id", "telemetry.sdk.name", "telemetry.sdk.version",
        "telemetry.sdk.language", "os.name", "os.type", "apsio.app.package_name", "device.model.identifier",
        "device.model.name", "session.id", "os.version", "host.arch",
    ])

    init(strings: [String: String] = [:], buildNumber: Int64? = nil) {
        self.strings = strings
        self.buildNumber = buildNumber
    }

    /// ``keys`` by their bytes (``KeyTable``), and the index of `apsio.app.build_number`.
    private static let keyTable: (names: [String], table: KeyTable, buildNumber: Int) = {
        let names = Array(keys)
        precondition(names.count <= 64, "first occurrences are kept as one bit per key")
        return (names, KeyTable(names), names.firstIndex(of: "apsio.app.build_number")!)
    }()

    /// Collects the attributes of an OTLP/JSON `resource` object (`{"attributes":[…]}`).
    init(json resource: JSONNode?) {
        guard let resource else { return }
        self = resource.withCursor { Self(resource: $0) }
    }

    /// ``init(json:)`` of a resource read through a cursor (the walk's).
    init(resource: JSONCursor?) {
        guard let attributes = resource?["attributes"] else { return }
        let names = Self.keyTable.names
        var seen: UInt64 = 0
        for attribute in attributes.elements {
            guard let key = attribute["key"], let index = Self.keyTable.table.index(key) else { continue }
            let bit: UInt64 = 1 << UInt64(index)
            guard seen & bit == 0 else { continue }
            seen |= bit
            let value = attribute["value"]
            if index == Self.keyTable.buildNumber {
                buildNumber = AnyValue.int(value)
            } else if let text = AnyValue.string(value), !text.isEmpty {
                if strings.isEmpty { strings.reserveCapacity(min(attributes.count, names.count)) }
                strings[names[index]] = text
            }
        }
    }

    /// The non-empty string value of `key`.
    subscript(_ key: String) -> String? { strings[key] }
}
