/// Where one server-side connection is in the Pulse session lifecycle.
enum SessionPhase: Sendable, Equatable {
    /// Nothing received yet: only a CLIENT_CONNECT request may come first.
    case awaitingFirstFrame
    /// A CLIENT_CONNECT is being handled exclusively (the runtime holds every later frame).
    case connecting
    /// A CLIENT_CONNECT was rejected: requests get 401 until one succeeds.
    case awaitingConnect
    /// CLIENT_CONNECT succeeded with this identity.
    case connected(SessionIdentity)
    /// The connection closed.
    case closed
}
