/// The decision of an update check.
///
/// Decoding is lenient by contract: any value other than `optional` or `forced` (including a missing
/// one) means ``none``.
public enum UpdateAction: String, Sendable, Hashable, CaseIterable, Codable {
    /// No update is offered.
    case none
    /// An update is available; the user may skip it.
    case optional
    /// The installed build must be updated.
    case forced

    /// Maps a wire string, treating anything unknown as ``none``.
    public init(wireValue: String) {
        self = UpdateAction(rawValue: wireValue) ?? .none
    }

    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
