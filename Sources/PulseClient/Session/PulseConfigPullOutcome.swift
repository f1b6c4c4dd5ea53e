package import PulseProtocol

/// The outcome of a CLIENT_CONFIG_PULL that got a response.
package enum PulseConfigPullOutcome: Sendable, Hashable {
    /// Code 0 with a complete policy snapshot (also when its revision equals the caller's).
    case snapshot(ConfigSnapshot)
    /// A non-zero code. 409 means the caller claimed a revision newer than the server's: reset to
    /// revision 0 and pull once more; 403 means a required capability is missing; 501 means the
    /// server does not implement CONFIG_PULL.
    case rejected(PulseResponse)
}
