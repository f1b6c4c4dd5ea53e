/// The device's current network and power state, as far as it affects uploading.
public struct DeliveryConditions: Sendable, Equatable, CustomStringConvertible {
    /// The network state.
    public enum Network: String, Sendable, CaseIterable {
        /// Unmetered (Wi-Fi, Ethernet) or no constraint known.
        case unmetered
        /// Metered (cellular, a hotspot) — the user pays per byte.
        case metered
        /// Constrained: Low Data Mode, Data Saver.
        case constrained
        /// Not known (no NetworkManager, for example); treated like unmetered.
        case unknown
    }

    /// The power state.
    public enum Power: String, Sendable, CaseIterable {
        /// On mains power, or the battery is not low.
        case normal
        /// Low Power Mode, or discharging at 20 % or less.
        case low
        /// Not known (no battery, for example); treated like normal.
        case unknown
    }

    /// The network state.
    public var network: Network
    /// The power state.
    public var power: Power

    /// Creates conditions.
    public init(network: Network = .unknown, power: Power = .unknown) {
        self.network = network
        self.power = power
    }

    /// Whether non-urgent uploads should wait: a metered or constrained network, or low power.
    public var defersNonUrgentUploads: Bool {
        network == .metered || network == .constrained || power == .low
    }

    public var description: String {
        "network=\(network.rawValue) power=\(power.rawValue)"
    }
}

/// Reports the device's current conditions; consulted before every upload round.
public protocol ConditionsProvider: Sendable {
    /// The conditions now. Implementations that probe the system must do so off Swift's cooperative pool and
    /// should cache results, since this is asked before every upload round.
    func currentConditions() async -> DeliveryConditions
}

/// A provider that always reports the same conditions (tests, or platforms without probes).
public struct FixedConditions: ConditionsProvider {
    /// The conditions reported.
    public var conditions: DeliveryConditions

    /// Creates a provider reporting `conditions`.
    public init(_ conditions: DeliveryConditions = DeliveryConditions()) {
        self.conditions = conditions
    }

    public func currentConditions() async -> DeliveryConditions {
        conditions
    }
}
