/// Which end of a Pulse connection a peer is.
///
/// The client (SDK, PulseGate's forwarder, the uploader) opens the connection and sends
/// `CLIENT_CONNECT`; the server (the ingest server) accepts it.
public enum PulsePeerRole: String, Sendable, Hashable {
    /// The connecting peer that sends `CLIENT_*` requests.
    case client
    /// The accepting peer.
    case server

    /// The other end of the connection.
    public var remote: PulsePeerRole {
        self == .client ? .server : .client
    }
}

/// Where a connection is in the Pulse session lifecycle, as seen by one peer.
public enum PulseSessionPhase: String, Sendable, Hashable {
    /// Server only: nothing has been received yet, so the first-frame rule applies.
    case awaitingFirstFrame
    /// No `CLIENT_CONNECT` has succeeded yet (a first attempt may have been rejected).
    case awaitingConnect
    /// `CLIENT_CONNECT` succeeded; the identity is bound and immutable.
    case connected
}
