import MsgTrans
import PulseProtocol

/// A Pulse response envelope as the forwarder needs it.
struct UpstreamReply: Sendable, Equatable {
    /// The envelope's `code` (0 when missing).
    var code: Int
    /// Whether `data` is exactly `true`.
    var dataIsTrue: Bool
    /// The envelope's `msg`.
    var message: String?

    /// `code == 0 && data == true`: the only answer that lets the forwarder delete a row.
    var confirmsAcceptance: Bool { code == 0 && dataIsTrue }
}

/// Why an upstream exchange did not produce a response.
struct UpstreamFailure: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// Connect failure, timeout, disconnect, protocol violation: no response; retry later.
        case transport
        /// CLIENT_CONNECT was answered with a non-zero code.
        case connectRejected(code: Int)
        /// The connect-attempt window refused a new connection until the given monotonic time;
        /// nothing was sent.
        case throttled(until: Int64)
    }

    var kind: Kind
    var message: String

    var description: String { message }
}

/// A connection bound to one device identity by a successful CLIENT_CONNECT.
protocol UpstreamSession: AnyObject, Sendable {
    /// Sends a request and returns the response envelope. A 401 has already been answered by
    /// re-registering and sending once more (the Pulse client session does that); a 401 seen here
    /// is the second one. `wirePayload` is sent as it is, labelled `compression` (an outbox row's
    /// stored wire form), on both attempts. With `retryingUnauthorized` `false` the first 401 is
    /// returned as it is, instead of being answered by re-registering and sending once more.
    func request(
        _ operation: PulseBizType, wirePayload: [UInt8], compression: Compression, retryingUnauthorized: Bool
    ) async throws(UpstreamFailure) -> UpstreamReply
    /// Hands a request to the session's registered connection without waiting: `completion` runs
    /// once, on the connection's event loop thread (keep it short), with the reply or the transport
    /// failure. Requests submitted one after another, also from a completion, reach the wire in that
    /// order; nothing is retried (a 401 is returned as it is). `false`, without calling
    /// `completion`, when no connection is registered right now (see ``connect()``).
    func submit(
        _ operation: PulseBizType, wirePayload: [UInt8], compression: Compression,
        completion: @escaping @Sendable (Result<UpstreamReply, UpstreamFailure>) -> Void
    ) -> Bool
    /// Connects (TCP plus CLIENT_CONNECT) unless connected; what ``submit(_:wirePayload:compression:completion:)`` needs.
    func connect() async throws(UpstreamFailure)
    /// Pulls the app's configuration snapshot (CLIENT_CONFIG_PULL) into the gateway's policy cache:
    /// what a 409 asks for before the one retry.
    func pullConfig() async
    /// Whether the session may still be used (it reconnects on demand until closed).
    var isOpen: Bool { get }
    /// Set after the upstream answered 501 to a crash upload on this connection.
    var lacksCrashUpload: Bool { get set }
    /// Closes the connection.
    func close() async
}

/// Opens sessions: the seam between the forwarder and the transport (``PulseClientUpstreamConnector``
/// over `PulseClient`).
protocol UpstreamConnector: Sendable {
    /// Connects and sends `connectPayload` as CLIENT_CONNECT; returns once the upstream accepted it.
    /// The session reports configuration revisions and `config.invalidate` to `policy`.
    func open(connectPayload: [UInt8], policy: PolicyCache?) async throws(UpstreamFailure) -> any UpstreamSession
}
