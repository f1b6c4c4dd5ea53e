/// The decision of an update check.
///
/// Decoding is lenient by contract: any value other than `optional` or `forced` (including a missing
/// one) means ``none``.
public enum UpdateAction: String, Sendable, Hashable, CaseIterable {
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
}
