/// The version of PulseGate, printed by `pulsegate --version` and sent as the SDK version upstream.
package enum PulseGateVersion {
    /// Semantic version of this build.
    package static let current = "0.1.0"
}
