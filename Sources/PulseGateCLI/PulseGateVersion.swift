/// The version of PulseGate, printed by `pulsegate --version` and sent as the SDK version upstream.
public enum PulseGateVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
